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
 * Each phase is preceded by a warm-up (not timed, checked like the rest) in windows, long enough that the
 * daemon's compiler is done before the timed window: the daemon's CPU per item in each warm-up window is in
 * the row, and flat by its end. Beside each figure: the CPU time per item (every thread, from /proc) of the
 * daemon, the emulator and the load generator (this process) apart, which share the machine's cores; and how
 * the daemon's event loop spent the timed wall time: on a CPU, runnable but waiting for a core (other
 * processes had both: the figure is then the machine's, not fleetbook's), or blocked (idle, or in a
 * synchronous fsync).
 *
 * `FLEETBOOK_BENCH_PROF=<dir>` runs the daemons with `--cpu-prof --cpu-prof-dir <dir>`; each writes its profile
 * when it stops (P3's daemon is then stopped with SIGTERM instead of killed).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { request } from 'undici';
import { createClient } from '../src/api/client.js';
import type { Emulator } from '../src/emulator/index.js';
import type { BenchRow } from './types.js';
import { freePort } from './net.js';
import { Poster, postRequest } from './poster.js';
import { emulatorEnv } from '../test/helpers/cli.js';
import { DaemonProcess } from '../test/helpers/daemon.js';

const FIXTURES = join(import.meta.dirname, 'fixtures', 'daemon');
const CONNECTIONS = 64;
/** P3's warm-up: this many windows of P3_WINDOW callbacks, then P3_N timed. */
const P3_WINDOW = 2_000;
const P3_WARM_WINDOWS = 5;
const P3_N = 20_000;
/** P4's warm-up: this many windows of P4_WINDOW runs (each drained), then P4_M timed. */
const P4_WINDOW = 500;
const P4_WARM_WINDOWS = 12;
const P4_M = 5_000;
/** Active IMEI devices of the account: one per P4 run, warm-up included, none contended. */
const DEVICES = 16_000;
const CB_USER = 'bench-listener';
const CB_PASS = 'bench-listener-password';

/** The emulator in its own process: its CPU time is read apart from this process's (the load generator's). */
interface EmulatorProcess extends Pick<Emulator, 'baseUrl' | 'defaults'> {
  proc: ChildProcess;
  close(): Promise<void>;
}

async function startEmulatorProcess(options: object): Promise<EmulatorProcess> {
  const proc = fork(join(import.meta.dirname, 'children', 'emulator.mjs'), [JSON.stringify(options)], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const started = await new Promise<Pick<Emulator, 'baseUrl' | 'defaults'>>((resolve, reject) => {
    proc.once('message', (m) => resolve(m as Pick<Emulator, 'baseUrl' | 'defaults'>));
    proc.once('exit', (code) => reject(new Error(`the emulator exited with ${String(code)}`)));
  });
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  return {
    ...started,
    proc,
    close: async () => {
      proc.disconnect();
      await exited;
    },
  };
}

/** The daemon on the emulator, with the local machine as its budget. */
async function startDaemon(
  emu: EmulatorProcess,
  playbooks: string,
  state: string,
  extra: Record<string, string> = {},
): Promise<DaemonProcess> {
  const prof = process.env.FLEETBOOK_BENCH_PROF;
  return DaemonProcess.start('bench daemon', {
    playbooks,
    state,
    port: await freePort(),
    ...(prof ? { nodeArgs: ['--cpu-prof', '--cpu-prof-dir', prof] } : {}),
    env: {
      ...emulatorEnv(emu),
      FLEETBOOK_CALLBACK_USERNAME: CB_USER,
      FLEETBOOK_CALLBACK_PASSWORD: CB_PASS,
      // The emulator is local: the budget is the machine's.
      FLEETBOOK_RATE: '100000',
      FLEETBOOK_CONCURRENCY: '64',
      FLEETBOOK_MAX_RUNS: '64',
      FLEETBOOK_INBOX_LIMIT: '10000',
      FLEETBOOK_LOG_LEVEL: 'warn',
      ...extra,
    },
  });
}

/** SIGTERM (a clean stop: exit code 0 required) or SIGKILL (nothing runs after the last answer). */
async function stop(daemon: DaemonProcess, signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
  const e = await daemon.stop(signal);
  if (signal === 'SIGTERM' && e.code !== 0)
    throw new Error(`the daemon exited with ${String(e.code)}:\n${daemon.stderr.slice(-3000)}`);
}

/** User + system CPU time of a process (every thread) so far, in ms (Linux). */
function cpuMs(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime, stime in clock ticks (USER_HZ 100)
  } catch {
    return NaN;
  }
}

/** CPU time so far, in ms, of the daemon, the emulator and the load generator (this process). */
function cpuOf(
  daemon: DaemonProcess,
  emu: EmulatorProcess,
): { daemon: number; emulator: number; load: number } {
  return { daemon: cpuMs(daemon.proc.pid), emulator: cpuMs(emu.proc.pid), load: cpuMs(process.pid) };
}

/** The CPU time per item since `before`, in us, of each process: `daemon 130, emulator 2, load generator 40`. */
function cpuSplit(before: ReturnType<typeof cpuOf>, now: ReturnType<typeof cpuOf>, items: number): string {
  const us = (k: keyof typeof before) => (((now[k] - before[k]) / items) * 1000).toFixed(0);
  return `CPU us per item: daemon ${us('daemon')}, emulator ${us('emulator')}, load generator ${us('load')}`;
}

/**
 * The daemon's main thread (its event loop) so far, from /proc (Linux): ms on a CPU and ms runnable but
 * waiting for one (other processes had the cores). Wall time minus both is time blocked: idle, or in a
 * synchronous syscall such as an fsync.
 */
function mainThread(pid: number | undefined): { cpu: number; waited: number } {
  try {
    const [cpu, waited] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ').map(Number);
    return { cpu: (cpu as number) / 1e6, waited: (waited as number) / 1e6 };
  } catch {
    return { cpu: NaN, waited: NaN };
  }
}

/** Share of `ms` the daemon's main thread spent on a CPU, waiting for one, and blocked, since `before`. */
function threadShare(pid: number | undefined, before: { cpu: number; waited: number }, ms: number): string {
  const now = mainThread(pid);
  const on = ((now.cpu - before.cpu) / ms) * 100;
  const waited = ((now.waited - before.waited) / ms) * 100;
  return `daemon event loop on CPU ${on.toFixed(0)} %, runnable but waiting for a core ${waited.toFixed(0)} %, blocked or idle ${(100 - on - waited).toFixed(0)} %`;
}

/** A DeviceUsage callback posted to the daemon at `url`, as request bytes. */
const callbackRequest = (url: string, body: string) =>
  postRequest(url, '/callbacks/DeviceUsage', Buffer.from(body));

function callback(requestId: string, trigger: string, account: string, imei: string): string {
  return JSON.stringify({
    username: CB_USER,
    password: CB_PASS,
    requestId,
    deviceResponse: {
      alertServiceResponse: {
        triggerName: trigger,
        accountName: account,
        payAsYouGo: { deviceIds: [{ id: imei, kind: 'IMEI' }] },
      },
    },
  });
}

interface Batch {
  ms: number;
  /** Per request, in ms, sorted. */
  latencies: Float64Array;
  /** requestIds answered 200 `stored`. */
  stored: Set<string>;
  /** Any other answer, `status body` → count. */
  other: Map<string, number>;
}

/** A callback to post: its requestId, and the request's bytes. */
interface Post {
  id: string;
  request: Buffer;
}

/** Posts every request, CONNECTIONS at a time; the time is from the first post to the last answer. */
async function post(poster: Poster, posts: Post[]): Promise<Batch> {
  const latencies = new Float64Array(posts.length);
  const stored = new Set<string>();
  const other = new Map<string, number>();
  const count = (key: string) => other.set(key, (other.get(key) ?? 0) + 1);
  let next = 0;
  const began = performance.now();
  await poster.each(async (send) => {
    for (let i = next++; i < posts.length; i = next++) {
      const p = posts[i] as Post;
      const t0 = performance.now();
      try {
        const res = await send(p.request);
        latencies[i] = performance.now() - t0;
        if (res.status === 200 && res.body.includes('"stored"')) stored.add(p.id);
        else count(`${res.status} ${res.body}`);
      } catch (e) {
        latencies[i] = performance.now() - t0;
        count(`network ${(e as Error).message}`);
      }
    }
  });
  const ms = performance.now() - began;
  latencies.sort();
  return { ms, latencies, stored, other };
}

/** The warm-up batches' answers together, and the daemon's CPU per item in each window (us). */
interface WarmUp {
  stored: number;
  other: Map<string, number>;
  windows: number[];
}

/**
 * Posts `windows` batches of the callbacks `make(i)` gives (window i), each followed by `settle()`, recording the
 * daemon's CPU per item in each.
 */
async function warmUp(
  poster: Poster,
  daemon: DaemonProcess,
  windows: number,
  make: (window: number) => Post[],
  settle: () => Promise<void> = async () => undefined,
): Promise<WarmUp> {
  const out: WarmUp = { stored: 0, other: new Map(), windows: [] };
  for (let w = 0; w < windows; w++) {
    const posts = make(w);
    const cpu0 = cpuMs(daemon.proc.pid);
    const b = await post(poster, posts);
    await settle();
    out.windows.push(((cpuMs(daemon.proc.pid) - cpu0) / posts.length) * 1000);
    out.stored += b.stored.size;
    for (const [k, n] of b.other) out.other.set(k, (out.other.get(k) ?? 0) + n);
  }
  return out;
}

const windowsText = (w: WarmUp, size: number) =>
  `daemon CPU us per item in the warm-up's windows of ${size}: ${w.windows.map((x) => x.toFixed(0)).join(', ')}`;

const pct = (sorted: Float64Array, p: number) =>
  sorted.length
    ? (sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number)
    : NaN;

const others = (m: Map<string, number>) => [...m].map(([k, n]) => `${n} x ${k.slice(0, 80)}`).join('; ');

async function getJson(url: string): Promise<unknown> {
  const res = await request(url);
  return res.body.json();
}

async function metric(url: string, name: string): Promise<Map<string, number>> {
  const text = await (await request(`${url}/metrics`)).body.text();
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const i = line.lastIndexOf(' ');
    out.set(line.slice(name.length, i), Number(line.slice(i + 1)));
  }
  return out;
}

