/**
 * Three `fleetbook serve` replicas on one PostgreSQL database, one of them killed with SIGKILL ten times and
 * started again (issue 20, product.md section 10), while:
 * - callbacks stream in through a load balancer that sends each to the next replica in turn (and to another when
 *   one refuses the connection): new ones mostly, some acknowledged ones again, some never acknowledged ones
 *   again (the service's re-delivery, after a replica died with one sent to it);
 * - a 10,000-device suspend runs, started on one replica; its holder is killed more often than the others (the
 *   first time while one of its calls is in flight: its `sending` checkpoint stored, its answer not). Each
 *   device's CarrierService callback comes through the same load balancer, to any replica: the one running the
 *   suspend hears of those the others store (`watchInbox`); a batch whose callbacks have not come within the
 *   fixture's 200 ms poll interval is confirmed by its request's status (under load, most are);
 * - a schedule fires every second, each fire to be claimed by one replica.
 *
 * A killed replica is started again on its port, at once (it takes up its own runs and callbacks as it starts:
 * its dead owner is known on this host), or only after its lease has expired (another replica claims them at a
 * renewal). Afterwards:
 * - every device of the suspend has exactly one `devices.suspend` mutation in the emulator's counters, and no
 *   other device has any: two replicas never both sent a device's suspend, and a call whose answer a kill lost was
 *   reconciled first;
 * - the suspend run ended `succeeded`, its ledger (`device_results`) counting every device once;
 * - every callback sent (acknowledged at once, or once sent again) started exactly one run, and every one of them
 *   ended well; the inbox has nothing left to process;
 * - each second from the schedule's first fire to its last has exactly one run: none fired twice, none missed
 *   (two replicas at least were alive throughout).
 *
 * The replicas are the built CLI (`npm run build` first) in child processes; the emulator runs in this process
 * and counts the calls of all three; the database is a fresh one on the tests' own PostgreSQL server. The kill
 * points come from a seeded generator: CHAOS_SEED=<n> replays a sequence.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import type { Emulator } from '../../src/emulator/index.js';
import { startBalancer, type Balancer } from '../helpers/balancer.js';
import {
  emulatorWithActive,
  expectEachSuspendedOnce,
  expectRunPerCallback,
  rng,
  Sender,
  sleep,
} from '../helpers/chaos.js';
import { emulatorEnv } from '../helpers/cli.js';
import { DaemonProcess } from '../helpers/daemon.js';
import { postgresUrl } from '../helpers/postgres.js';

const DEVICES = 10_000;
const REPLICAS = 3;
const ROUNDS = 10;
const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'replicas');
const TOKEN = 'replicas-chaos-daemon-token-0123456789';
const CREDS = { username: 'chaos-listener', password: 'chaos-listener-password' };
/** Short, so that a dead replica's work is taken up within the test; renewed every third of it. */
const LEASE_MS = 3000;
/** Emulator latency per API request: the suspend spans several kills, and a kill lands mid-call. */
const LATENCY_MS = 150;

/** A replica: its port, kept across restarts, and the process now running on it, if any. */
class Replica {
  port = 0;
  proc: DaemonProcess | undefined;
  starts = 0;
  /** Exits this test did not cause (a lost lease, a crash): each is a failure. */
  readonly unexpected: string[] = [];

  constructor(
    readonly index: number,
    private readonly spawn: (name: string, port: number) => Promise<DaemonProcess>,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const d = await this.spawn(`replica ${this.index} (start ${++this.starts})`, this.port);
    this.port = Number(new URL(d.url).port);
    this.proc = d;
    void d.exited.then((e) => {
      if (this.proc === d) this.unexpected.push(`${d.name} exited (${e.signal ?? String(e.code)})`);
    });
  }

  /** Stops it by `signal`; how it ended: the exit code, or the signal. */
  async stop(signal: 'SIGKILL' | 'SIGTERM'): Promise<string> {
    const d = this.proc;
    if (!d) return 'not running';
    this.proc = undefined;
    const e = await d.stop(signal);
    return e.signal ?? String(e.code);
  }
}

