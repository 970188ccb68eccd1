/**
 * The reference of each action (docs/actions.md, `fleetbook actions ACTION`): every action has one, with its
 * arguments, errors and retry-safety, and its example step is a step `validate` accepts.
 */
import { expect } from 'chai';
import { parseDocument } from 'yaml';
import { ALL_ACTIONS, actionReference, exampleStep } from '../../src/cli/actions-reference.js';
import { loadPlaybook } from '../../src/playbook/load.js';
import { fleetbook } from '../helpers/cli.js';

describe('action reference', function () {
  this.timeout(60_000);

  it('covers every action of the catalog and the engine', () => {
    expect(ALL_ACTIONS).to.include.members([
      'devices.suspend',
      'location.createReport',
      'report.write',
      'log',
    ]);
    expect(ALL_ACTIONS.length).to.be.greaterThan(50);
  });

  for (const action of ALL_ACTIONS) {
    it(`${action}: its example step passes validate`, () => {
      const steps = exampleStep(action)
        .split('\n')
        .map((l) => (l ? `  ${l}` : l))
        .join('\n');
      const source = `version: 1\nname: example\non: { manual: true }\nsteps:\n${steps}`;
      expect(parseDocument(source).errors).to.deep.equal([]);
      const r = loadPlaybook(source, `${action}.yaml`);
      expect(r.diagnostics.map((d) => `${d.line}:${d.column} ${d.message}`)).to.deep.equal([]);
    });
  }

  it('states arguments, output, errors and retry-safety of an API action', () => {
    const text = actionReference('devices.suspend');
    for (const part of [
      '**Arguments**',
      '**Output**',
      '**Errors**',
      '**Example**',
      'not retry-safe',
      'INVALID DEVICE STATE',
    ])
      expect(text).to.include(part);
    expect(actionReference('location.createReport')).to.match(/`cacheMode` \| .*"0"/);
    expect(actionReference('location.locate')).to.include('every error type of spec section 7.3');
    expect(actionReference('devices.list')).to.include('retry-safe: sent again');
  });

  it('shows each shape of an output the service gives in several', () => {
    const stop = actionReference('locationCallbacks.deregister');
    const output = stop.slice(stop.indexOf('**Output**'), stop.indexOf('**Errors**'));
    expect(output).to.not.include('No members');
    expect(output).to.match(/One of 2 shapes\./);
    expect(output).to.match(/`success` \| boolean/);
    expect(output).to.match(/`serviceName` \| string/);
    const query = actionReference('sensors.query');
    const answer = query.slice(query.indexOf('**Output**'), query.indexOf('**Errors**'));
    expect(answer).to.match(/`chipset` \| string/);
    expect(answer).to.include('a list of objects of the first shape');
  });

  it('fleetbook actions ACTION prints it; an unknown action exits 2 with the closest names', async () => {
    const one = await fleetbook(['actions', 'devices.suspend'], {});
    expect(one.code, one.stderr).to.equal(0);
    expect(one.stdout).to.equal(actionReference('devices.suspend'));
    const typo = await fleetbook(['actions', 'devices.suspnd'], {});
    expect(typo.code).to.equal(2);
    expect(typo.stderr).to.include('devices.suspend');
  });

  it('the default column takes a "Default ..." sentence, not a description that mentions "the default group"', async () => {
    const cells = (text: string, member: string) =>
      text
        .split('\n')
        .find((l) => l.startsWith(`| \`${member}\``))!
        .split(/(?<!\\)\|/)
        .map((c) => c.trim());
    const groups = await fleetbook(['actions', 'groups.update'], {});
    expect(groups.code, groups.stderr).to.equal(0);
    const removed = cells(groups.stdout, 'devicesToRemove');
    expect(removed[4], 'no default').to.equal('');
    expect(removed[5]).to.equal('Devices to move to the default group.');
    expect(cells(actionReference('usage.aggregate'), 'startDate')[4]).to.equal('180 days ago');
    expect(cells(actionReference('usageTriggers.create'), 'allowExcess')[4]).to.equal('false');
    expect(cells(actionReference('location.setExclusions'), 'type')[4]).to.equal('replace');
  });

  it('managed account provision and cancel say which account is the managed one and which the primary', async () => {
    for (const action of ['managedAccounts.provision', 'managedAccounts.cancel']) {
      const r = await fleetbook(['actions', action], {});
      expect(r.code, r.stderr).to.equal(0);
      const row = (member: string) => r.stdout.split('\n').find((l) => l.startsWith(`| \`${member}\``))!;
      expect(row('accountName'), action).to.match(/The managed account/);
      expect(row('paccountName'), action).to.match(/The primary account/);
    }
  });

  it('fleetbook actions ACTION --json is refused, exit 2: the JSON is the list, a reference is Markdown', async () => {
    const r = await fleetbook(['actions', 'devices.suspend', '--json'], {});
    expect([r.code, r.stdout]).to.deep.equal([2, '']);
    expect(r.stderr).to.equal(
      'fleetbook: --json lists every action (`fleetbook actions --json`); the reference of devices.suspend is Markdown only\n',
    );
  });
});
