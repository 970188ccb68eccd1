/** The built `fleetbook` binary in a child process, as a user runs it. `npm test` builds dist/ first. */
import { execFile } from 'node:child_process';
import { join } from 'node:path';

export const BIN = join(import.meta.dirname, '..', '..', 'bin', 'fleetbook.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `fleetbook ...args` with only PATH and `env`: nothing from the caller's environment leaks in. */
export function fleetbook(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 30_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}
