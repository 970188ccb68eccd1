/**
 * P3 and P4: the daemon (`fleetbook serve`, the built CLI in its own process) against the emulator (in a process
 * of its own, bench/children/emulator.mjs), fed DeviceUsage callbacks by this process (bench/poster.ts: 64
 * keep-alive connections, each sending its next callback when the last is answered; the requests are built
 * before the timing starts, and the answers read no further than they must be).
 *
 * P3: callbacks acknowledged durably. The playbooks (bench/fixtures/daemon/p3) match none of them, so the
 * figure is the listener, the fsync'd group commit and the matcher marking each event processed. After the
 * batch the daemon is killed (SIGKILL: no shutdown code runs after the last answer) and the inbox table is
 * read: every acknowledged requestId is there, once.
 * P4: callback-triggered runs end to end. Each callback names its own active device, and the one playbook
 * (bench/fixtures/daemon/p4) suspends it: one API call a run. Timed from the first post until every run has
 * ended; every run must have succeeded, with one `devices.suspend` call each.
 *
 * The same two phases run on each deployment, with a fresh emulator each: the SQLite file of one daemon (P3,
 * P4); one daemon on a PostgreSQL database (P3-PG, P4-PG: at least half the SQLite figures of the same run,
 * which are measured with them); three replicas on one database, each callback posted to the next replica in
 * turn as a load balancer would (P3-PG3, P4-PG3: figures only, two cores cannot show scaling). The PostgreSQL
 * server is the tests' throwaway one (test/helpers/postgres.ts) with fsync on: commits are durable, as on
 * SQLite. In P4-PG3 the emulator's confirmations of the suspensions go to the replica that registered the
 * listener last (the others hear of them through the store).
 *
 * Each phase times ROUNDS batches one after the other, after its warm-up: the row gives the median round's
 * figures, and every round's rate beside them.
 *
 * Each phase is preceded by a warm-up (not timed, checked like the rest) in windows of the same items per
 * daemon, long enough that each daemon's compiler is done before the timed window: the daemons' CPU per item in each warm-up window is in
 * the row, and flat by its end. Beside each figure: the CPU time per item (every thread, from /proc) of the
 * daemons, the database server (its postmaster and every process it started), the emulator and the load
 * generator (this process) apart, which share the machine's cores; and how each daemon's event loop spent the
 * timed wall time: on a CPU, runnable but waiting for a core (other processes had both: the figure is then the
 * machine's, not fleetbook's), or blocked (idle, waiting for the database, or in a synchronous fsync).
 *
 * `FLEETBOOK_BENCH_PROF=<dir>` runs the daemons and the emulator with `--cpu-prof --cpu-prof-dir <dir>`; each
 * writes its profile when it stops (the emulator's as emulator.cpuprofile; P3's daemons are then stopped with
 * SIGTERM instead of killed).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isPostgresUrl } from '../src/util/state-url.js';
import type { DaemonProcess } from '../test/helpers/daemon.js';
import { postgresAdminUrl, postgresUrl, stopPostgres } from '../test/helpers/postgres.js';
import { median } from './stats.js';
import type { BenchRow } from './types.js';
import {
  activeImeis,
  callbacks,
  drained,
  metrics,
  others,
  pct,
  post,
  storeRows,
  total,
  warmUp,
  windowsText,
  type Batch,
  type WarmUp,
} from './load.js';
import { Poster } from './poster.js';
import {
  cpuOf,
  cpuSplit,
  describePostgres,
  mainThreads,
  startDaemons,
  startEmulatorProcess,
  stopDaemons,
  threadShare,
  type EmulatorProcess,
} from './processes.js';

const FIXTURES = join(import.meta.dirname, 'fixtures', 'daemon');
const CONNECTIONS = 64;
/** Timed rounds of each phase: the row's figure is their median, with each round's beside it. */
const ROUNDS = 3;
/** P3's warm-up: this many windows of P3_WINDOW callbacks per daemon, then ROUNDS of P3_N timed. */
const P3_WINDOW = 2_000;
const P3_WARM_WINDOWS = 5;
const P3_N = 20_000;
/** P4's warm-up: this many windows of P4_WINDOW runs per daemon (each drained), then ROUNDS of P4_M timed. */
const P4_WINDOW = 500;
const P4_WARM_WINDOWS = 12;
const P4_M = 5_000;
/** Devices of the account per daemon: an active IMEI device per P4 run, warm-up included, none contended. */
const DEVICES = 32_000;
/** A PostgreSQL row passes at this share of the SQLite figure of the same run (issue 20). */
const PG_SHARE = 0.5;