describe('daemon: three replicas on one PostgreSQL, one killed with SIGKILL ten times', function () {
  this.timeout(180_000);
  const seed = Number(process.env.CHAOS_SEED ?? Date.now() % 1_000_000);
  /** The kills: when, which replica, when it starts again. The callback mix has a generator of its own. */
  const random = rng(seed);
  const mix = rng(seed + 1);
  let emu: Emulator;
  let account: string;
  let active: string[];
  let db: pg.Client;
  let lb: Balancer;
  const daemons: DaemonProcess[] = [];
  const replicas: Replica[] = [];
  /** The replicas' stderr, every start, for the failure messages. */
  const stderr = () => daemons.map((d) => `--- ${d.name}\n${d.stderr.slice(-1500)}`).join('\n');

  before(async () => {
    ({ emu, account, active } = await emulatorWithActive(DEVICES, 12_500));
    emu.setFaults({ latencyMs: LATENCY_MS });
    const url = await postgresUrl();
    db = new pg.Client(url);
    await db.connect();
    // In front of the replicas: the test's callbacks, and the emulator's (each device's suspend is confirmed by a
    // CarrierService callback, which reaches the replica running the suspend through any of the three).
    lb = await startBalancer(() => replicas.filter((r) => r.port).map((r) => r.url));
    const spawn = async (name: string, port: number) => {
      const d = await DaemonProcess.start(name, {
        playbooks: FIXTURES,
        state: url,
        port,
        env: {
          ...emulatorEnv(emu),
          FLEETBOOK_CALLBACK_USERNAME: CREDS.username,
          FLEETBOOK_CALLBACK_PASSWORD: CREDS.password,
          FLEETBOOK_CALLBACK_URL: lb.url,
          FLEETBOOK_CALLBACK_ACCOUNTS: account,
          FLEETBOOK_DAEMON_TOKEN: TOKEN,
          FLEETBOOK_LEASE: `${LEASE_MS}ms`,
          FLEETBOOK_RATE: '2000',
          FLEETBOOK_CONCURRENCY: '16',
          FLEETBOOK_LOG_LEVEL: 'warn',
        },
      });
      daemons.push(d);
      return d;
    };
    for (let i = 0; i < REPLICAS; i++) replicas.push(new Replica(i, spawn));
    // Together, as a deployment starts them: the first applies the migrations, the others wait for it.
    await Promise.all(replicas.map((r) => r.start()));
  });

  after(async () => {
    for (const d of daemons) await d.kill();
    await db?.end();
    await lb?.close();
    await emu?.close();
  });

  async function one<T>(sql: string, values: unknown[] = []): Promise<T> {
    return (await db.query(sql, values)).rows[0] as T;
  }

  /** The suspend run's status, and the replica whose process holds it (by the pid of its owner). */
  async function suspendNow(runId: string): Promise<{ status: string; holder: Replica | undefined }> {
    const row = await one<{ status: string; pid: number | null }>(
      'SELECT r.status, o.pid FROM runs r LEFT JOIN owners o ON o.id = r.owner WHERE r.id = $1',
      [runId],
    );
    return { status: row.status, holder: replicas.find((r) => r.proc && r.proc.proc.pid === row.pid) };
  }

  /**
   * Waits until a batch of the suspend has its `sending` checkpoint (its call sent, its answer not recorded): a
   * kill of the holder then leaves a call of unknown outcome, which the run must reconcile when it resumes.
   */
  async function untilSending(runId: string, ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      const { n } = await one<{ n: number }>(
        `SELECT count(*)::int AS n FROM run_steps WHERE run_id = $1 AND state_json::json ->> 'status' = 'sending'`,
        [runId],
      );
      if (n > 0) return;
      await sleep(5);
    }
    throw new Error(`no batch of the suspend was sending within ${ms} ms\n${stderr()}`);
  }

  /** Waits until the inbox is drained and every run stored before now has ended, the suspend among them. */
  async function settle(runId: string, ms: number, context: string): Promise<void> {
    const began = new Date().toISOString();
    const deadline = Date.now() + ms;
    for (;;) {
      const left = await one<{ inbox: number; runs: number; suspend: string }>(
        `SELECT (SELECT count(*)::int FROM inbox_pending) AS inbox,
                (SELECT count(*)::int FROM runs WHERE status IN ('queued', 'running') AND started_at < $1) AS runs,
                (SELECT status FROM runs WHERE id = $2) AS suspend`,
        [began, runId],
      );
      if (left.inbox === 0 && left.runs === 0 && left.suspend !== 'running' && left.suspend !== 'queued')
        return;
      if (Date.now() > deadline)
        throw new Error(
          `the replicas did not finish within ${ms} ms: ${JSON.stringify(left)} (${context})\n${stderr()}`,
        );
      await sleep(200);
    }
  }

  it('mutates each device once, processes each callback once, fires each second once', async () => {
    const began = Date.now();
    const s = new Sender(account, CREDS);
    const runId = await replicas[0]!.proc!.startRun('suspend-fleet', TOKEN, { account });

    let stop = false;
    let n = 0;
    const poster = async (p: number) => {
      while (!stop) {
        const recent = s.recent(200);
        const unacked = [...s.unacked].slice(-50);
        const r = mix();
        const id =
          r < 0.08 && recent.length
            ? recent[Math.floor(mix() * recent.length)]!
            : r < 0.16 && unacked.length
              ? unacked[Math.floor(mix() * unacked.length)]!
              : `chaos-${seed}-${p}-${n++}`;
        await s.post(lb.url, id);
        // About 30 callbacks a second in all: a stream, each one a run on a replica (at 5 ms, with the
        // balancer keeping its connections, twice as many took twice the replicas' CPU to show nothing more).
        await sleep(100);
      }
    };
    const streaming = Promise.all([0, 1, 2].map(poster));

    const kills: string[] = [];
    let holderKills = 0;
    for (let round = 0; round < ROUNDS; round++) {
      // The first kill is of the suspend's holder with a call in flight; the others come at random times.
      const first = round === 0;
      if (first) await untilSending(runId, 20_000);
      else await sleep(300 + Math.floor(random() * 1700));
      // The first two kills while the suspend runs are of its holder: a replica takes up a dead one's run at its
      // next lease renewal, so the suspend moves on quickly between kills, and chance alone may miss it. The
      // holder is waited for a moment if the run is between holders.
      const mustHit = holderKills < 2;
      let suspend = await suspendNow(runId);
      for (let i = 0; mustHit && i < 50 && !suspend.holder && suspend.status === 'running'; i++) {
        await sleep(100);
        suspend = await suspendNow(runId);
      }
      const runs = suspend.status === 'running' || suspend.status === 'queued';
      // While the suspend runs, its holder (the first two times, then half the time); else any replica.
      const victim =
        runs && suspend.holder && (first || mustHit || random() < 0.5)
          ? suspend.holder
          : replicas[Math.floor(random() * REPLICAS)]!;
      if (runs && victim === suspend.holder) holderKills++;
      expect(await victim.stop('SIGKILL'), `replica ${victim.index} killed`).to.equal('SIGKILL');
      // At once: it takes up its own work as it starts. Or after its lease: the others take it up first.
      const late = random() < 0.4;
      kills.push(
        `${victim.index}${runs && victim === suspend.holder ? '*' : ''}${late ? 'L' : ''}:${suspend.status}`,
      );
      await sleep(late ? LEASE_MS + 1500 : Math.floor(random() * 300));
      await victim.start();
    }
    const killsEnded = Date.now();
    stop = true;
    await streaming;
    const context = `seed ${seed}; kills (replica, * its holder, L restarted after the lease: the suspend) ${kills.join(' ')}`;

    // The service sends again what was never acknowledged; everything is left to finish.
    await s.resendUnacknowledged(() => lb.url);
    await settle(runId, 60_000, context);
    const settled = new Date().toISOString();
    const summary = (await (await fetch(`${replicas[1]!.url}/runs/${runId}`)).json()) as {
      status: string;
      error?: string;
      devices: { total: number; succeeded: number };
      steps: { id: string; confirmation?: { callback: number; requestStatus: number; stateRead: number } }[];
    };
    const confirmed = summary.steps.find((x) => x.id === 'suspend')?.confirmation;
    const ends = await Promise.all(replicas.map((r) => r.stop('SIGTERM')));
    console.log(
      `      ${s.posted} callbacks posted (${s.acked.size} acknowledged, ${s.duplicates} duplicates), the suspend's devices confirmed by ${JSON.stringify(confirmed)}, requests per replica ${[...lb.answered.values()].join(' ')} (${lb.failed} failed), ${Date.now() - began} ms; ${context}`,
    );
    expect(ends, 'clean stops').to.deep.equal(['0', '0', '0']);
    expect(
      replicas.flatMap((r) => r.unexpected),
      `replicas that exited by themselves (${context})`,
    ).to.deep.equal([]);

    // The kills did land on the running suspend's holder, more than once, and callbacks went through throughout.
    expect(holderKills, `kills of the suspend's holder while it ran (${context})`).to.be.at.least(2);
    expect(s.acked.size, 'callbacks acknowledged').to.be.greaterThan(100);
    expect(s.duplicates, 'acknowledged callbacks sent again, answered duplicate').to.be.greaterThan(0);
    expect(
      daemons.map((d) => d.stderr).join(''),
      `a resumed call of unknown outcome (${context})`,
    ).to.include('resuming a call whose outcome is unknown');

    // Every device suspended exactly once, by the emulator's own counters; no other device touched.
    await expectEachSuspendedOnce(emu, active, context);

    // The suspend ended well and counts each device once, in its summary and in the ledger.
    expect(summary.status, `${summary.error ?? ''} (${context})`).to.equal('succeeded');
    expect(summary.devices).to.include({ total: DEVICES, succeeded: DEVICES });
    const ledger = await db.query(
      `SELECT outcome, count(*)::int AS n FROM device_results WHERE run_id = $1 AND step = 'suspend' GROUP BY outcome`,
      [runId],
    );
    expect(ledger.rows).to.deep.equal([{ outcome: 'succeeded', n: DEVICES }]);

    // Each callback, acknowledged at once or once sent again, started exactly one run, which ended well.
    const { rows: callbackRuns } = await db.query<{ status: string; requestId: string }>(
      `SELECT status, trigger_json::json ->> 'requestId' AS "requestId" FROM runs WHERE playbook = 'usage-callback'`,
    );
    expectRunPerCallback(callbackRuns, s, context);
    expect(
      (await one<{ n: number }>('SELECT count(*)::int AS n FROM inbox_pending')).n,
      'callbacks never processed',
    ).to.equal(0);

    // Each second from the schedule's first fire to its last, fired once: no second twice, none missing.
    const { rows: fires } = await db.query<{ at: string; status: string; started_at: string }>(
      `SELECT trigger_json::json ->> 'scheduledAt' AS at, status, started_at FROM runs
       WHERE playbook = 'every-second' ORDER BY 1`,
    );
    const times = fires.map((f) => Date.parse(f.at));
    expect(
      fires.filter((f, i) => i > 0 && f.at === fires[i - 1]!.at).map((f) => f.at),
      `seconds fired twice (${context})`,
    ).to.deep.equal([]);
    const gaps: string[] = [];
    for (let i = 1; i < times.length; i++)
      if (times[i]! - times[i - 1]! > 1000) gaps.push(`${fires[i - 1]!.at} .. ${fires[i]!.at}`);
    expect(gaps, `seconds never fired (${context})`).to.deep.equal([]);
    expect(times[0]!, 'the first fire, within seconds of the start').to.be.below(began + 3000);
    expect(times.at(-1)!, 'the last fire, within seconds of the end of the kills').to.be.above(
      killsEnded - 2000,
    );
    expect(
      fires
        .filter((f) => f.started_at < settled && f.status !== 'succeeded')
        .map((f) => `${f.at}: ${f.status}`),
      `scheduled runs not succeeded (${context})`,
    ).to.deep.equal([]);
  });
});
