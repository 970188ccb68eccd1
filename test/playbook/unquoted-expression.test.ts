/**
 * The `unquoted-expression` warning: fleetbook still reads `${{ }}` unquoted inside `{ }` (users have such
 * files), but `validate` says where it is not YAML to other tools, on the fast path's input as on the full one.
 */
import { expect } from 'chai';
import { quickLoad } from '../../src/playbook/quick-load.js';
import { loadPlaybook, PLAYBOOK_RULES } from '../../src/playbook/load.js';

const playbook = (step: string) =>
  `version: 1\nname: q\non: { manual: true }\ninputs:\n  account: { type: string }\nsteps:\n${step}`;

describe('validate: unquoted expressions', () => {
  it('warns at the expression inside a flow mapping, and still loads the playbook', () => {
    const r = loadPlaybook(
      playbook('  - { id: a, uses: log, with: { message: ${{ inputs.account }} } }\n'),
      'f.yaml',
    );
    expect(r.playbook).to.not.equal(undefined);
    expect(r.diagnostics.map((d) => [d.line, d.column, d.rule, d.severity])).to.deep.equal([
      [7, 42, 'unquoted-expression', 'warning'],
    ]);
    expect(r.diagnostics[0]?.message).to.include('fleetbook fmt');
  });

  it('warns inside a flow sequence, and on a block scalar whose expression holds `: `', () => {
    const r = loadPlaybook(
      playbook(
        '  - id: a\n    uses: log\n    with:\n      message: ${{ inputs.account == "" ? "none" : inputs.account }}\n      fields: { l: [${{ 1 }}] }\n',
      ),
      'f.yaml',
    );
    expect(r.diagnostics.map((d) => [d.line, d.column, d.rule])).to.deep.equal([
      [10, 16, 'unquoted-expression'],
      [11, 21, 'unquoted-expression'],
    ]);
  });

  it('says nothing about quoted expressions, nor about plain ones in block style', () => {
    const r = loadPlaybook(
      playbook(
        '  - id: a\n    uses: log\n    with: { message: "${{ inputs.account }}", fields: { b: \'${{ 1 }}\' } }\n  - id: b\n    uses: log\n    with:\n      message: account ${{ inputs.account }} done\n',
      ),
      'f.yaml',
    );
    expect(r.diagnostics).to.deep.equal([]);
  });
});

describe('validate: unquoted expressions on the fast path', () => {
  it('are read by the fast path, with the warnings the full path gives', () => {
    const source = playbook(
      '  - id: a\n    uses: log\n    with: { message: ${{ inputs.account }} }\n  - id: b\n    uses: log\n    with:\n      message: ${{ inputs.account == "" ? "none" : inputs.account }}\n',
    );
    const fast = quickLoad(source, 'f.yaml', PLAYBOOK_RULES);
    expect(fast, 'the fast path gave up').to.not.equal(undefined);
    // The full path: the same source with a YAML feature outside the fast subset (an anchor).
    const full = loadPlaybook(source.replace('name: q', 'name: &n q'), 'f.yaml');
    expect(fast?.diagnostics).to.deep.equal(full.diagnostics);
    expect(fast?.diagnostics.map((d) => [d.line, d.column])).to.deep.equal([
      [9, 22],
      [13, 16],
    ]);
  });
});