/** The daemons the phases run on: one on a SQLite file, or replicas on one PostgreSQL database. */
interface Deployment {
  /** Of the rows' ids: `P3${suffix}`. */
  suffix: '' | '-PG' | '-PG3';
  replicas: number;
  /** What the rows say of it, before their measure. */
  label: string;
  /** A new, empty state for a phase. */
  state(phase: string): Promise<string>;
  /** The pid of the PostgreSQL server's postmaster, whose CPU time is read. */
  postmaster?: number | undefined;
}

/** The figures of a phase on SQLite, which its PostgreSQL row is judged against. */
interface Figures {
  rate: number;
  p99: number;
}

/** The target and the verdict of a phase's row: absolute on SQLite, relative on PostgreSQL, none on replicas. */
function judged(
  dep: Deployment,
  base: Figures | undefined,
  own: Figures,
  sqlite: { target: string; pass: boolean },
  p99Too: boolean,
): { target: string; pass: boolean; versus: (f: keyof Figures) => string } {
  const versus = (f: keyof Figures) =>
    base && dep.suffix === '-PG'
      ? f === 'rate'
        ? ` (${Math.round((own.rate / base.rate) * 100)} % of SQLite's)`
        : ` (${(own.p99 / base.p99).toFixed(1)} x SQLite's)`
      : '';
  if (dep.suffix === '') return { ...sqlite, versus };
  if (dep.suffix === '-PG3') return { target: '(figures: 2 cores cannot show scaling)', pass: true, versus };
  if (!base) throw new Error('a PostgreSQL row needs its SQLite figures of the same run');
  const min = Math.round(base.rate * PG_SHARE);
  const maxP99 = base.p99 / PG_SHARE;
  return {
    target: `>= ${PG_SHARE * 100} % of SQLite's (${min}/s)${p99Too ? `; p99 <= ${(1 / PG_SHARE).toFixed(0)} x SQLite's (${maxP99.toFixed(1)} ms)` : ''}`,
    pass: own.rate >= min && (!p99Too || own.p99 <= maxP99),
    versus,
  };
}

/** The round of median rate, and every round's rate as the row shows it (`11762 / 12088 / 12310/s`). */
function medianRound<T extends { rate: number }>(rounds: T[]): { mid: T; rates: string } {
  const sorted = [...rounds].sort((a, b) => a.rate - b.rate);
  return {
    mid: sorted[Math.floor(sorted.length / 2)] as T,
    rates: rounds.map((r) => Math.round(r.rate)).join(' / '),
  };
}