async function p3(emu: EmulatorProcess, dir: string): Promise<BenchRow> {
  const account = emu.defaults.accounts[0] as string;
  const state = join(dir, 'p3.db');
  const daemon = await startDaemon(emu, join(FIXTURES, 'p3'), state);
  const poster = new Poster(daemon.url, CONNECTIONS);
  const make = (prefix: string, n: number) =>
    Array.from({ length: n }, (_, i) => {
      const id = `${prefix}-${i}`;
      return {
        id,
        request: callbackRequest(daemon.url, callback(id, 'bench-p3', account, String(350000000000000 + i))),
      };
    });
  let warm: WarmUp;
  let batch: Batch;
  let split: string;
  let share: string;
  try {
    warm = await warmUp(poster, daemon, P3_WARM_WINDOWS, (w) => make(`p3-warm${w}`, P3_WINDOW));
    const posts = make('p3', P3_N);
    const cpu0 = cpuOf(daemon, emu);
    const thread0 = mainThread(daemon.proc.pid);
    batch = await post(poster, posts);
    split = cpuSplit(cpu0, cpuOf(daemon, emu), batch.stored.size);
    share = threadShare(daemon.proc.pid, thread0, batch.ms);
  } finally {
    // Killed, not stopped: what was acknowledged must already be on disk, with nothing run after it (a
    // profiled daemon is stopped, so that it writes its profile).
    await stop(daemon, process.env.FLEETBOOK_BENCH_PROF ? 'SIGTERM' : 'SIGKILL');
    poster.close();
  }
  // What the daemon left on disk (the WAL included): every acknowledged requestId, once.
  const db = new Database(state, { readonly: true });
  const ids = new Set(
    (db.prepare('SELECT request_id FROM inbox').all() as { request_id: string }[]).map((r) => r.request_id),
  );
  const rows = (db.prepare('SELECT count(*) AS n FROM inbox').get() as { n: number }).n;
  db.close();
  let lost = 0;
  for (const id of batch.stored) if (!ids.has(id)) lost++;
  const warmIds = [...ids].filter((id) => id.startsWith('p3-warm')).length;
  const warmTotal = P3_WARM_WINDOWS * P3_WINDOW;
  const acked = warm.stored + batch.stored.size;
  const rate = (batch.stored.size / batch.ms) * 1000;
  const p50 = pct(batch.latencies, 50);
  const p99 = pct(batch.latencies, 99);
  const notStored = others(new Map([...warm.other, ...batch.other]));
  return {
    id: 'P3',
    measure: `${P3_N} callbacks acknowledged (after ${warmTotal} warm-up), ${CONNECTIONS} connections: ${(batch.ms / 1000).toFixed(2)} s, p50 ${p50.toFixed(1)} ms, max ${pct(batch.latencies, 100).toFixed(0)} ms; ${split}; ${share}; ${windowsText(warm, P3_WINDOW)}; inbox ${rows} rows, ${acked} acked${notStored ? `; not stored: ${notStored}` : ''}`,
    value: `${Math.round(rate)}/s; p99 ${p99.toFixed(1)} ms; ${lost} lost`,
    target: '>= 10,000/s; p99 <= 25 ms; 0 lost',
    pass:
      rate >= 10_000 &&
      p99 <= 25 &&
      lost === 0 &&
      batch.stored.size === P3_N &&
      warm.stored === warmTotal &&
      warmIds === warmTotal &&
      rows === acked,
  };
}

