/**
 * `fleetbook serve` in a child process, as an operator runs it: the built binary (dist/ must be built; `npm
 * test` and `npm run bench` build it first), its output kept, started once it says where it listens, stopped
 * by a signal with the time the exit took. The daemon tests and the daemon benchmarks all start it here.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import type { RunSummary } from '../../src/store/store.js';
import { BIN, emulatorEnv } from './cli.js';
import { tempDir } from './temp.js';

type Json = Record<string, unknown>;

export interface DaemonOptions {
  playbooks: string;
  /** The SQLite file. */
  state: string;
  /** 0 or absent: any free port. */
  port?: number;
  /** The address it listens on. @default 127.0.0.1 (requests still go to 127.0.0.1: `url` says so) */
  host?: string;
  /** The whole environment of the child, but for PATH. */
  env: Record<string, string | undefined>;
  /** Options for node itself, e.g. `--cpu-prof`. */
  nodeArgs?: string[];
  /** How long it may take to start. @default 30000 */
  startTimeoutMs?: number;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export class DaemonProcess {
  /** Every daemon started in this process, whether it came up or not (a secrets check reads them all). */
  static readonly all: DaemonProcess[] = [];

  /** Its base URL, from the line `serve` prints once everything has started. */
  url = '';
  private out = '';
  private err = '';
  readonly exited: Promise<Exit>;

  private constructor(
    readonly name: string,
    readonly proc: ChildProcess,
  ) {
    proc.stdout?.setEncoding('utf8').on('data', (s: string) => (this.out += s));
    proc.stderr?.setEncoding('utf8').on('data', (s: string) => (this.err += s));
    this.exited = new Promise((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })));
    DaemonProcess.all.push(this);
  }

  /**
   * Starts `fleetbook serve` and resolves once it is fully started: after the registrations and the scheduler,
   * `serve` prints `fleetbook serve: listening on URL`.
   */
  static async start(name: string, o: DaemonOptions): Promise<DaemonProcess> {
    const d = DaemonProcess.spawn(name, o);
    let exit: Exit | undefined;
    void d.exited.then((e) => (exit = e));
    const deadline = Date.now() + (o.startTimeoutMs ?? 30_000);
    for (;;) {
      const m = /fleetbook serve: listening on (http:\/\/\S+)/.exec(d.err);
      if (m) {
        d.url = (m[1] as string).replace('//0.0.0.0:', '//127.0.0.1:');
        return d;
      }
      if (exit)
        throw new Error(
          `${name} exited (${exit.signal ?? String(exit.code)}) before starting:\n${d.err.slice(-4000)}`,
        );
      if (Date.now() > deadline) {
        await d.kill();
        throw new Error(`${name} did not start:\n${d.err.slice(-4000)}`);
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /**
   * Starts `fleetbook serve` and returns at once, before it listens: for what happens during its start (its
   * output is kept as it comes; `url` is set by `start` only).
   */
  static spawn(name: string, o: DaemonOptions): DaemonProcess {
    const args = [
      ...(o.nodeArgs ?? []),
      BIN,
      'serve',
      '--playbooks',
      o.playbooks,
      '--listen',
      `${o.host ?? '127.0.0.1'}:${o.port ?? 0}`,
      '--state',
      o.state,
    ];
    const proc = spawn(process.execPath, args, {
      env: { PATH: process.env.PATH ?? '', ...o.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return new DaemonProcess(name, proc);
  }

  /** GET `path` of the daemon, which must answer 200 (else the body says why): its JSON. */
  async getJson<T>(path: string): Promise<T> {
    const res = await fetch(`${this.url}${path}`);
    const text = await res.text();
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${text.slice(0, 500)}`);
    return JSON.parse(text) as T;
  }

  /** Starts a manual run of `playbook` (POST /playbooks/{name}/runs with `inputs`, as the bearer of `token`): its id. */
  async startRun(playbook: string, token: string, inputs: Json = {}): Promise<string> {
    const res = await fetch(`${this.url}/playbooks/${playbook}/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ inputs }),
    });
    const text = await res.text();
    if (res.status !== 202)
      throw new Error(`POST /playbooks/${playbook}/runs: ${res.status} ${text.slice(0, 500)}`);
    return (JSON.parse(text) as { runId: string }).runId;
  }

  /** Starts a manual run of `playbook` as startRun does, and answers its summary once it has ended. */
  async manualRun(playbook: string, token: string, inputs: Json = {}): Promise<RunSummary> {
    const runId = await this.startRun(playbook, token, inputs);
    return untilDaemons([this], `run ${runId} of ${playbook} to end`, async () => {
      const s = await this.getJson<RunSummary>(`/runs/${runId}`);
      return s.status === 'queued' || s.status === 'running' ? undefined : s;
    });
  }

  get stdout(): string {
    return this.out;
  }

  get stderr(): string {
    return this.err;
  }

  /** The JSON log lines of stderr. */
  logs(): Json[] {
    const out: Json[] = [];
    for (const line of this.err.split('\n')) {
      if (!line.startsWith('{')) continue;
      try {
        out.push(JSON.parse(line) as Json);
      } catch {
        // A line being written right now.
      }
    }
    return out;
  }

  /** Sends `signal` and waits for the exit; how long it took. A process that does not exit is killed. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 30_000): Promise<Exit & { ms: number }> {
    const began = Date.now();
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill(signal);
    let timer: NodeJS.Timeout | undefined;
    const result = await Promise.race([
      this.exited,
      new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), timeoutMs))),
    ]);
    clearTimeout(timer);
    if (!result) {
      this.proc.kill('SIGKILL');
      throw new Error(`${this.name} did not exit within ${timeoutMs} ms of ${signal}`);
    }
    return { ...result, ms: Date.now() - began };
  }

  /** Ends the process if it is still running (SIGKILL). */
  async kill(): Promise<void> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    this.proc.kill('SIGKILL');
    await this.exited;
  }
}

