/**
 * The daemon killed with SIGKILL and started again on the same state file (product.md section 5).
 *
 * Ten kills while callbacks stream in and a 10,000-device suspend runs: the first aimed mid-send (once the
 * emulator has read a suspend request, which it holds for its latency before it acts), the others at random
 * points once no session login is in doubt. A login the kill cuts off counts as one that may have failed, and
 * after four of them a daemon sends no more (five failed logins lock the user: api/login-count.ts); waiting for
 * the count to clear before each kill keeps it below that, whatever the machine's speed. Afterwards:
 * - every device the suspend was for has exactly one `devices.suspend` mutation in the emulator's counters,
 *   and no other device has any: a call known to have succeeded was not sent again, and a call whose answer
 *   the kill lost (the emulator acts after its latency, whoever is still listening) was reconciled first;
 * - the suspend run resumed to `succeeded`, its summary and ledger counting every device once;
 * - every callback the listener acknowledged started exactly one run, and so did every unacknowledged one
 *   once sent again (as the service does); an acknowledged callback sent again is a duplicate, across crashes.
 *
 * Then a kill while more than 1,000 runs wait in the pool and callbacks wait in the inbox: after the restart
 * the inbox drains with no new callback to wake the matcher.
 *
 * The daemon is the built CLI (`npm run build` first) in a child process; the emulator runs in this process.
 * The kill points come from a seeded generator: CRASH_SEED=<n> replays a sequence.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import type { Emulator } from '../../src/emulator/index.js';
import { emulatorEnv } from '../helpers/cli.js';
import {
  emulatorWithActive,
  expectEachSuspendedOnce,
  expectRunPerCallback,
  rng,
  Sender,
  sleep,
} from '../helpers/chaos.js';
import { DaemonProcess, pendingEvents, readState, runsIn } from '../helpers/daemon.js';
import { calls, onRequestRead } from '../runner/helpers.js';
import { tempDir } from '../helpers/temp.js';

const DEVICES = 10_000;
const ROUNDS = 10;
const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'daemon');
const TOKEN = 'crash-test-daemon-token-0123456789';
const CALLBACK_USER = 'crash-listener';
const CALLBACK_PASSWORD = 'crash-listener-password';
/** Emulator latency per API request: the suspend spans several rounds, and a kill lands mid-call. */
const LATENCY_MS = 150;
/** The kill of the first round is aimed at one of its first suspend requests: the emulator has it, unanswered. */
const AIMED_AT_MOST = 8;

type Daemon = DaemonProcess;

interface Status {
  inboxBacklog: number;
  runs: { running: number; queued: number };
}

/** Every callback sent has exactly one run, ended well; no run for anything never sent; the inbox is empty. */
function expectEachCallbackOnce(file: string, s: Sender, context: string): void {
  expectRunPerCallback(runsIn(file, 'usage-callback'), s, context);
  expect(pendingEvents(file), 'inbox events never processed').to.equal(0);
}