/** Waits until every stored callback is processed and every run has ended. */
async function drained(url: string, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const s = (await getJson(`${url}/status`)) as {
      inboxBacklog: number;
      runs: { running: number; queued: number };
    };
    if (s.inboxBacklog === 0 && s.runs.running === 0 && s.runs.queued === 0) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return false;
}

async function p4(emu: EmulatorProcess, dir: string): Promise<BenchRow> {
  const account = emu.defaults.accounts[0] as string;
  const warmTotal = P4_WARM_WINDOWS * P4_WINDOW;
  // Distinct active IMEI devices, one per callback: no device lock is contended, every suspension applies.
  const client = createClient({
    baseUrl: emu.baseUrl,
    clientId: emu.defaults.clientId,
    clientSecret: emu.defaults.clientSecret,
    username: emu.defaults.username,
    password: emu.defaults.password,
    rates: { m2m: { requestsPerSecond: 100_000, concurrency: 8 } },
  });
  const imeis: string[] = [];
  try {
    for await (const page of client.pages('devices.list', {
      accountName: account,
      currentState: 'active',
    })) {
      for (const d of (page as { devices?: { deviceIds: { id: string; kind: string }[] }[] }).devices ?? []) {
        const imei = d.deviceIds.find((x) => x.kind.toLowerCase() === 'imei');
        if (imei) imeis.push(imei.id);
      }
    }
  } finally {
    await client.close();
  }
  if (imeis.length < warmTotal + P4_M) throw new Error(`P4: only ${imeis.length} active IMEI devices`);
  const state = join(dir, 'p4.db');
  // The listener registers for the account's CarrierService messages: each run's suspend is confirmed by its
  // device's callback.
  const daemon = await startDaemon(emu, join(FIXTURES, 'p4'), state, {
    FLEETBOOK_CALLBACK_ACCOUNTS: account,
  });
  const poster = new Poster(daemon.url, CONNECTIONS);
  const make = (prefix: string, from: number, n: number) =>
    Array.from({ length: n }, (_, i) => {
      const id = `${prefix}-${i}`;
      return {
        id,
        request: callbackRequest(
          daemon.url,
          callback(id, 'overuse-bench', account, imeis[from + i] as string),
        ),
      };
    });
  let warm: WarmUp;
  let batch: Batch;
  let ms: number;
  let done: boolean;
  let split: string;
  let share: string;
  let runs: Map<string, number>;
  let calls: Map<string, number>;
  let outcomes: Map<string, number>;
  try {
    warm = await warmUp(
      poster,
      daemon,
      P4_WARM_WINDOWS,
      (w) => make(`p4-warm${w}`, w * P4_WINDOW, P4_WINDOW),
      async () => {
        if (!(await drained(daemon.url, 30_000))) throw new Error('P4: the warm-up runs did not end');
      },
    );
    const posts = make('p4', warmTotal, P4_M);
    const cpu0 = cpuOf(daemon, emu);
    const thread0 = mainThread(daemon.proc.pid);
    const began = performance.now();
    batch = await post(poster, posts);
    done = await drained(daemon.url, 30_000);
    ms = performance.now() - began;
    split = cpuSplit(cpu0, cpuOf(daemon, emu), P4_M);
    share = threadShare(daemon.proc.pid, thread0, ms);
    runs = await metric(daemon.url, 'fleetbook_runs_total');
    calls = await metric(daemon.url, 'fleetbook_api_calls_total');
    outcomes = await metric(daemon.url, 'fleetbook_device_outcomes_total');
  } finally {
    poster.close();
    await stop(daemon);
  }
  const db = new Database(state, { readonly: true });
  const byStatus = new Map(
    (
      db.prepare('SELECT status, count(*) AS n FROM runs GROUP BY status').all() as {
        status: string;
        n: number;
      }[]
    ).map((r) => [r.status, r.n]),
  );
  db.close();
  const total = warmTotal + P4_M;
  const succeeded = runs.get('{playbook="bench-p4-suspend",status="succeeded"}') ?? 0;
  const endedOther = [...runs]
    .filter(([k]) => !k.includes('status="succeeded"'))
    .reduce((a, [, n]) => a + n, 0);
  const suspends = [...calls]
    .filter(([k]) => k.includes('action="devices.suspend"'))
    .reduce((a, [, n]) => a + n, 0);
  const statusCalls = [...calls]
    .filter(([k]) => k.includes('action="requests.status"'))
    .reduce((a, [, n]) => a + n, 0);
  const confirmed = outcomes.get('{playbook="bench-p4-suspend",outcome="succeeded"}') ?? 0;
  const rate = (P4_M / ms) * 1000;
  const notStored = others(new Map([...warm.other, ...batch.other]));
  return {
    id: 'P4',
    measure: `${P4_M} callbacks each starting a run of one devices.suspend (after ${warmTotal} warm-up): ${(ms / 1000).toFixed(2)} s from the first post to the last run's end (posting ${(batch.ms / 1000).toFixed(2)} s, ack p99 ${pct(batch.latencies, 99).toFixed(0)} ms); ${split}; ${share}; ${windowsText(warm, P4_WINDOW)}; runs ${[...byStatus].map(([s, n]) => `${n} ${s}`).join(', ')}; ${suspends} suspend calls, ${confirmed} devices confirmed succeeded, ${statusCalls} request-status calls (the rest by callback)${notStored ? `; not stored: ${notStored}` : ''}${done ? '' : '; TIMED OUT'}`,
    value: `${Math.round(rate)} runs/s`,
    target: '>= 2,500 runs/s',
    pass:
      done &&
      rate >= 2_500 &&
      succeeded === total &&
      endedOther === 0 &&
      byStatus.get('succeeded') === total &&
      byStatus.size === 1 &&
      suspends === total &&
      confirmed === total,
  };
}

export async function benchDaemon(): Promise<BenchRow[]> {
  const dir = await mkdtemp(join(tmpdir(), 'fleetbook-p3p4-'));
  const emu = await startEmulatorProcess({ timeScale: 0, accounts: 1, devicesPerAccount: DEVICES, seed: 7 });
  try {
    return [await p3(emu, dir), await p4(emu, dir)];
  } finally {
    await emu.close();
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const row of await benchDaemon()) console.log(row);
}
