/**
 * `fleetbook test playbooks` as a user (and CI) runs it: every shipped example playbook has its tests, and they
 * pass on the embedded emulator, one line per case and the summary line; a failing test says where and exits 1.
 */
import { copyFile, mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { fleetbook } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const ROOT = join(import.meta.dirname, '..', '..');

describe('fleetbook test', () => {
  it('passes the tests of every example playbook, one line per case and a summary line', async function () {
    this.timeout(120_000);
    const r = await fleetbook(['test', 'playbooks'], {}, [], ROOT);
    expect(r.code, r.stdout + r.stderr).to.equal(0);
    const lines = r.stdout.trimEnd().split('\n');
    const cases = lines.filter((l) => l.startsWith('ok   '));
    expect(lines.at(-1)).to.equal(`${cases.length} passed, 0 failed`);
    const files = (await readdir(join(ROOT, 'playbooks'))).filter((f) => f.endsWith('.yaml'));
    for (const f of files.filter((f) => !f.endsWith('.test.yaml'))) {
      const test = f.replace(/\.yaml$/, '.test.yaml');
      expect(files, `a test for ${f}`).to.include(test);
      expect(
        cases.some((l) => l.startsWith(`ok   playbooks/${test}: `)),
        test,
      ).to.equal(true);
    }
  });

  it('fails with the file:line of a failed expectation, and exit code 1', async () => {
    const r = await fleetbook(['test', 'test/fixtures/testing/manual.test.yaml'], {}, [], ROOT);
    expect(r.code).to.equal(1);
    expect(r.stdout).to.include('FAIL test/fixtures/testing/manual.test.yaml: expects what did not happen\n');
    expect(r.stdout).to.include('    test/fixtures/testing/manual.test.yaml:11: expected 2 devices.list');
    expect(r.stdout.trimEnd().split('\n').at(-1)).to.equal('1 passed, 1 failed');
  });

  it('run with no path where there is no playbooks/, says where it looked and how to name a path: exit 2', async () => {
    const dir = tempDir('fleetbook-test-nowhere-');
    const r = await fleetbook(['test'], {}, [], dir);
    expect([r.code, r.stdout, r.stderr]).to.deep.equal([
      2,
      '',
      'fleetbook: no playbooks/ directory here: run it where playbooks/ is, or name the test files or directories (`fleetbook test PATH...`)\n',
    ]);
    const named = await fleetbook(['test', 'elsewhere'], {}, [], dir);
    expect([named.code, named.stderr]).to.deep.equal([
      2,
      'fleetbook: elsewhere: no such file or directory\n',
    ]);
  });

  it('fails a test file that is a broken link as one that cannot be read, and runs the others', async () => {
    const dir = tempDir('fleetbook-test-link-');
    const fixtures = join(ROOT, 'test', 'fixtures', 'testing');
    for (const f of ['manual.yaml', 'manual.test.yaml']) await copyFile(join(fixtures, f), join(dir, f));
    await symlink(join(dir, 'missing.test.yaml'), join(dir, 'dangling.test.yaml'));
    const r = await fleetbook(['test', dir], {});
    expect(r.code, r.stderr).to.equal(1);
    expect(r.stderr).to.equal('');
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines.slice(0, 2)).to.deep.equal([
      `FAIL ${dir}/dangling.test.yaml: does not load`,
      `    ${dir}/dangling.test.yaml:1:1: the file cannot be read: no such file or directory [yaml]`,
    ]);
    expect(lines).to.include(`ok   ${dir}/manual.test.yaml: lists the devices`);
    expect(lines.at(-1)).to.equal('1 passed, 2 failed');
  });

  it('runs a test file named twice (a directory and the file, a link and its target) once', async () => {
    const dir = tempDir('fleetbook-test-twice-');
    const cases = join(dir, 'cases');
    await mkdir(cases);
    await copyFile(join(ROOT, 'test', 'fixtures', 'testing', 'manual.yaml'), join(cases, 'manual.yaml'));
    await writeFile(
      join(cases, 'manual.test.yaml'),
      'playbook: manual.yaml\ncases:\n  - name: lists the devices\n    expect: { status: succeeded }\n',
    );
    // The same file by another name, that the directory holds too.
    await symlink('manual.test.yaml', join(cases, 'same.test.yaml'));
    const once = (first: string) => `ok   ${first}: lists the devices\n1 passed, 0 failed\n`;
    const named = [
      [['cases/manual.test.yaml', 'cases'], 'cases/manual.test.yaml'],
      [['./cases/manual.test.yaml', 'cases/manual.test.yaml'], './cases/manual.test.yaml'],
      [[join(cases, 'manual.test.yaml'), 'cases/manual.test.yaml'], join(cases, 'manual.test.yaml')],
      [['cases/same.test.yaml', 'cases/manual.test.yaml'], 'cases/same.test.yaml'],
      [['cases'], 'cases/manual.test.yaml'],
    ] as const;
    const runs = [];
    for (const [paths] of named) {
      const r = await fleetbook(['test', ...paths], {}, [], dir);
      runs.push([paths.join(' '), r.code, r.stderr, r.stdout]);
    }
    expect(runs).to.deep.equal(named.map(([paths, first]) => [paths.join(' '), 0, '', once(first)]));
    // Files run in the order named, not sorted across paths.
    await mkdir(join(dir, 'more'));
    await writeFile(
      join(dir, 'more', 'other.test.yaml'),
      'playbook: ../cases/manual.yaml\ncases:\n  - name: lists them again\n    expect: { status: succeeded }\n',
    );
    const both = await fleetbook(['test', 'more', 'cases/same.test.yaml', 'cases'], {}, [], dir);
    expect([both.code, both.stderr, both.stdout]).to.deep.equal([
      0,
      '',
      'ok   more/other.test.yaml: lists them again\nok   cases/same.test.yaml: lists the devices\n2 passed, 0 failed\n',
    ]);
  });

  it('tells a playbook that is not there, an unknown key of a case and a list at file:line:col', async () => {
    const dir = tempDir('fleetbook-test-mistakes-');
    const write = (name: string, text: string) => writeFile(join(dir, name), text);
    const expectation = '    expect: { status: succeeded }\n';
    await write('named.test.yaml', `playbook: nothere.yaml\ncases:\n  - name: a\n${expectation}`);
    await write('beside.test.yaml', `# no beside.yaml\ncases:\n  - name: a\n${expectation}`);
    await write(
      'manual.yaml',
      'version: 1\nname: manual\non: { manual: true }\nsteps:\n  - id: s\n    set: { a: 1 }\n',
    );
    await write(
      'key.test.yaml',
      `playbook: manual.yaml\ncases:\n  - name: a\n${expectation}    inptus: {}\n`,
    );
    await write('list.test.yaml', `- name: a\n${expectation.slice(2)}`);
    const r = await fleetbook(['test', dir], {});
    expect([r.code, r.stderr]).to.deep.equal([1, '']);
    const at = (name: string, where: string, message: string, line: string, caret: number) =>
      [
        `FAIL ${dir}/${name}: does not load`,
        `    ${dir}/${name}:${where}: ${message}`,
        `       ${where.split(':')[0]} | ${line}`,
        `         | ${' '.repeat(caret)}^`,
      ].join('\n');
    expect(r.stdout).to.equal(
      [
        at(
          'beside.test.yaml',
          '2:1',
          `the playbook ${dir}/beside.yaml cannot be read: no such file or directory (NAME.test.yaml runs NAME.yaml unless it gives \`playbook\`) [schema]`,
          'cases:',
          0,
        ),
        at(
          'key.test.yaml',
          '5:5',
          'unknown field `inptus` (did you mean `inputs`?) [schema]',
          '    inptus: {}',
          4,
        ),
        at(
          'list.test.yaml',
          '1:1',
          'the file is not a YAML mapping: a playbook test is a mapping of `cases` (at least one, each with a `name` and an `expect`), and may give `playbook`, `world` and `faults` [yaml]',
          '- name: a',
          0,
        ),
        at(
          'named.test.yaml',
          '1:11',
          `the playbook ${dir}/nothere.yaml cannot be read: no such file or directory [schema]`,
          'playbook: nothere.yaml',
          10,
        ),
        '0 passed, 4 failed\n',
      ].join('\n'),
    );
  });
});