async function p3(
  emu: EmulatorProcess,
  dep: Deployment,
  base?: Figures,
): Promise<{ row: BenchRow; figures: Figures }> {
  const account = emu.defaults.accounts[0] as string;
  const window = P3_WINDOW * dep.replicas;
  const state = await dep.state('p3');
  const daemons = await startDaemons(emu, join(FIXTURES, 'p3'), state, dep.replicas);
  const url = (daemons[0] as DaemonProcess).url;
  const poster = new Poster(
    daemons.map((d) => d.url),
    CONNECTIONS,
  );
  const make = (prefix: string, n: number) =>
    callbacks(url, prefix, n, 'bench-p3', account, (i) => [String(350000000000000 + i)]);
  let warm: WarmUp;
  const rounds: { batch: Batch; split: string; share: string; rate: number; p99: number }[] = [];
  try {
    warm = await warmUp(poster, daemons, P3_WARM_WINDOWS, (w) => make(`p3-warm${w}`, window));
    for (let r = 0; r < ROUNDS; r++) {
      const posts = make(`p3-round${r}`, P3_N);
      const measured = { daemons, emu, postmaster: dep.postmaster };
      const cpu0 = cpuOf(measured);
      const thread0 = mainThreads(daemons);
      const batch = await post(poster, posts);
      rounds.push({
        batch,
        split: cpuSplit(cpu0, cpuOf(measured), batch.stored.size),
        share: threadShare(daemons, thread0, batch.ms),
        rate: (batch.stored.size / batch.ms) * 1000,
        p99: pct(batch.latencies, 99),
      });
    }
  } finally {
    // Killed, not stopped: what was acknowledged must already be on disk, with nothing run after it (a
    // profiled daemon is stopped, so that it writes its profile).
    await stopDaemons(daemons, process.env.FLEETBOOK_BENCH_PROF ? 'SIGTERM' : 'SIGKILL');
    poster.close();
  }
  // What the daemons left on disk (the WAL included): every acknowledged requestId, once.
  const ids = (await storeRows<{ request_id: string }>(state, 'SELECT request_id FROM inbox')).map(
    (r) => r.request_id,
  );
  const stored = new Set(ids);
  let lost = 0;
  for (const { batch } of rounds) for (const id of batch.stored) if (!stored.has(id)) lost++;
  const warmIds = [...stored].filter((id) => id.startsWith('p3-warm')).length;
  const warmTotal = P3_WARM_WINDOWS * window;
  const acked = warm.stored + rounds.reduce((n, r) => n + r.batch.stored.size, 0);
  const { mid, rates } = medianRound(rounds);
  const { batch, split, share } = mid;
  const figures = { rate: mid.rate, p99: median(rounds.map((r) => r.p99)) };
  const p50 = pct(batch.latencies, 50);
  const notStored = others(new Map([...warm.other, ...rounds.flatMap((r) => [...r.batch.other])]));
  const correct =
    lost === 0 &&
    rounds.length === ROUNDS &&
    rounds.every((r) => r.batch.stored.size === P3_N) &&
    warm.stored === warmTotal &&
    warmIds === warmTotal &&
    ids.length === acked;
  const j = judged(
    dep,
    base,
    figures,
    {
      target: '>= 10,000/s; p99 <= 25 ms; 0 lost',
      pass: figures.rate >= 10_000 && figures.p99 <= 25,
    },
    true,
  );
  return {
    figures,
    row: {
      id: `P3${dep.suffix}`,
      measure: `${dep.label}${P3_N} callbacks acknowledged (after ${warmTotal} warm-up), ${CONNECTIONS} connections, ${ROUNDS} rounds: ${rates}/s; the median round ${(batch.ms / 1000).toFixed(2)} s, p50 ${p50.toFixed(1)} ms, max ${pct(batch.latencies, 100).toFixed(0)} ms; ${split}; ${share}; ${windowsText(warm, window)}; inbox ${ids.length} rows, ${acked} acked${notStored ? `; not stored: ${notStored}` : ''}`,
      value: `${Math.round(figures.rate)}/s${j.versus('rate')} (median of ${ROUNDS} rounds); p99 ${figures.p99.toFixed(1)} ms${j.versus('p99')}; ${lost} lost`,
      target: dep.suffix === '' ? j.target : `${j.target}; 0 lost`,
      pass: correct && j.pass,
    },
  };
}

