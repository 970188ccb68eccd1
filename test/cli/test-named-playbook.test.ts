/**
 * `fleetbook test` named a playbook (`fleetbook test playbooks/*.yaml` names them all) says it is one and does
 * not load it as a test (child process; dist/ must be built), as `fleetbook validate` does of a playbook test.
 * Loaded as a test file, a playbook failed with `cases is required` and an unknown field for each of its members.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { fleetbook } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const PLAYBOOK = `version: 1
name: manual
on: { manual: true }
steps:
  - id: s
    set: { a: 1 }
`;

describe('fleetbook test: a playbook named among the tests (child process)', function () {
  this.timeout(60_000);
  let dir: string;

  before(async () => {
    dir = tempDir('fb-test-named-playbook-');
    await writeFile(join(dir, 'manual.yaml'), PLAYBOOK);
    await writeFile(
      join(dir, 'manual.test.yaml'),
      'cases:\n  - name: sets a\n    expect: { status: succeeded }\n',
    );
  });

  it('is said to be a playbook, not run; the tests named beside it run', async () => {
    const r = await fleetbook(['test', 'manual.yaml', 'manual.test.yaml'], {}, [], dir);
    expect([r.code, r.stderr, r.stdout]).to.deep.equal([
      0,
      'fleetbook: manual.yaml is a playbook, not a playbook test (NAME.test.yaml): fleetbook validate checks it\n',
      'ok   manual.test.yaml: sets a\n1 passed, 0 failed\n',
    ]);
  });

  it('alone, is nothing to test: exit 2', async () => {
    const r = await fleetbook(['test', 'manual.yaml'], {}, [], dir);
    expect([r.code, r.stdout, r.stderr]).to.deep.equal([
      2,
      '',
      'fleetbook: manual.yaml is a playbook, not a playbook test (NAME.test.yaml): fleetbook validate checks it\n' +
        'fleetbook: no playbook tests among manual.yaml\n',
    ]);
  });
});
