/**
 * The processes of the daemon benchmarks (P3, P4 and their PostgreSQL rows, P6-PG3), and what each costs: the
 * emulator in a process of its own (bench/children/emulator.mjs), `fleetbook serve` replicas on one state, and
 * the CPU time of each (every thread, from /proc: Linux), the PostgreSQL server's included.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import type { Emulator, EmulatorOptions } from '../src/emulator/index.js';
import { freePort } from './net.js';
import { emulatorEnv } from '../test/helpers/cli.js';
import { DaemonProcess } from '../test/helpers/daemon.js';

export const CB_USER = 'bench-listener';
export const CB_PASS = 'bench-listener-password';

/**
 * An API request the emulator received: when it read it and the earliest it can have come (ms, its clock), its
 * area (`m2m`), and the status answered.
 */
export interface Arrival {
  at: number;
  since: number;
  area: string;
  status: number;
}

/** The emulator in its own process: its CPU time is read apart from this process's (the load generator's). */
export interface EmulatorProcess extends Pick<Emulator, 'baseUrl' | 'defaults'> {
  proc: ChildProcess;
  /** The API requests received since the last call (only when started with `stamp: true`). */
  arrivals(): Promise<Arrival[]>;
  close(): Promise<void>;
}

/** `options` are the emulator's, and `stamp: true` to keep each API request's arrival. */
export async function startEmulatorProcess(
  options: EmulatorOptions & { stamp?: boolean },
): Promise<EmulatorProcess> {
  const prof = process.env.FLEETBOOK_BENCH_PROF;
  const proc = fork(join(import.meta.dirname, 'children', 'emulator.mjs'), [JSON.stringify(options)], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    ...(prof
      ? { execArgv: ['--cpu-prof', '--cpu-prof-dir', prof, '--cpu-prof-name', 'emulator.cpuprofile'] }
      : {}),
  });
  const started = await new Promise<Pick<Emulator, 'baseUrl' | 'defaults'>>((resolve, reject) => {
    proc.once('message', (m) => resolve(m as Pick<Emulator, 'baseUrl' | 'defaults'>));
    proc.once('exit', (code) => reject(new Error(`the emulator exited with ${String(code)}`)));
  });
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  return {
    ...started,
    proc,
    arrivals: () =>
      new Promise((resolve) => {
        proc.once('message', (m) => resolve(m as Arrival[]));
        proc.send('arrivals');
      }),
    close: async () => {
      proc.disconnect();
      await exited;
    },
  };
}

/** `replicas` daemons on the emulator and one state (a SQLite file: one), with the local machine as budget. */
export async function startDaemons(
  emu: EmulatorProcess,
  playbooks: string,
  state: string,
  replicas: number,
  extra: Record<string, string> = {},
): Promise<DaemonProcess[]> {
  const prof = process.env.FLEETBOOK_BENCH_PROF;
  const out: DaemonProcess[] = [];
  try {
    // One after the other: the first applies the schema migrations.
    for (let i = 0; i < replicas; i++)
      out.push(
        await DaemonProcess.start(`bench daemon ${i + 1}`, {
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
        }),
      );
  } catch (e) {
    await Promise.all(out.map((d) => d.kill()));
    throw e;
  }
  return out;
}

/** SIGTERM (a clean stop: exit code 0 required) or SIGKILL (nothing runs after the last answer), of each. */
export async function stopDaemons(
  daemons: DaemonProcess[],
  signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM',
): Promise<void> {
  const exits = await Promise.all(daemons.map((d) => d.stop(signal)));
  const bad = exits.findIndex((e) => signal === 'SIGTERM' && e.code !== 0);
  if (bad >= 0)
    throw new Error(
      `the daemon exited with ${String(exits[bad]?.code)}:\n${daemons[bad]?.stderr.slice(-3000) ?? ''}`,
    );
}

/** /proc/<pid>/stat's fields after the command name: [2] is the parent's pid, [11..14] utime stime cutime cstime. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

const TICK_MS = 1000 / 100; // USER_HZ

/** User + system CPU time of a process (every thread) so far, in ms; with `reaped`, its ended children's too. */
export function cpuMs(pid: number | undefined, reaped = false): number {
  const f = pid === undefined ? undefined : statFields(pid);
  if (!f) return NaN;
  const n = (i: number) => Number(f[i]);
  return (n(11) + n(12) + (reaped ? n(13) + n(14) : 0)) * TICK_MS;
}

/**
 * The CPU time so far, in ms, of a PostgreSQL server: its postmaster and every process it started (backends,
 * WAL writer, checkpointer...), the live ones read from /proc and the ended ones as the postmaster's reaped
 * children. NaN for a server that is not a process of this machine.
 */