describe('daemon: killed with SIGKILL and started again', function () {
  this.timeout(170_000);
  const seed = Number(process.env.CRASH_SEED ?? Date.now() % 1_000_000);
  const random = rng(seed);
  let emu: Emulator;
  let account: string;
  let active: string[];
  let state: string;
  const daemons: Daemon[] = [];
  /** The daemons' stderr, every start, for the failure messages. */
  const stderr = () => daemons.map((d) => d.stderr).join('');
  let current: Daemon | undefined;

  before(async () => {
    ({ emu, account, active } = await emulatorWithActive(DEVICES, 12_500));
    emu.setFaults({ latencyMs: LATENCY_MS });
    state = tempDir('fleetbook-crash-');
  });

  after(async () => {
    await current?.kill();
    await emu?.close();
  });

  async function start(file: string, env: Record<string, string> = {}): Promise<Daemon> {
    const d = await DaemonProcess.start(`daemon ${daemons.length + 1}`, {
      playbooks: FIXTURES,
      state: file,
      env: {
        ...emulatorEnv(emu),
        FLEETBOOK_CALLBACK_USERNAME: CALLBACK_USER,
        FLEETBOOK_CALLBACK_PASSWORD: CALLBACK_PASSWORD,
        FLEETBOOK_DAEMON_TOKEN: TOKEN,
        FLEETBOOK_RATE: '2000',
        FLEETBOOK_CONCURRENCY: '16',
        FLEETBOOK_LOG_LEVEL: 'warn',
        CRASH_HOLD: '0',
        ...env,
      },
    });
    daemons.push(d);
    current = d;
    return d;
  }

  /** Stops it by `signal`; how it ended: the exit code, or the signal. */
  async function kill(d: Daemon, signal: 'SIGKILL' | 'SIGTERM' = 'SIGKILL'): Promise<string> {
    const e = await d.stop(signal);
    current = undefined;
    return e.signal ?? String(e.code);
  }

  async function get<T>(d: Daemon, path: string): Promise<T> {
    const res = await fetch(`${d.url}${path}`);
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  }

  /** Waits until the inbox is drained, no run is waiting or executing, and `done` (if given) holds. */
  async function settle(d: Daemon, ms: number, context: string, done = async () => true): Promise<void> {
    const deadline = Date.now() + ms;
    for (;;) {
      const status = await get<Status>(d, '/status');
      if (
        status.inboxBacklog === 0 &&
        status.runs.running === 0 &&
        status.runs.queued === 0 &&
        (await done())
      )
        return;
      if (Date.now() > deadline)
        throw new Error(
          `the daemon did not finish within ${ms} ms: ${JSON.stringify(status)} (${context})\n${stderr().slice(-3000)}`,
        );
      await sleep(200);
    }
  }

  /**
   * Waits until the state file counts no session login that may have failed (api/login-count.ts): none sent
   * and unanswered, none whose answer was lost: at once, unless a login is on its way. It resolves in the turn
   * of its last read.
   */
  async function noLoginInDoubt(file: string, context: string): Promise<void> {
    const counted = () =>
      readState(file, (db) =>
        db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'session_logins'").get()
          ? (db.prepare('SELECT count(*) AS n FROM session_logins').get() as { n: number }).n
          : 0,
      );
    const deadline = Date.now() + 60_000;
    while (counted() > 0) {
      if (Date.now() > deadline)
        throw new Error(`logins still in doubt after 60 s (${context})\n${stderr().slice(-3000)}`);
      await sleep(20);
    }
  }

  it('suspends every device exactly once and processes every acknowledged callback exactly once', async () => {
    const began = Date.now();
    const logFrom = stderr().length;
    const file = join(state, 'crash.db');
    const s = new Sender(account, { username: CALLBACK_USER, password: CALLBACK_PASSWORD });
    let runId = '';
    /** The suspend run's status seen just before each kill. */
    const seenBeforeKill: string[] = [];
    const killDelays: number[] = [];
    /** Devices the emulator had suspended once each daemon was dead (a call in flight still acts). */
    const suspendedAfterKill: number[] = [];
    const kills = () =>
      `seed ${seed}, kill delays ${killDelays.join(' ')} ms, the run before each kill ${seenBeforeKill.join(' ')}, devices suspended ${suspendedAfterKill.join(' ')}`;
    for (let round = 0; round < ROUNDS; round++) {
      const d = await start(file);
      // The first kill lands while a suspend is sent and unanswered, whatever the machine's speed: the daemon dies
      // in the turn the emulator reads the request's last byte, LATENCY_MS before the emulator acts and answers.
      let aimed: Promise<void> | undefined;
      let nth = 0;
      if (round === 0) {
        nth = 1 + Math.floor(random() * AIMED_AT_MOST);
        aimed = onRequestRead(emu, '/m2m/v1/devices/actions/suspend', nth, () => d.proc.kill('SIGKILL'));
        runId = await d.startRun('suspend-fleet', TOKEN, { account });
      }
      // Callbacks stream in: new ones mostly, some acknowledged ones again (the service re-sends).
      let stop = false;
      let n = 0;
      const poster = async (p: number) => {
        while (!stop) {
          const recent = s.recent(200);
          const id =
            random() < 0.1 && recent.length
              ? recent[Math.floor(random() * recent.length)]!
              : `crash-${seed}-${round}-${p}-${n++}`;
          await s.post(d.url, id);
          await sleep(2);
        }
      };
      const streaming = Promise.all([0, 1, 2].map(poster));
      if (aimed) {
        const began = Date.now();
        await aimed;
        killDelays.push(Date.now() - began);
        seenBeforeKill.push(`sending (suspend request ${nth})`);
      } else {
        // Anywhere from just after the start (unfinished runs resuming) to well into the suspend.
        const delay = Math.floor(random() * 2200);
        killDelays.push(delay);
        await sleep(delay);
        const run = await get<{ status: string }>(d, `/runs/${runId}`).catch(() => ({ status: '?' }));
        seenBeforeKill.push(run.status);
        // The kill follows the last read of the count in the same turn: it can cut off only a login sent in
        // between, and the next start's login (each start registers its callbacks) clears that one.
        await noLoginInDoubt(file, kills());
      }
      await kill(d);
      suspendedAfterKill.push(Object.keys((await calls(emu)).devices).length);
      stop = true;
      await streaming;
    }
    const context = kills();

    // The last start: the service sends again what was never acknowledged, and everything is left to finish.
    const d = await start(file);
    await s.resendUnacknowledged(() => d.url);
    await settle(d, 90_000, context, async () => {
      const run = await get<{ status: string }>(d, `/runs/${runId}`);
      return run.status !== 'running' && run.status !== 'queued';
    });
    const summary = await get<{
      status: string;
      error?: string;
      devices: { total: number; succeeded: number };
      steps: { id: string; devices: { total: number; succeeded: number; failed: number } }[];
    }>(d, `/runs/${runId}`);
    expect(await kill(d, 'SIGTERM'), 'a clean stop').to.equal('0');

    // The kills did land on the running suspend, more than once, and callbacks were acknowledged throughout.
    expect(
      seenBeforeKill.filter((x) => x === 'running' || x === 'queued' || x.startsWith('sending')).length,
      `kills during the suspend (${context})`,
    ).to.be.at.least(2);
    expect(s.acked.size, 'callbacks acknowledged').to.be.greaterThan(100);
    expect(s.duplicates, 'acknowledged callbacks sent again, answered duplicate').to.be.greaterThan(0);
    // The aimed kill left a suspend sent and unanswered: the resumed run had an outcome to reconcile.
    expect(stderr().slice(logFrom), 'a resumed call of unknown outcome').to.include(
      'resuming a call whose outcome is unknown',
    );

    await expectEachSuspendedOnce(emu, active, context);

    // The resumed run ended well and counts each device once, in its summary and in the ledger.
    expect(summary.status, `${summary.error ?? ''} (${context})`).to.equal('succeeded');
    expect(summary.devices).to.include({ total: DEVICES, succeeded: DEVICES });
    expect(summary.steps.find((x) => x.id === 'suspend')?.devices).to.include({
      total: DEVICES,
      succeeded: DEVICES,
      failed: 0,
    });
    const ledger = readState(file, (db) =>
      db
        .prepare(
          `SELECT outcome, count(*) AS n FROM device_results WHERE run_id = ? AND step = 'suspend' GROUP BY outcome`,
        )
        .all(runId),
    );
    expect(ledger).to.deep.equal([{ outcome: 'succeeded', n: DEVICES }]);

    // Each callback, acknowledged at once or once sent again, started exactly one run.
    expectEachCallbackOnce(file, s, context);
    console.log(
      `      ${ROUNDS} kills, ${s.posted} callbacks posted (${s.acked.size} acknowledged, ${s.duplicates} duplicates), ${
        Date.now() - began
      } ms; ${context}`,
    );
  });

  it('drains the inbox after a kill with more than 1,000 runs waiting, without a new callback', async () => {
    const file = join(state, 'backlog.db');
    const s = new Sender(account, { username: CALLBACK_USER, password: CALLBACK_PASSWORD });
    // The first run holds its concurrency key (CRASH_HOLD): the others wait in the pool, and past 1,000
    // of them the matcher leaves the rest in the inbox.
    let d = await start(file, { CRASH_HOLD: '1' });
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < 1400) expect(await s.post(d.url, `backlog-${seed}-${next++}`)).to.equal(true);
      }),
    );
    let status: Status;
    for (let i = 0; ; i++) {
      status = await get<Status>(d, '/status');
      const { queued, running } = status.runs;
      if (queued > 1000 && status.inboxBacklog > 0 && queued + running + status.inboxBacklog === 1400) break;
      if (i === 100) throw new Error(`the runs did not pile up: ${JSON.stringify(status)}`);
      await sleep(100);
    }
    expect(status.inboxBacklog, 'callbacks left in the inbox').to.be.greaterThan(0);
    await kill(d);

    // Started again: the held run waits out its hold (a wait begun goes on), the queued runs resume after it,
    // and then the inbox must drain by itself.
    d = await start(file);
    await settle(d, 60_000, `backlog, seed ${seed}`);
    expect(await kill(d, 'SIGTERM'), 'a clean stop').to.equal('0');
    expect(s.acked.size).to.equal(1400);
    expectEachCallbackOnce(file, s, `backlog, seed ${seed}`);
  });
});
