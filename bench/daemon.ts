/**
 * P3 and P4: the daemon (`fleetbook serve`, the built CLI in its own process) against an emulator in this
 * process, fed DeviceUsage callbacks by an undici Pool (64 connections, pipelining 1, each connection sending
 * its next callback when the last is answered).
 *
 * P3: callbacks acknowledged durably. The playbooks (bench/fixtures/daemon/p3) match none of them, so the
 * figure is the listener, the fsync'd group commit and the matcher marking each event processed. After the
 * batch the daemon is killed (SIGKILL: no shutdown code runs after the last answer) and the inbox table is
 * read: every acknowledged requestId is there, once.
 * P4: callback-triggered runs end to end. Each callback names its own active device, and the one playbook
 * (bench/fixtures/daemon/p4) suspends it: one API call a run. Timed from the first post until every run has
 * ended; every run must have succeeded, with one `devices.suspend` call each.
 *
 * Each phase is preceded by a short warm-up batch (not timed, checked like the rest). Beside each figure: the
 * daemon's CPU time per item (every thread, from /proc), and how its event loop spent the timed wall time: on
 * a CPU, runnable but waiting for a core (other processes had both: the figure is then the machine's, not
 * fleetbook's), or blocked (idle, or in a synchronous fsync).
 *
 * `FLEETBOOK_BENCH_PROF=<dir>` runs the daemons with `--cpu-prof --cpu-prof-dir <dir>`; each writes its profile
 * when it stops (P3's daemon is then stopped with SIGTERM instead of killed).
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Pool, request } from 'undici';
import { createClient } from '../src/api/client.js';
import { startEmulator, type Emulator } from '../src/emulator/index.js';
import type { BenchRow } from './types.js';
import { freePort } from './net.js';
import { emulatorEnv } from '../test/helpers/cli.js';
import { DaemonProcess } from '../test/helpers/daemon.js';

const FIXTURES = join(import.meta.dirname, 'fixtures', 'daemon');
const CONNECTIONS = 64;
const P3_WARMUP = 2_000;
const P3_N = 20_000;
const P4_WARMUP = 500;
const P4_M = 5_000;
const CB_USER = 'bench-listener';
const CB_PASS = 'bench-listener-password';

/** The daemon on the emulator, with the local machine as its budget. */
async function startDaemon(
  emu: Emulator,
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

/** Posts every body, CONNECTIONS at a time; the time is from the first post to the last answer. */
async function post(pool: Pool, bodies: { id: string; body: string }[]): Promise<Batch> {
  const latencies = new Float64Array(bodies.length);
  const stored = new Set<string>();
  const other = new Map<string, number>();
  let next = 0;
  const headers = { 'content-type': 'application/json' };
  const worker = async () => {
    for (let i = next++; i < bodies.length; i = next++) {
      const b = bodies[i] as { id: string; body: string };
      const t0 = performance.now();
      try {
        const res = await pool.request({
          method: 'POST',
          path: '/callbacks/DeviceUsage',
          headers,
          body: b.body,
        });
        const text = await res.body.text();
        latencies[i] = performance.now() - t0;
        if (res.statusCode === 200 && text.includes('"stored"')) stored.add(b.id);
        else other.set(`${res.statusCode} ${text}`, (other.get(`${res.statusCode} ${text}`) ?? 0) + 1);
      } catch (e) {
        latencies[i] = performance.now() - t0;
        other.set(`network ${(e as Error).message}`, (other.get(`network ${(e as Error).message}`) ?? 0) + 1);
      }
    }
  };
  const began = performance.now();
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  const ms = performance.now() - began;
  latencies.sort();
  return { ms, latencies, stored, other };
}

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

async function p3(emu: Emulator, dir: string): Promise<BenchRow> {
  const account = emu.defaults.accounts[0] as string;
  const state = join(dir, 'p3.db');
  const daemon = await startDaemon(emu, join(FIXTURES, 'p3'), state);
  const pool = new Pool(daemon.url, { connections: CONNECTIONS, pipelining: 1 });
  const make = (prefix: string, n: number) =>
    Array.from({ length: n }, (_, i) => {
      const id = `${prefix}-${i}`;
      return { id, body: callback(id, 'bench-p3', account, String(350000000000000 + i)) };
    });
  let warm: Batch;
  let batch: Batch;
  let cpu: number;
  let share: string;
  try {
    warm = await post(pool, make('p3-warm', P3_WARMUP));
    const cpu0 = cpuMs(daemon.proc.pid);
    const thread0 = mainThread(daemon.proc.pid);
    batch = await post(pool, make('p3', P3_N));
    cpu = cpuMs(daemon.proc.pid) - cpu0;
    share = threadShare(daemon.proc.pid, thread0, batch.ms);
  } finally {
    // Killed, not stopped: what was acknowledged must already be on disk, with nothing run after it (a
    // profiled daemon is stopped, so that it writes its profile).
    await stop(daemon, process.env.FLEETBOOK_BENCH_PROF ? 'SIGTERM' : 'SIGKILL');
    await pool.close();
  }
  // What the daemon left on disk (the WAL included): every acknowledged requestId, once.
  const db = new Database(state, { readonly: true });
  const ids = new Set(
    (db.prepare('SELECT request_id FROM inbox').all() as { request_id: string }[]).map((r) => r.request_id),
  );
  const rows = (db.prepare('SELECT count(*) AS n FROM inbox').get() as { n: number }).n;
  db.close();
  let lost = 0;
  for (const set of [warm.stored, batch.stored]) for (const id of set) if (!ids.has(id)) lost++;
  const acked = warm.stored.size + batch.stored.size;
  const rate = (batch.stored.size / batch.ms) * 1000;
  const p50 = pct(batch.latencies, 50);
  const p99 = pct(batch.latencies, 99);
  const notStored = others(new Map([...warm.other, ...batch.other]));
  return {
    id: 'P3',
    measure: `${P3_N} callbacks acknowledged (after ${P3_WARMUP} warm-up), ${CONNECTIONS} connections: ${(batch.ms / 1000).toFixed(2)} s, p50 ${p50.toFixed(1)} ms, max ${pct(batch.latencies, 100).toFixed(0)} ms; daemon CPU ${((cpu / batch.stored.size) * 1000).toFixed(0)} us/callback, ${share}; inbox ${rows} rows, ${acked} acked${notStored ? `; not stored: ${notStored}` : ''}`,
    value: `${Math.round(rate)}/s; p99 ${p99.toFixed(1)} ms; ${lost} lost`,
    target: '>= 5,000/s; p99 <= 50 ms; 0 lost',
    pass:
      rate >= 5000 &&
      p99 <= 50 &&
      lost === 0 &&
      batch.stored.size === P3_N &&
      warm.stored.size === P3_WARMUP &&
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

async function p4(emu: Emulator, dir: string): Promise<BenchRow> {
  const account = emu.defaults.accounts[0] as string;
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
  if (imeis.length < P4_WARMUP + P4_M) throw new Error(`P4: only ${imeis.length} active IMEI devices`);
  const state = join(dir, 'p4.db');
  // The listener registers for the account's CarrierService messages: each run's suspend is confirmed by its
  // device's callback.
  const daemon = await startDaemon(emu, join(FIXTURES, 'p4'), state, {
    FLEETBOOK_CALLBACK_ACCOUNTS: account,
  });
  const pool = new Pool(daemon.url, { connections: CONNECTIONS, pipelining: 1 });
  const make = (prefix: string, from: number, n: number) =>
    Array.from({ length: n }, (_, i) => {
      const id = `${prefix}-${i}`;
      return { id, body: callback(id, 'overuse-bench', account, imeis[from + i] as string) };
    });
  let warm: Batch;
  let batch: Batch;
  let ms: number;
  let done: boolean;
  let cpu: number;
  let selfCpu: number;
  let share: string;
  let runs: Map<string, number>;
  let calls: Map<string, number>;
  let outcomes: Map<string, number>;
  try {
    warm = await post(pool, make('p4-warm', 0, P4_WARMUP));
    if (!(await drained(daemon.url, 30_000))) throw new Error('P4: the warm-up runs did not end');
    const cpu0 = cpuMs(daemon.proc.pid);
    const thread0 = mainThread(daemon.proc.pid);
    const self0 = process.cpuUsage();
    const began = performance.now();
    batch = await post(pool, make('p4', P4_WARMUP, P4_M));
    done = await drained(daemon.url, 30_000);
    ms = performance.now() - began;
    cpu = cpuMs(daemon.proc.pid) - cpu0;
    share = threadShare(daemon.proc.pid, thread0, ms);
    const self = process.cpuUsage(self0);
    selfCpu = (self.user + self.system) / 1000;
    runs = await metric(daemon.url, 'fleetbook_runs_total');
    calls = await metric(daemon.url, 'fleetbook_api_calls_total');
    outcomes = await metric(daemon.url, 'fleetbook_device_outcomes_total');
  } finally {
    await pool.close();
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
  const total = P4_WARMUP + P4_M;
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
    measure: `${P4_M} callbacks each starting a run of one devices.suspend (after ${P4_WARMUP} warm-up): ${(ms / 1000).toFixed(2)} s from the first post to the last run's end (posting ${(batch.ms / 1000).toFixed(2)} s, ack p99 ${pct(batch.latencies, 99).toFixed(0)} ms); daemon CPU ${(cpu / P4_M).toFixed(2)} ms/run, ${share}; emulator and poster CPU ${((selfCpu / ms) * 100).toFixed(0)} % of a core; runs ${[...byStatus].map(([s, n]) => `${n} ${s}`).join(', ')}; ${suspends} suspend calls, ${confirmed} devices confirmed succeeded, ${statusCalls} request-status calls (the rest by callback)${notStored ? `; not stored: ${notStored}` : ''}${done ? '' : '; TIMED OUT'}`,
    value: `${Math.round(rate)} runs/s`,
    target: '>= 1,000 runs/s',
    pass:
      done &&
      rate >= 1000 &&
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
  const emu = await startEmulator({ timeScale: 0, accounts: 1, devicesPerAccount: 8_000, seed: 7 });
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