export function serverCpuMs(postmaster: number | undefined): number {
  if (postmaster === undefined) return NaN;
  let ms = cpuMs(postmaster, true);
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const f = statFields(Number(name));
    if (f && Number(f[1]) === postmaster) ms += cpuMs(Number(name), true);
  }
  return ms;
}

/**
 * The PostgreSQL server at `url`: the pid of its postmaster (the parent of a backend), if it runs on this
 * machine, and `PostgreSQL 15.8 (fsync on)`.
 */
export async function describePostgres(url: string): Promise<{ postmaster?: number; label: string }> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number; version: string; fsync: string }>(
      "SELECT pg_backend_pid() AS pid, current_setting('server_version') AS version, current_setting('fsync') AS fsync",
    );
    const r = rows[0] as { pid: number; version: string; fsync: string };
    const parent = Number(statFields(r.pid)?.[1]);
    const label = `PostgreSQL ${r.version.split(' ')[0] ?? ''} (fsync ${r.fsync})`;
    return Number.isInteger(parent) && parent > 1 ? { postmaster: parent, label } : { label };
  } finally {
    await client.end();
  }
}

/** What the CPU of a measured window is read from: the daemons, the emulator, the database server, if any. */
export interface Measured {
  daemons: DaemonProcess[];
  emu: EmulatorProcess;
  postmaster?: number | undefined;
}

export interface CpuSnapshot {
  daemons: number[];
  emulator: number;
  database: number;
  load: number;
}

/** CPU time so far, in ms, of each daemon, the emulator, the database server and the load generator (this process). */
export function cpuOf(m: Measured): CpuSnapshot {
  return {
    daemons: m.daemons.map((d) => cpuMs(d.proc.pid)),
    emulator: cpuMs(m.emu.proc.pid),
    database: serverCpuMs(m.postmaster),
    load: cpuMs(process.pid),
  };
}

/**
 * The CPU time per item since `before`, in us, of each process: `daemon 130, emulator 2, load generator 40`;
 * with several daemons, their sum and each; with a database server, its own.
 */
export function cpuSplit(before: CpuSnapshot, now: CpuSnapshot, items: number): string {
  const us = (ms: number) => ((ms / items) * 1000).toFixed(0);
  const each = now.daemons.map((ms, i) => ms - (before.daemons[i] as number));
  const daemons =
    each.length > 1
      ? `daemons ${us(each.reduce((a, b) => a + b, 0))} (${each.map(us).join(' + ')})`
      : `daemon ${us(each[0] as number)}`;
  const db = Number.isNaN(before.database) ? '' : `, database ${us(now.database - before.database)}`;
  return `CPU us per item: ${daemons}${db}, emulator ${us(now.emulator - before.emulator)}, load generator ${us(now.load - before.load)}`;
}

/**
 * A daemon's main thread (its event loop) so far, from /proc: ms on a CPU and ms runnable but waiting for one
 * (other processes had the cores). Wall time minus both is time blocked: idle, or in a synchronous syscall such
 * as an fsync.
 */
export function mainThread(pid: number | undefined): { cpu: number; waited: number } {
  try {
    const [cpu, waited] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ').map(Number);
    return { cpu: (cpu as number) / 1e6, waited: (waited as number) / 1e6 };
  } catch {
    return { cpu: NaN, waited: NaN };
  }
}

/** The main threads of every daemon. */
export const mainThreads = (daemons: DaemonProcess[]) => daemons.map((d) => mainThread(d.proc.pid));

/**
 * Share of `ms` the daemons' main threads spent on a CPU, waiting for one, and blocked, since `before`: for
 * several daemons, each, separated by `/`.
 */
export function threadShare(
  daemons: DaemonProcess[],
  before: { cpu: number; waited: number }[],
  ms: number,
): string {
  const shares = daemons.map((d, i) => {
    const now = mainThread(d.proc.pid);
    const b = before[i] as { cpu: number; waited: number };
    const on = ((now.cpu - b.cpu) / ms) * 100;
    const waited = ((now.waited - b.waited) / ms) * 100;
    return [on, waited, 100 - on - waited];
  });
  const col = (k: number) => shares.map((s) => (s[k] as number).toFixed(0)).join('/');
  const who = daemons.length > 1 ? 'event loops of the daemons' : 'daemon event loop';
  return `${who} on CPU ${col(0)} %, runnable but waiting for a core ${col(1)} %, blocked or idle ${col(2)} %`;
}
