/**
 * A member that takes one of several shapes (`wait`: a duration or `{ event, timeout, poll }`; `if`: an
 * expression or true/false) was explained by its first shape only: `wait: { timeout: 1m, poll: {...} }` without
 * its `event` read `wait must be string`, and `if: 1` read `if must be string`, as if an object or a boolean were
 * not taken. The shape the value has is the one explained; a value of none of them names them all.
 */
import { expect } from 'chai';
import { loadPlaybook } from '../../src/playbook/load.js';

const problems = (step: string[]) =>
  loadPlaybook(
    ['version: 1', 'name: t', 'on: { manual: true }', 'steps:', ...step].join('\n'),
    't.yaml',
  ).diagnostics.map((d) => `${d.line}:${d.column} ${d.rule} ${d.message}`);

describe('validate: a value of a member that takes several shapes', () => {
  it('a wait object without its event says the event is required, not that a wait is a string', () => {
    const found = problems([
      '  - id: w',
      '    wait:',
      '      timeout: 1m',
      "      poll: { uses: devices.list, with: { accountName: '0000123456-00001' }, until: '${{ true }}' }",
    ]);
    expect(found).to.have.length(1);
    expect(found[0]).to.match(/^6:5 schema event is required$/);
  });

  it('an if that is a number names both shapes it takes', () => {
    const found = problems(['  - id: a', '    if: 1', '    uses: log', '    with: { message: hi }']);
    expect(found).to.deep.equal(['6:9 schema if must be string or boolean']);
  });

  it('a forEach.items that is a number names both shapes it takes', () => {
    const found = problems([
      '  - id: each',
      '    forEach:',
      '      items: 42',
      '      steps: [{ id: x, uses: log, with: { message: hi } }]',
    ]);
    expect(found).to.deep.equal(['7:14 schema items must be string or array']);
  });

  it('a wait that is a number is still a duration without its unit', () => {
    expect(problems(['  - id: w', '    wait: 30'])).to.deep.equal([
      '6:11 duration wait must be a duration such as 30s or 30m, not the number 30: a number alone has no unit',
    ]);
  });
});