async function p4(
  emu: EmulatorProcess,
  dep: Deployment,
  base?: Figures,
): Promise<{ row: BenchRow; figures: Figures }> {
  const account = emu.defaults.accounts[0] as string;
  const window = P4_WINDOW * dep.replicas;
  const warmTotal = P4_WARM_WINDOWS * window;
  const all = warmTotal + ROUNDS * P4_M;
  // Distinct active IMEI devices, one per callback: no device lock is contended, every suspension applies.
  const imeis = await activeImeis(emu, account);
  if (imeis.length < all) throw new Error(`P4: only ${imeis.length} active IMEI devices`);
  const state = await dep.state('p4');
  // The listener registers for the account's CarrierService messages: each run's suspend is confirmed by its
  // device's callback.
  const daemons = await startDaemons(emu, join(FIXTURES, 'p4'), state, dep.replicas, {
    FLEETBOOK_CALLBACK_ACCOUNTS: account,
  });
  const url = (daemons[0] as DaemonProcess).url;
  const poster = new Poster(
    daemons.map((d) => d.url),
    CONNECTIONS,
  );
  const make = (prefix: string, from: number, n: number) =>
    callbacks(url, prefix, n, 'overuse-bench', account, (i) => [imeis[from + i] as string]);
  let warm: WarmUp;
  const rounds: { batch: Batch; ms: number; done: boolean; split: string; share: string; rate: number }[] =
    [];
  let m: Map<string, number>;
  try {
    warm = await warmUp(
      poster,
      daemons,
      P4_WARM_WINDOWS,
      (w) => make(`p4-warm${w}`, w * window, window),
      // The runs of the callbacks stored: one the daemon refused (an overloaded moment) starts none, and is shown.
      async (w, sofar) => {
        if (!(await drained(daemons, sofar.stored, 30_000))) {
          const why = await notDrained(daemons, state);
          // And what they logged (at warn and above): why they stopped.
          const logs = daemons.map((d) => `${d.name}:\n${d.stderr.slice(-2000)}`).join('\n');
          throw new Error(
            `P4: the runs of warm-up window ${w + 1} did not end within 30 s (${sofar.stored} callbacks stored, ${why}${sofar.other.size ? `; not stored: ${others(sofar.other)}` : ''})\n${logs}`,
          );
        }
      },
    );
    for (let r = 0; r < ROUNDS; r++) {
      const posts = make(`p4-round${r}`, warmTotal + r * P4_M, P4_M);
      const measured = { daemons, emu, postmaster: dep.postmaster };
      const cpu0 = cpuOf(measured);
      const thread0 = mainThreads(daemons);
      const began = performance.now();
      const wallBegan = Date.now();
      const batch = await post(poster, posts);
      const done = await drained(daemons, warmTotal + (r + 1) * P4_M, 30_000);
      const elapsed = performance.now() - began;
      // The span ends at the last run's end as the store has it, not when a read of /metrics noticed it: the
      // reads are a few a second, and the span is the daemons' work alone.
      const [last] = await storeRows<{ at: string | null }>(state, 'SELECT max(ended_at) AS at FROM runs');
      const ms = done && last?.at ? Date.parse(last.at) - wallBegan : elapsed;
      rounds.push({
        batch,
        ms,
        done,
        split: cpuSplit(cpu0, cpuOf(measured), P4_M),
        share: threadShare(daemons, thread0, elapsed),
        rate: (P4_M / ms) * 1000,
      });
      if (!done) break;
    }
    m = await metrics(daemons);
  } finally {
    poster.close();
    await stopDaemons(daemons);
  }
  const byStatus = new Map(
    (
      await storeRows<{ status: string; n: number }>(
        state,
        'SELECT status, CAST(count(*) AS INTEGER) AS n FROM runs GROUP BY status',
      )
    ).map((r) => [r.status, r.n]),
  );
  const succeeded = total(m, 'fleetbook_runs_total', 'playbook="bench-p4-suspend",status="succeeded"');
  const endedOther = total(m, 'fleetbook_runs_total') - succeeded;
  const suspends = total(m, 'fleetbook_api_calls_total', 'action="devices.suspend"');
  const statusCalls = total(m, 'fleetbook_api_calls_total', 'action="requests.status"');
  const confirmed = total(
    m,
    'fleetbook_device_outcomes_total',
    'playbook="bench-p4-suspend",outcome="succeeded"',
  );
  const { mid, rates } = medianRound(rounds);
  const { batch, ms, split, share } = mid;
  const done = rounds.length === ROUNDS && rounds.every((r) => r.done);
  const figures = { rate: mid.rate, p99: pct(batch.latencies, 99) };
  const notStored = others(new Map([...warm.other, ...rounds.flatMap((r) => [...r.batch.other])]));
  const correct =
    done &&
    succeeded === all &&
    endedOther === 0 &&
    byStatus.get('succeeded') === all &&
    byStatus.size === 1 &&
    suspends === all &&
    confirmed === all;
  const j = judged(dep, base, figures, { target: '>= 2,500 runs/s', pass: figures.rate >= 2_500 }, false);
  return {
    figures,
    row: {
      id: `P4${dep.suffix}`,
      measure: `${dep.label}${P4_M} callbacks each starting a run of one devices.suspend (after ${warmTotal} warm-up), ${ROUNDS} rounds: ${rates} runs/s; the median round ${(ms / 1000).toFixed(2)} s from the first post to the last run's end (posting ${(batch.ms / 1000).toFixed(2)} s, ack p99 ${figures.p99.toFixed(0)} ms); ${split}; ${share}; ${windowsText(warm, window)}; runs ${[...byStatus].map(([s, n]) => `${n} ${s}`).join(', ')}; ${suspends} suspend calls, ${confirmed} devices confirmed succeeded, ${statusCalls} request-status calls (the rest by callback${dep.replicas > 1 ? ', each to the replica that registered last' : ''})${notStored ? `; not stored: ${notStored}` : ''}${done ? '' : `; TIMED OUT: ${await notDrained(daemons, state)}`}`,
      value: `${Math.round(figures.rate)} runs/s${j.versus('rate')} (median of ${ROUNDS} rounds)`,
      target: j.target,
      pass: correct && j.pass,
    },
  };
}

