/** `fleetbook test [PATH...]`: the playbook tests (`NAME.test.yaml`), on the embedded emulator. */
import { findTestFiles, runTests } from '../testing/index.js';
import { unreadable } from './named-file.js';

/** 0 when every case passed, 1 when one failed, 2 when there is nothing to test. */
export async function testCommand(paths: string[]): Promise<number> {
  let files: string[];
  try {
    files = await findTestFiles(paths.length ? paths : ['playbooks']);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    // With no path, the default one: say where it was looked for, and how to name another.
    process.stderr.write(
      !paths.length && err.code === 'ENOENT'
        ? 'fleetbook: no playbooks/ directory here: run it where playbooks/ is, or name the test files or directories (`fleetbook test PATH...`)\n'
        : `fleetbook: ${unreadable(err.path ?? 'a path', e)}\n`,
    );
    return 2;
  }
  if (!files.length) {
    process.stderr.write(`fleetbook: no *.test.yaml under ${paths.join(', ') || 'playbooks'}\n`);
    return 2;
  }
  const totals = await runTests(files, { write: (line) => process.stdout.write(`${line}\n`) });
  return totals.failed ? 1 : 0;
}
