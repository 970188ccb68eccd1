/**
 * A device listing's `items: { kind }` (issue 19): the step key, its type for the runner, and what
 * `validate` says about it and about reading a listing's whole records. The exact output is in the golden
 * fixtures (invalid/items-kind, invalid/listing-records, valid/listing-items-kind).
 */
import { expect } from 'chai';
import { loadPlaybook } from '../../src/playbook/load.js';
import type { Step } from '../../src/playbook/schema.js';

type UsesStep = Extract<Step, { uses: string }>;
/** True only when A and B are the same type. */
type Same<A, B> = (<X>() => X extends A ? 1 : 2) extends <X>() => X extends B ? 1 : 2 ? true : false;
// The runner reads `step.items?.kind`: the type is exactly this.
const itemsType: Same<UsesStep['items'], { kind: string } | undefined> = true;

const playbook = (steps: string) =>
  loadPlaybook(`version: 1\nname: t\non: { manual: true }\nsteps:\n${steps}`, 't.yaml');
const listing = (action: string, extra = '') =>
  [
    '  - id: devices',
    `    uses: ${action}`,
    `    with: { accountName: '0000123456-00001'${action === 'groups.get' ? ', groupName: g' : ''} }`,
    extra,
  ].join('\n');
const found = (steps: string) =>
  playbook(steps).diagnostics.map((d) => ({
    line: d.line - 4,
    rule: d.rule,
    severity: d.severity,
    message: d.message,
  }));

describe('a listing step’s items: { kind }', () => {
  it('is typed as the runner reads it', () => {
    expect(itemsType).to.equal(true);
  });

  for (const [action, kind] of [
    ['devices.list', 'imei'],
    ['devices.list', 'IMEI'],
    ['groups.get', 'eid'],
  ]) {
    it(`${action} takes items: { kind: ${kind} }, and the loaded step carries it`, () => {
      const r = playbook(listing(action as string, `    items: { kind: ${kind} }`));
      expect(r.diagnostics).to.deep.equal([]);
      expect((r.playbook?.steps[0] as UsesStep).items?.kind).to.equal(kind);
    });
  }

  it('on another action, is an error at the key saying which actions take it', () => {
    const steps = [
      '  - id: tell',
      '    uses: log',
      '    with: { message: hi }',
      '    items: { kind: imei }',
    ].join('\n');
    const [d, ...rest] = found(steps);
    expect(rest).to.deep.equal([]);
    expect(d).to.include({ line: 4, rule: 'items-kind', severity: 'error' });
    expect(d?.message).to.include('devices.list').and.include('groups.get').and.include('`log`');
  });

  it('an unknown kind is an error naming the kinds; nothing else goes inside items', () => {
    const bad = found(listing('devices.list', '    items: { kind: imie }'));
    expect(bad.map((d) => [d.line, d.rule])).to.deep.equal([[4, 'items-kind']]);
    for (const kind of ['imei', 'iccid', 'mdn', 'msisdn', 'meid', 'esn', 'imsi', 'eid'])
      expect(bad[0]?.message).to.include(`"${kind}"`);
    const extra = found(listing('devices.list', '    items: { kind: imei, format: x }'));
    expect(extra.map((d) => [d.line, d.rule, d.message])).to.deep.equal([
      [4, 'schema', 'unknown field `format`'],
    ]);
    expect(found(listing('devices.list', '    items: {}')).map((d) => d.rule)).to.deep.equal(['schema']);
  });

  it('output.leftOut is an int, output.devices the listed records', () => {
    const steps = (expr: string) =>
      `${listing('devices.list', '    items: { kind: imei }')}\n  - id: tell\n    uses: log\n    with: { message: '${expr}' }`;
    expect(found(steps('${{ steps.devices.output.leftOut + 1 }}'))).to.deep.equal([]);
    expect(found(steps('${{ steps.devices.output.leftOut + "x" }}')).map((d) => d.rule)).to.deep.equal([
      'type',
    ]);
    expect(found(steps('${{ steps.devices.output.count * 2 }}'))).to.deep.equal([]);
    // The records type-check (a warning, not an error); a member they cannot have is an error.
    expect(
      found(steps('${{ steps.devices.output.devices[0].deviceIds[0].id }}')).map((d) => d.rule),
    ).to.deep.equal(['listing-records']);
    expect(
      found(steps('${{ steps.devices.output.devices[0].deviceIdz }}'))
        .map((d) => d.rule)
        .sort(),
    ).to.deep.equal(['listing-records', 'member']);
    // items stay { id, kind } strings.
    expect(found(steps('${{ steps.devices.items[0].id + steps.devices.items[0].kind }}'))).to.deep.equal([]);
  });

  it('reading a listing’s whole records warns, pointing to its items', () => {
    const steps = `${listing('groups.get')}\n  - id: each\n    forEach:\n      items: '\${{ steps.devices.output.devices }}'\n      steps:\n        - { id: one, uses: log, with: { message: hi } }`;
    const [d, ...rest] = found(steps);
    expect(rest).to.deep.equal([]);
    expect(d).to.include({ line: 7, rule: 'listing-records', severity: 'warning' });
    expect(d?.message).to.include('steps.devices.items').and.include('items: { kind');
    expect(playbook(steps).playbook, 'a warning does not stop the playbook').to.not.equal(undefined);
  });
});