/** The deployments, in the order they run; each is made only when one of its rows is asked for. */
const DEPLOYMENTS: { suffix: Deployment['suffix']; make: (dir: string) => Promise<Deployment> }[] = [
  {
    suffix: '',
    make: async (dir) => ({
      suffix: '',
      replicas: 1,
      label: '',
      state: async (phase) => join(dir, `${phase}.db`),
    }),
  },
  { suffix: '-PG', make: () => onPostgres('-PG', 1) },
  { suffix: '-PG3', make: () => onPostgres('-PG3', 3) },
];

async function onPostgres(suffix: '-PG' | '-PG3', replicas: number): Promise<Deployment> {
  const server = await describePostgres(await postgresAdminUrl({ fsync: true }));
  const who =
    replicas === 1
      ? 'one daemon'
      : `${replicas} replicas, each callback to the next in turn (this 2-core machine cannot show scaling)`;
  return {
    suffix,
    replicas,
    label: `${server.label}, ${who}: `,
    state: () => postgresUrl({ fsync: true }),
    postmaster: server.postmaster,
  };
}

/**
 * The rows asked for (`P3`, `P4-PG3`...; none: every row). A PostgreSQL row of one daemon is judged against
 * the SQLite row of the same run, which is then measured too.
 */
export async function benchDaemon(only: string[] = []): Promise<BenchRow[]> {
  const asked = (id: string) => !only.length || only.includes(id);
  const wanted = (phase: 'P3' | 'P4', suffix: string) =>
    asked(`${phase}${suffix}`) || (suffix === '' && asked(`${phase}-PG`));
  const dir = await mkdtemp(join(tmpdir(), 'fleetbook-p3p4-'));
  const rows: BenchRow[] = [];
  const base: { P3?: Figures; P4?: Figures } = {};
  try {
    for (const { suffix, make } of DEPLOYMENTS) {
      if (!wanted('P3', suffix) && !wanted('P4', suffix)) continue;
      const dep = await make(dir);
      const emu = await startEmulatorProcess({
        timeScale: 0,
        accounts: 1,
        devicesPerAccount: DEVICES * dep.replicas,
        seed: 7,
      });
      try {
        for (const [phase, run] of [
          ['P3', p3],
          ['P4', p4],
        ] as const) {
          if (!wanted(phase, suffix)) continue;
          const r = await run(emu, dep, base[phase]);
          if (suffix === '') base[phase] = r.figures;
          rows.push(r.row);
        }
      } finally {
        await emu.close();
      }
    }
  } finally {
    await stopPostgres();
    await rm(dir, { recursive: true, force: true });
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const row of await benchDaemon(process.argv.slice(2).map((s) => s.toUpperCase()))) console.log(row);
}

/**
 * Why the daemons are not drained: what each says (a run that never ends and a backlog that never empties look
 * alike there), and the callbacks the store has pending (none: a daemon's count drifted from the store).
 */
async function notDrained(daemons: DaemonProcess[], state: string): Promise<string> {
  const each = await Promise.all(daemons.map((d) => metrics([d])));
  const said = ['fleetbook_runs_total', 'fleetbook_runs_running', 'fleetbook_inbox_backlog']
    .map((name) => `${name} ${each.map((m) => total(m, name)).join(' + ')}`)
    .join(', ');
  const pending = await storeRows<{ id: number; owner: string | null; kind: string; request_id: string }>(
    state,
    isPostgresUrl(state)
      ? 'SELECT i.id, p.owner, i.kind, i.request_id FROM inbox_pending p JOIN inbox i USING (id) ORDER BY i.id LIMIT 20'
      : 'SELECT id, owner, kind, request_id FROM inbox WHERE processed_at IS NULL ORDER BY id LIMIT 20',
  );
  return `${said}; pending in the store: ${JSON.stringify(pending)}`;
}
