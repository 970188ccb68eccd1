/** The built `fleetbook` binary in a child process, as a user runs it. `npm test` builds dist/ first. */
import { execFile, spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Emulator } from '../../src/emulator/index.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { RunRecord } from '../../src/store/store.js';
import { tempDir } from './temp.js';

export const BIN = join(import.meta.dirname, '..', '..', 'bin', 'fleetbook.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * A state file of this test process, for the commands run in its working directory (the repository's) that name
 * none: `call` and `run` on the service open the default `./.fleetbook/state.db`, which a test must not write
 * in the repository.
 */
const STATE = join(tempDir('fleetbook-cli-'), 'state.db');

/**
 * Runs `fleetbook ...args` with only PATH and `env`: nothing from the caller's environment leaks in.
 * `nodeArgs` go to node before the binary. Without `cwd` nor FLEETBOOK_STATE, the state file is this process's.
 */
export function fleetbook(
  args: string[],
  env: Record<string, string>,
  nodeArgs: string[] = [],
  /** The working directory. @default the test process's */
  cwd?: string,
  timeoutMs = 30_000,
): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...nodeArgs, BIN, ...args],
      {
        env: { PATH: process.env.PATH ?? '', ...(cwd ? {} : { FLEETBOOK_STATE: STATE }), ...env },
        timeout: timeoutMs,
        ...(cwd ? { cwd } : {}),
      },
      (err, stdout, stderr) => {
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

/** A SQLite state file a test writes, for the CLI or a daemon to read. */
export interface StateFile {
  /** The temporary folder the file is in, removed with it. */
  dir: string;
  file: string;
  /** FLEETBOOK_STATE naming the file, for `fleetbook`'s environment: one object, its value set once made. */
  env: { FLEETBOOK_STATE: string };
  /** The file opened in a SqliteStore for `use` (to write more, or read), closed once it is done: what it gives. */
  withStore<T>(use: (store: SqliteStore) => T | Promise<T>): Promise<T>;
}

/**
 * A state file in a temporary folder of its own for the tests of the describe block that calls this, written by
 * `write` through a SqliteStore closed before they read it: made before the block's tests and removed after
 * them, or with `each`, made afresh before each test and removed after it. `dir` and `file` are there once the
 * block's `before` (`beforeEach`) hooks run; `env` and `withStore` may be taken at once.
 */
export function stateFile(write?: (store: SqliteStore) => unknown, o: { each?: boolean } = {}): StateFile {
  const state = {
    env: { FLEETBOOK_STATE: '' },
    async withStore<T>(use: (store: SqliteStore) => T | Promise<T>): Promise<T> {
      const store = new SqliteStore(state.file);
      try {
        return await use(store);
      } finally {
        await store.close();
      }
    },
  } as StateFile;
  (o.each ? beforeEach : before)(async () => {
    state.dir = tempDir('fleetbook-state-');
    state.env.FLEETBOOK_STATE = state.file = join(state.dir, 'state.db');
    if (write) await state.withStore(write);
  });
  (o.each ? afterEach : after)(async () => {
    if (state.dir) await rm(state.dir, { recursive: true, force: true });
  });
  return state;
}

/**
 * Writes to `store` the run `id` of `playbook`, started at `startedAt`, left `running` by a `fleetbook run` that is
 * gone: its owner (`gone-` and the run's id) of another host, its lease expired a minute ago. No live process
 * holds the run: `fleetbook runs cancel` ends it.
 */
export async function runOfGoneProcess(
  store: SqliteStore,
  o: { id: string; playbook: string; startedAt: string },
): Promise<void> {
  const owner = `gone-${o.id}`;
  await store.registerOwner(
    { id: owner, role: 'run', pid: 999_999, host: 'elsewhere', boot: '', startedAt: o.startedAt },
    Date.now() - 60_000,
    15_000,
    false,
  );
  store.createRun({
    ...o,
    owner,
    status: 'running',
    trigger: { type: 'manual' },
    inputs: {},
  } satisfies RunRecord);
}

/** The banner `fleetbook emulator ARGS` prints as it starts (on any free port), once whole; the emulator stopped. */
export async function emulatorBanner(args: string[]): Promise<string> {
  const child = spawn(process.execPath, [BIN, 'emulator', '--port', '0', ...args], {
    env: { PATH: process.env.PATH ?? '' },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let out = '';
  try {
    return await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no whole banner within 20 s; printed: ${out}`)),
        20_000,
      );
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        if (!out.includes('\n  simulated clock')) return;
        clearTimeout(timer);
        resolve(out);
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`fleetbook emulator exited ${code} before its banner: ${out}`));
      });
    });
  } finally {
    child.kill();
  }
}

/** The variables that point the CLI (run, call, serve) at an emulator, with its default credentials. */
export function emulatorEnv(emu: Pick<Emulator, 'baseUrl' | 'defaults'>): Record<string, string> {
  return {
    FLEETBOOK_API_URL: emu.baseUrl,
    FLEETBOOK_CLIENT_ID: emu.defaults.clientId,
    FLEETBOOK_CLIENT_SECRET: emu.defaults.clientSecret,
    FLEETBOOK_USERNAME: emu.defaults.username,
    FLEETBOOK_PASSWORD: emu.defaults.password,
  };
}

/** A device result as `fleetbook runs show ID --devices` prints it, a location written out, for the tests to expect. */
export function deviceLine(d: {
  step: string;
  deviceId: string;
  outcome: string;
  errorType?: string | undefined;
  data?: unknown;
}): string {
  const l = (d.data ?? {}) as {
    latitude?: number;
    longitude?: number;
    radius?: number;
    time?: string;
    cached?: boolean;
  };
  const where =
    l.latitude === undefined
      ? ''
      : `${l.latitude},${l.longitude}${l.radius !== undefined ? ` ±${l.radius} m` : ''}${l.time ? ` at ${l.time}` : ''}${l.cached ? ' (cached)' : ''}`;
  return `  ${d.step.padEnd(16)} ${d.deviceId.padEnd(22)} ${d.outcome.padEnd(11)} ${d.errorType ?? where}`.trimEnd();
}
