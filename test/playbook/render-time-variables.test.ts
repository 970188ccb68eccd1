/**
 * `concurrency.key` is rendered as the daemon accepts a run, from its `event` and `inputs` only (daemon/pool.ts),
 * and a callback's `if` on the callback alone, before any run exists (daemon/matcher.ts). `validate` passed a key
 * or a filter that read `vars`, `run`, `steps`, `secrets` or `env`: every run of such a key failed in the
 * daemon (`concurrency.key: Unknown variable: vars`), and such a filter never let a callback start a run. It
 * now refuses the read at its line and column, naming what the expression can read there.
 */
import { expect } from 'chai';
import { render } from '../../src/expressions/template.js';
import { loadPlaybook } from '../../src/playbook/load.js';

const problems = (lines: string[]) =>
  loadPlaybook(lines.join('\n'), 't.yaml').diagnostics.map(
    (d) => `${d.line}:${d.column} ${d.severity} ${d.rule} ${d.message}`,
  );

const keyed = (key: string) => [
  'version: 1',
  'name: t',
  'on: { manual: true }',
  "inputs: { account: { type: string, default: '0000123456-00001' } }",
  'vars: { region: eu }',
  `concurrency: { key: '${key}' }`,
  'steps:',
  '  - id: s',
  '    uses: log',
  '    with: { message: hi }',
];

const filtered = (cond: string) => [
  'version: 1',
  'name: t',
  'on:',
  '  callback:',
  '    service: DeviceUsage',
  `    if: '${cond}'`,
  "inputs: { account: { type: string, default: '0000123456-00001' } }",
  'vars: { region: eu }',
  'steps:',
  '  - id: s',
  '    uses: log',
  '    with: { message: hi }',
];

describe('validate: what concurrency.key and a callback filter can read', () => {
  it('the daemon renders a key from event and inputs only: vars, run, secrets and env are unknown there', () => {
    for (const v of ['vars.region', 'run.id', 'secrets.X', 'env.HOME', 'steps.s.status'])
      expect(() => render(`\${{ ${v} }}`, { event: {}, inputs: {} })).to.throw(/Unknown variable/);
    expect(render('${{ inputs.a }}', { event: {}, inputs: { a: 'x' } })).to.equal('x');
  });

  for (const v of ['vars.region', 'run.id', 'secrets.TEAM', 'env.HOME']) {
    const name = v.split('.')[0] as string;
    it(`refuses \`${name}\` in concurrency.key, at the read`, () => {
      const found = problems(keyed(`acct-\${{ inputs.account }}-\${{ ${v} }}`));
      expect(found).to.have.length(1);
      // `concurrency: { key: 'acct-${{ inputs.account }}-${{ ` is 52 characters: the variable is at 53.
      expect(found[0]).to.match(/^6:53 error expression /);
      expect(found[0]).to.include(`\`${name}\``);
      expect(found[0]).to.include('`event` and `inputs`');
    });
  }

  it('refuses a step read in concurrency.key as before, once', () => {
    const found = problems(keyed('${{ steps.s.status }}'));
    expect(found).to.have.length(1);
    expect(found[0]).to.match(/^6:26 error step-reference /);
  });

  it('passes a key of event and inputs', () => {
    expect(problems(keyed('${{ inputs.account }}-${{ string(size(inputs)) }}'))).to.deep.equal([]);
  });

  for (const v of ['inputs.account', 'vars.region', 'run.playbook', 'secrets.TEAM', 'env.HOME']) {
    const name = v.split('.')[0] as string;
    it(`refuses \`${name}\` in on.callback.if, at the read`, () => {
      const found = problems(filtered(`\${{ has(event.deviceResponse) && ${v} == "x" }}`));
      expect(found).to.have.length(1);
      // `    if: '${{ has(event.deviceResponse) && ` is 42 characters: the variable is at 43.
      expect(found[0]).to.match(/^6:43 error expression /);
      expect(found[0]).to.include(`\`${name}\``);
      expect(found[0]).to.include('only `event`');
    });
  }

  it('passes a filter of event alone, and a comprehension variable named like a context variable', () => {
    expect(
      problems(
        filtered(
          '${{ event.deviceResponse.alertServiceResponse.triggerName.startsWith("overuse") && [1].all(vars, vars > 0) }}',
        ),
      ),
    ).to.deep.equal([]);
  });
});
