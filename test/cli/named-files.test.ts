/**
 * A file named on the command line that cannot be read (missing, a directory) is a usage error: exit 2, and a
 * line that names the flag and the path and says why, not Node's `ENOENT: ..., open '...'` (or, for a
 * directory, `EISDIR: illegal operation on a directory, read`, which names nothing). The built binary, as a
 * user runs it.
 */
import { mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { fleetbook } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

describe('files named on the command line', () => {
  let dir: string;
  let playbook: string;

  before(async () => {
    dir = tempDir('fleetbook-named-');
    playbook = join(dir, 'on-usage.yaml');
    await writeFile(
      playbook,
      `version: 1
name: on-usage
on: { callback: { service: DeviceUsage } }
steps:
  - id: note
    uses: log
    with: { message: hello }
`,
    );
  });

  const cases = (missing: string) => [
    {
      args: ['call', 'devices.list', '--body-file', missing],
      says: `fleetbook: --body-file ${missing}: no such file or directory`,
    },
    {
      args: ['call', 'devices.list', '--body-file', dir],
      says: `fleetbook: --body-file ${dir}: a directory, not a file`,
    },
    { args: ['run', missing], says: `fleetbook: playbook ${missing}: no such file or directory` },
    { args: ['run', dir], says: `fleetbook: playbook ${dir}: a directory, not a file` },
    {
      args: ['run', playbook, '--event', missing],
      says: `fleetbook: --event ${missing}: no such file or directory`,
    },
    { args: ['test', missing], says: `fleetbook: ${missing}: no such file or directory` },
  ];

  it('validate: a playbook test named among the playbooks is said to be one, not checked as a playbook', async () => {
    const test = join(dir, 'on-usage.test.yaml');
    await writeFile(
      test,
      `playbook: on-usage\ncases:\n  - name: logs\n    event: {}\n    expect: { status: succeeded }\n`,
    );
    const both = await fleetbook(['validate', playbook, test], {});
    expect([both.code, both.stdout]).to.deep.equal([0, '']);
    expect(both.stderr).to.equal(
      `fleetbook: ${test} is a playbook test, not a playbook: fleetbook test checks it\n` +
        '1 playbook checked: 0 errors, 0 warnings\n',
    );
    const alone = await fleetbook(['validate', test], {});
    expect(alone.code).to.equal(2);
    expect(alone.stderr).to.equal(
      `fleetbook: ${test} is a playbook test, not a playbook: fleetbook test checks it\n` +
        `fleetbook: no playbooks among ${test}\n`,
    );
  });

  it('validate: a file named twice (its directory and itself, ./, a link) is checked once, not its own duplicate', async () => {
    const link = join(dir, 'linked.yaml');
    await symlink(playbook, link);
    const inDir = `${dir}/./on-usage.yaml`;
    const r = await fleetbook(['validate', dir, playbook, inDir, link], {});
    expect([r.code, r.stdout]).to.deep.equal([0, '']);
    expect(r.stderr).to.equal('1 playbook checked: 0 errors, 0 warnings\n');
    await rm(link);
  });

  it('a broken link among the playbooks is an error of its own; the others are still checked', async () => {
    const d = join(dir, 'with-broken-link');
    await mkdir(d);
    await writeFile(join(d, 'a.yaml'), await readFile(playbook));
    await symlink(join(d, 'missing.yaml'), join(d, 'dangling.yaml'));
    const says = `${d}/dangling.yaml:1:1: the file cannot be read: no such file or directory`;

    const validate = await fleetbook(['validate', d], {});
    expect(validate.code).to.equal(1);
    expect(validate.stdout.split('\n')[0]).to.equal(`${says} [yaml]`);
    expect(validate.stderr).to.equal('2 playbooks checked: 1 error, 0 warnings\n');

    const fmt = await fleetbook(['fmt', '--check', d], {});
    expect([fmt.code, fmt.stderr]).to.deep.equal([
      1,
      `${says}\n2 files checked: 0 would be reformatted, 1 could not be read\n`,
    ]);

    const serve = await fleetbook(
      ['serve', '--playbooks', d, '--listen', '127.0.0.1:0', '--state', join(d, 'state.db')],
      {},
    );
    expect(serve.code, serve.stderr).to.equal(2);
    expect(serve.stderr).to.include(`not starting:\n${says} [yaml]`);
  });

  it('exits 2 and says which file and why', async () => {
    const missing = join(dir, 'missing.json');
    for (const c of cases(missing)) {
      const r = await fleetbook(c.args, { FLEETBOOK_STATE: join(dir, 'state.db') });
      expect(r.stderr.trim(), c.args.join(' ')).to.equal(c.says);
      expect(r.code, c.args.join(' ')).to.equal(2);
    }
  });
});
