/**
 * A reader that stops early (`fleetbook schema | head`, `fleetbook test | head -5`). A command that only prints
 * (schema, runs list) ends quietly with 0: nothing it had to do is left undone. A check (`test`, `validate`, `fmt
 * --check`) goes on with its output dropped and exits with its outcome: under `set -o pipefail` a CI step must not
 * pass on a case that failed, or never ran, after the reader left. `test` exited 0 there. Child processes of the
 * built CLI (dist/ must be built), their standard output a pipe closed before they write to it.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'chai';
import { BIN } from '../helpers/cli.js';

const ROOT = join(import.meta.dirname, '..', '..');

/** The CLI run with a reader that is gone before its first byte: its exit code and standard error. */
function withReaderGone(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.destroy();
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })));
}

describe('the CLI with a reader that stops early (child process)', function () {
  this.timeout(60_000);

  it('a command that only prints ends quietly, with 0', async () => {
    expect(await withReaderGone(['schema'])).to.deep.equal({ code: 0, stderr: '' });
  });

  it('fleetbook test runs on and exits 1 for a case that failed', async () => {
    const r = await withReaderGone(['test', 'test/fixtures/testing/manual.test.yaml']);
    expect(r).to.deep.equal({ code: 1, stderr: '' });
  });

  it('fleetbook validate exits 1 for a playbook with an error', async () => {
    const r = await withReaderGone(['validate', 'test/fixtures/playbooks/invalid', 'playbooks']);
    expect(r.code, r.stderr).to.equal(1);
  });
});
