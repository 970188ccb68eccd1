/**
 * YAML merge keys (`<<: *defaults`), as Ansible and Compose files use them to share a block: a playbook and a
 * playbook test read them as the `yaml` library merges them, and `validate` checks the merged values. Before,
 * `<<` was read as a key like any other: `unknown field \`<<\`` and a required argument missing. A problem inside
 * an aliased block was told twice at its anchor; each use of the alias is told where it is now.
 */
import { expect } from 'chai';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadPlaybook } from '../../src/playbook/load.js';
import { loadTestFile } from '../../src/testing/load.js';
import { tempDir } from '../helpers/temp.js';

const PLAYBOOK = `version: 1
name: merged
on: { manual: true }
steps:
  - id: active
    uses: devices.list
    with: &account
      accountName: '0000123456-00001'
      currentState: active
  - id: suspended
    uses: devices.list
    with:
      <<: *account
      currentState: suspend
  - id: both
    uses: devices.list
    with:
      <<: [*account, { maxNumberOfDevices: 10 }]
`;

const steps = (text: string) => {
  const loaded = loadPlaybook(text, 'merged.yaml');
  expect(loaded.diagnostics.map((d) => `${d.line}:${d.column} ${d.message}`)).to.deep.equal([]);
  return loaded.playbook!.steps as { id: string; with: Record<string, unknown> }[];
};

describe('playbooks: YAML merge keys', () => {
  it('a step takes the merged block, its own keys over the merged ones', () => {
    const [, suspended, both] = steps(PLAYBOOK);
    expect(suspended!.with).to.deep.equal({ accountName: '0000123456-00001', currentState: 'suspend' });
    expect(both!.with).to.deep.equal({
      accountName: '0000123456-00001',
      currentState: 'active',
      maxNumberOfDevices: 10,
    });
  });

  it('validate checks the merged values, at the step that merges them', () => {
    const loaded = loadPlaybook(
      PLAYBOOK.replace('currentState: active', 'currentState: actve'),
      'merged.yaml',
    );
    const said = loaded.diagnostics.map((d) => `${d.line}:${d.column} ${d.message}`);
    // The block itself, and the step that merges it without overriding the value.
    expect(said).to.deep.equal([
      '9:21 devices.list: currentState must be one of "pending", "active", "deactive", "suspend" (did you mean "active"?)',
      '17:5 devices.list: currentState must be one of "pending", "active", "deactive", "suspend" (did you mean "active"?)',
    ]);
  });

  it('a problem inside an aliased block is told at its anchor and at each use, not twice at the anchor', () => {
    const loaded = loadPlaybook(
      `version: 1
name: aliased
on: { manual: true }
steps:
  - id: a
    uses: devices.list
    with: &w { accountName: '0000123456-00001', bogus: 1 }
  - id: b
    uses: devices.list
    with: *w
`,
      'aliased.yaml',
    );
    expect(loaded.diagnostics.map((d) => `${d.line}:${d.column} ${d.message}`)).to.deep.equal([
      '7:49 devices.list: unknown field `bogus`',
      '10:11 devices.list: unknown field `bogus`',
    ]);
  });

  it('a quoted "<<" is a plain key, not a merge', () => {
    const text = PLAYBOOK.replace('<<: [*account, { maxNumberOfDevices: 10 }]', "'<<': x");
    const loaded = loadPlaybook(text, 'merged.yaml');
    expect(loaded.diagnostics.map((d) => d.message)).to.include('devices.list: unknown field `<<`');
  });

  it('a playbook test reads merge keys too', async () => {
    const tmp = tempDir('fleetbook-yaml-merge-');
    const file = join(tmp, 'merged.test.yaml');
    await writeFile(
      file,
      `cases:
  - name: one
    inputs: &in { account: '0000123456-00001' }
    expect: { status: succeeded }
  - name: two
    inputs: { <<: *in, canary: 2 }
    expect: { status: succeeded }
`,
    );
    const read = await loadTestFile(file);
    expect(read, JSON.stringify(read)).to.not.be.an('array');
    const cases = (read as { cases: { inputs?: Record<string, unknown> }[] }).cases;
    expect(cases[1]!.inputs).to.deep.equal({ account: '0000123456-00001', canary: 2 });
  });
});