/**
 * What a daemon test starts its daemons in: an emulator of this process (its clock still), a temporary
 * directory for state files, and the listener credentials the daemons register with. `close` stops the daemons
 * started here, the emulator, and removes the directory.
 */
export class DaemonWorld {
  private readonly daemons: DaemonProcess[] = [];

  private constructor(
    readonly emu: Emulator,
    readonly dir: string,
    private readonly creds: { user: string; password: string },
  ) {}

  static async create(prefix: string, creds: { user: string; password: string }): Promise<DaemonWorld> {
    const dir = tempDir(`fleetbook-${prefix}-`);
    return new DaemonWorld(await startEmulator({ port: 0, timeScale: 0 }), dir, creds);
  }

  /** A state file in the directory. */
  state(name = 'state.db'): string {
    return join(this.dir, name);
  }

  /** The environment of a daemon on the emulator, with the listener credentials, and `extra`. */
  env(extra: Record<string, string> = {}): Record<string, string> {
    return {
      ...emulatorEnv(this.emu),
      FLEETBOOK_CALLBACK_USERNAME: this.creds.user,
      FLEETBOOK_CALLBACK_PASSWORD: this.creds.password,
      ...extra,
    };
  }

  /** Starts `fleetbook serve` on `playbooks` and a state file of the directory (default `state.db`). */
  async start(
    name: string,
    playbooks: string,
    o: { state?: string; env?: Record<string, string> } = {},
  ): Promise<DaemonProcess> {
    const d = await DaemonProcess.start(name, {
      playbooks,
      state: o.state ?? this.state(),
      env: this.env(o.env),
    });
    this.daemons.push(d);
    return d;
  }

  async close(): Promise<void> {
    for (const d of this.daemons) await d.kill();
    await this.emu.close();
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** A state file read once, read-only, as an operator's sqlite3 would read it while the daemon writes. */
export function readState<T>(file: string, read: (db: Database.Database) => T): T {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

/** The runs of `playbook` in a state file, each with the requestId of the callback that started it, if any. */
export function runsIn(file: string, playbook: string): { id: string; status: string; requestId?: string }[] {
  return readState(file, (db) =>
    (
      db.prepare('SELECT id, status, trigger_json FROM runs WHERE playbook = ?').all(playbook) as {
        id: string;
        status: string;
        trigger_json: string | null;
      }[]
    ).map((r) => {
      const requestId = (JSON.parse(r.trigger_json ?? '{}') as { requestId?: string }).requestId;
      return { id: r.id, status: r.status, ...(requestId !== undefined ? { requestId } : {}) };
    }),
  );
}

/** Callback events stored in a state file and not yet processed. */
export function pendingEvents(file: string): number {
  return readState(
    file,
    (db) =>
      (db.prepare('SELECT count(*) AS n FROM inbox WHERE processed_at IS NULL').get() as { n: number }).n,
  );
}

/** The requestIds of every callback stored in a state file's inbox, processed or not. */
export function inboxRequestIds(file: string): string[] {
  return readState(file, (db) =>
    (db.prepare('SELECT request_id FROM inbox').all() as { request_id: string }[]).map((r) => r.request_id),
  );
}

/**
 * Polls `check` every 10 ms until it answers something, or throws after `ms` naming `what`, with the last words
 * of each daemon's stderr (why a replica did not do it).
 */
export async function untilDaemons<T>(
  daemons: readonly DaemonProcess[],
  what: string,
  check: () => Promise<T | undefined>,
  ms = 30_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = await check();
    if (found !== undefined) return found;
    if (Date.now() > deadline)
      throw new Error(
        `timed out waiting for ${what}\n${daemons.map((d) => d.stderr.slice(-2000)).join('\n')}`,
      );
    await new Promise((r) => setTimeout(r, 10));
  }
}
