/**
 * `fleetbook run` and Ctrl-C, as a person at a terminal uses them: the built binary in a child process on the
 * embedded emulator. A first signal cancels the run and its `finally` runs; a second one stops the `finally`,
 * whose steps after the one it stopped are `unreached`.
 */
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import type { RunSummary } from '../../src/store/store.js';
import { BIN } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { LINGERING } from '../runner/playbooks.js';

describe('fleetbook run: signals', function () {
  this.timeout(60_000);

  it('a first signal cancels the run and its `finally` runs; a second one stops the `finally`', async () => {
    const tmp = tempDir('fleetbook-run-signals-');
    const file = join(tmp, 'lingering.yaml');
    await writeFile(file, LINGERING('cli-lingering'));
    const child = spawn(process.execPath, [BIN, 'run', file, '--json'], {
      env: {
        PATH: process.env.PATH ?? '',
        FLEETBOOK_STATE: join(tmp, 'state.db'),
        FLEETBOOK_LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    /** Resolves once the process logged that step `id` started. */
    const started = (id: string) =>
      new Promise<void>((resolve) => {
        const look = (d: Buffer) => {
          stderr += d.toString();
          if (stderr.split('\n').some((l) => l.includes('step started') && l.includes(`"step":"${id}"`))) {
            child.stderr.off('data', look);
            resolve();
          }
        };
        child.stderr.on('data', look);
        look(Buffer.alloc(0));
      });
    await started('hold');
    child.kill('SIGINT');
    await started('linger');
    child.kill('SIGINT');
    expect(await exited, stderr).to.equal(1);
    const summary = JSON.parse(stdout) as RunSummary;
    expect(summary.status).to.equal('cancelled');
    expect(summary.error).to.equal('cancelled by signal');
    expect(summary.steps.map((s) => [s.id, s.status, s.error])).to.deep.equal([
      ['hold', 'cancelled', 'cancelled by signal'],
      ['linger', 'cancelled', 'stopped by a second signal'],
      // The finally step after it never ran, and says so.
      ['never', 'unreached', undefined],
    ]);
  });
});
