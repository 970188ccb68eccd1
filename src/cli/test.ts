/** `fleetbook test [PATH...]`: the playbook tests (`NAME.test.yaml`), on the embedded emulator. */
import { findTestFiles, runTests } from '../testing/index.js';
import { unreadable } from './named-file.js';

/** 0 when every case passed, 1 when one failed, 2 when there is nothing to test. */
export async function testCommand(paths: string[]): Promise<number> {
  let files: string[];
  try {
    files = await findTestFiles(paths.length ? paths : ['playbooks']);
  } catch (e) {
    process.stderr.write(`fleetbook: ${unreadable((e as NodeJS.ErrnoException).path ?? 'a path', e)}\n`);
    return 2;
  }
  if (!files.length) {
    process.stderr.write(`fleetbook: no *.test.yaml under ${paths.join(', ') || 'playbooks'}\n`);
    return 2;
  }
  const totals = await runTests(files, { write: (line) => process.stdout.write(`${line}\n`) });
  return totals.failed ? 1 : 0;
}
