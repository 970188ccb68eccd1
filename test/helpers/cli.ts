/** The built `fleetbook` binary in a child process, as a user runs it. `npm test` builds dist/ first. */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Emulator } from '../../src/emulator/index.js';

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
const STATE = join(mkdtempSync(join(tmpdir(), 'fleetbook-cli-')), 'state.db');
process.once('exit', () => rmSync(dirname(STATE), { recursive: true, force: true }));

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
  return `  ${d.step.padEnd(16)} ${d.deviceId.padEnd(22)} ${d.outcome.padEnd(9)} ${d.errorType ?? where}`;
}
