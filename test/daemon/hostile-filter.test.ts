/**
 * A playbook whose `on.callback.if` is a regular expression that backtracks exponentially (issue 15, point 2):
 * `matches("^([a-z]+-?)+$")` against a 31-character trigger name that does not match froze the daemon for 51 s,
 * `/healthz` included, and no callback was acknowledged meanwhile. On RE2 the daemon keeps answering: `/healthz`
 * is polled while such callbacks are posted and matched, and answers within 100 ms throughout.
 *
 * The daemon is the built CLI (`npm run build` first) in a child process, on loopback; the emulator runs here.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { emulatorEnv } from '../helpers/cli.js';
import { DaemonProcess } from '../helpers/daemon.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'hostile-filter');
const USER = 'hostile-filter-listener';
const PASSWORD = 'hostile-filter-password-5Tq';
const HOSTILE = `${'a'.repeat(30)}!`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function usage(requestId: string, triggerName: string): string {
  return JSON.stringify({
    username: USER,
    password: PASSWORD,
    requestId,
    deviceResponse: {
      alertServiceResponse: {
        triggerName,
        accountName: '0000123456-00001',
        payAsYouGo: { deviceIds: [{ id: '490154203237518', kind: 'imei' }] },
      },
    },
  });
}

/** The inbox rows still to process, and the runs of `redos-filter`, read from the state file. */
function progress(file: string): { pending: number; runs: string[] } {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const pending = (
      db.prepare('SELECT count(*) AS n FROM inbox WHERE processed_at IS NULL').get() as { n: number }
    ).n;
    const runs = (
      db.prepare(`SELECT trigger_json FROM runs WHERE playbook = 'redos-filter'`).all() as {
        trigger_json: string;
      }[]
    ).map((r) => (JSON.parse(r.trigger_json) as { requestId: string }).requestId);
    return { pending, runs };
  } finally {
    db.close();
  }
}

describe('fleetbook serve: a hostile regular expression in a callback filter', function () {
  this.timeout(60_000);
  let emu: Emulator;
  let tmp: string;
  let daemon: DaemonProcess | undefined;

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'fleetbook-hostile-filter-'));
    emu = await startEmulator({ port: 0, timeScale: 0 });
  });

  after(async () => {
    await daemon?.kill();
    await emu?.close();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('keeps /healthz answering within 100 ms while it matches 40 such callbacks, and starts only the matching runs', async () => {
    const state = join(tmp, 'state.db');
    daemon = await DaemonProcess.start('hostile-filter daemon', {
      playbooks: FIXTURES,
      state,
      env: {
        ...emulatorEnv(emu),
        FLEETBOOK_CALLBACK_USERNAME: USER,
        FLEETBOOK_CALLBACK_PASSWORD: PASSWORD,
        FLEETBOOK_LOG_LEVEL: 'warn',
      },
    });
    const url = daemon.url;

    // /healthz, polled from now until every callback is processed. A frozen daemon answers nothing: after 5 s
    // the poll gives up, and counts as an answer that never came.
    const latencies: number[] = [];
    let polling = true;
    const poller = (async () => {
      while (polling) {
        const began = performance.now();
        try {
          const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(5_000) });
          await res.text();
          latencies.push(res.status === 200 ? performance.now() - began : Infinity);
        } catch {
          latencies.push(Infinity);
        }
        await sleep(10);
      }
    })();

    const hostile = Array.from({ length: 40 }, (_, i) => `hostile-${process.pid}-${i}`);
    const matching = Array.from({ length: 4 }, (_, i) => `matching-${process.pid}-${i}`);
    const post = async (id: string, name: string) => {
      const res = await fetch(`${url}/callbacks/DeviceUsage`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: usage(id, name),
        signal: AbortSignal.timeout(5_000),
      }).catch(() => {
        throw new Error(`callback ${id} not acknowledged within 5 s`);
      });
      return { status: res.status, body: (await res.json()) as { status?: string } };
    };
    let seen: { pending: number; runs: string[] };
    try {
      const answers = [];
      for (let i = 0; i < hostile.length; i++) {
        answers.push(await post(hostile[i] as string, HOSTILE));
        if (i % 10 === 0) answers.push(await post(matching[i / 10] as string, 'overuse-demo'));
      }
      expect(answers.map((a) => a.status)).to.deep.equal(answers.map(() => 200));
      expect(answers.every((a) => a.body.status === 'stored')).to.equal(true);

      const deadline = Date.now() + 20_000;
      seen = progress(state);
      while (seen.pending > 0 || seen.runs.length < matching.length) {
        if (Date.now() > deadline) throw new Error(`callbacks not processed: ${JSON.stringify(seen)}`);
        await sleep(50);
        seen = progress(state);
      }
    } finally {
      polling = false;
      await poller;
    }

    expect(seen.runs.sort()).to.deep.equal([...matching].sort());
    expect(latencies.length).to.be.above(5);
    expect(
      Math.max(...latencies),
      `healthz latencies ${latencies.map((l) => l.toFixed(0)).join(' ')}`,
    ).to.be.below(100);
  });
});
