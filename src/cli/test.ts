/** `fleetbook test [PATH...]`: the playbook tests (`NAME.test.yaml`), on the embedded emulator. */
import { stat } from 'node:fs/promises';
import { findTestFiles, runTests } from '../testing/index.js';
import { TEST_SUFFIX } from '../util/files.js';
import { unreadable } from './named-file.js';
import { EXIT_USAGE } from './exit-codes.js';

/** 0 when every case passed, 1 when one failed, 2 when there is nothing to test. */
export async function testCommand(paths: string[]): Promise<number> {
  // A file named that is no playbook test (`fleetbook test playbooks/*.yaml` names the playbooks too) is said
  // to be one and left out, as validate does of a playbook test: loaded as a test, a playbook would fail with an
  // unknown field for each of its members.
  const named: string[] = [];
  for (const p of paths) {
    const file =
      !p.endsWith(TEST_SUFFIX) &&
      (await stat(p).then(
        (s) => !s.isDirectory(),
        () => false,
      ));
    if (!file) named.push(p);
    else
      process.stderr.write(
        /\.ya?ml$/.test(p)
          ? `fleetbook: ${p} is a playbook, not a playbook test (NAME.test.yaml): fleetbook validate checks it\n`
          : `fleetbook: ${p} is not a playbook test (NAME.test.yaml)\n`,
      );
  }
  if (paths.length && !named.length) {
    process.stderr.write(`fleetbook: no playbook tests among ${paths.join(', ')}\n`);
    return EXIT_USAGE;
  }
  let files: string[];
  try {
    files = await findTestFiles(named.length ? named : ['playbooks']);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    // With no path, the default one: say where it was looked for, and how to name another.
    process.stderr.write(
      !paths.length && err.code === 'ENOENT'
        ? 'fleetbook: no playbooks/ directory here: run it where playbooks/ is, or name the test files or directories (`fleetbook test PATH...`)\n'
        : `fleetbook: ${unreadable(err.path ?? 'a path', e)}\n`,
    );
    return EXIT_USAGE;
  }
  if (!files.length) {
    process.stderr.write(`fleetbook: no *.test.yaml under ${named.join(', ') || 'playbooks'}\n`);
    return EXIT_USAGE;
  }
  const totals = await runTests(files, { write: (line) => process.stdout.write(`${line}\n`) });
  return totals.failed ? 1 : 0;
}
