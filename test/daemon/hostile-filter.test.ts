/**
 * A playbook whose `on.callback.if` is a regular expression that backtracks exponentially (issue 15, point 2):
 * `matches("^([a-z]+-?)+$")` against a 31-character trigger name that does not match froze the daemon for 51 s,
 * `/healthz` included, and no callback was acknowledged meanwhile. On RE2 the daemon keeps answering: `/healthz`
 * is polled while such callbacks are posted and matched, and answers every poll.
 *
 * The daemon is the built CLI (`npm run build` first) in a child process, on loopback; the emulator runs here.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { DaemonWorld, pendingEvents, runsIn } from '../helpers/daemon.js';

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

/** The inbox rows still to process, and the requests that started runs of `redos-filter`. */
function progress(file: string): { pending: number; runs: string[] } {
  return { pending: pendingEvents(file), runs: runsIn(file, 'redos-filter').map((r) => r.requestId ?? '') };
}

describe('fleetbook serve: a hostile regular expression in a callback filter', function () {
  this.timeout(60_000);
  let world: DaemonWorld;

  before(async () => {
    world = await DaemonWorld.create('hostile-filter', { user: USER, password: PASSWORD });
  });

  after(async () => {
    await world?.close();
  });

  it('keeps /healthz answering while it matches 40 such callbacks, and starts only the matching runs', async () => {
    const state = world.state();
    const daemon = await world.start('hostile-filter daemon', FIXTURES, {
      env: { FLEETBOOK_LOG_LEVEL: 'warn' },
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
    // Every poll was answered: a daemon frozen in one match (51 s each on a backtracking engine) leaves a poll
    // unanswered at its 5 s. No tighter bound: how fast a loaded machine answers is the bench's to measure.
    expect(latencies.length).to.be.above(5);
    expect(
      latencies.filter((l) => l === Infinity),
      `healthz latencies ${latencies.map((l) => l.toFixed(0)).join(' ')}`,
    ).to.deep.equal([]);
  });
});
