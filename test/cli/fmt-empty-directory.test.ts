/**
 * `fleetbook fmt DIR` on a directory without playbooks is a wrong path, as it is for `validate` (child process;
 * dist/ must be built): `fmt --check` in CI would otherwise check nothing and pass, saying only `0 files checked`.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { fleetbook } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

describe('fleetbook fmt: a directory without playbooks (child process)', function () {
  this.timeout(30_000);

  for (const check of [false, true])
    it(`exit 2, naming it${check ? ', with --check' : ''}`, async () => {
      const dir = tempDir('fb-fmt-empty-');
      await mkdir(join(dir, 'playbooks'));
      // A playbook test is no playbook: fmt passes it over.
      await writeFile(join(dir, 'playbooks', 'a.test.yaml'), 'cases: []\n');
      const r = await fleetbook(['fmt', 'playbooks', ...(check ? ['--check'] : [])], {}, [], dir);
      expect([r.code, r.stdout, r.stderr]).to.deep.equal([
        2,
        '',
        'fleetbook: no playbooks (*.yaml, *.yml) in playbooks\n',
      ]);
    });

  it('a directory without playbooks beside a playbook is refused too', async () => {
    const dir = tempDir('fb-fmt-empty-');
    await mkdir(join(dir, 'empty'));
    await writeFile(join(dir, 'a.yaml'), 'version: 1\n');
    const r = await fleetbook(['fmt', 'a.yaml', 'empty', '--check'], {}, [], dir);
    expect([r.code, r.stdout, r.stderr]).to.deep.equal([
      2,
      '',
      'fleetbook: no playbooks (*.yaml, *.yml) in empty\n',
    ]);
  });
});
