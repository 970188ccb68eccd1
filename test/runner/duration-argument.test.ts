/**
 * A CEL duration passed whole is sent as a playbook duration (docs/playbook.md): its seconds, with the
 * milliseconds of a fraction (`1s500ms`). It was sent as CEL writes it, `1.5s`, which `ledger.query`'s `since`
 * (like every duration a playbook gives) refuses: validate passed it, and the step failed with FB_INPUT.
 */
import { expect } from 'chai';
import { render } from '../../src/expressions/template.js';
import { parseDuration } from '../../src/playbook/duration.js';
import { onEmulator, runLogged, stepOf } from './helpers.js';

describe('runner: a duration passed whole is a playbook duration', function () {
  this.timeout(30_000);
  const t = onEmulator();

  it('is its seconds, with the milliseconds of a fraction', () => {
    const sent = (d: string) => render(`\${{ duration("${d}") }}`, {}, false);
    expect(sent('24h')).to.equal('86400s');
    expect(sent('1.5s')).to.equal('1s500ms');
    expect(sent('500ms')).to.equal('500ms');
    expect(sent('0s')).to.equal('0s');
    expect(sent('1h30m')).to.equal('5400s');
    // What is sent reads back, as a playbook duration, as the same time as the CEL duration.
    const ms = { '24h': 86_400_000, '1.5s': 1500, '500ms': 500, '0s': 0, '1h30m': 5_400_000, '2.25s': 2250 };
    for (const [d, want] of Object.entries(ms)) expect(parseDuration(sent(d) as string), d).to.equal(want);
    // In text too, as the argument would be given.
    expect(render('last ${{ duration("2.25s") }}', {}, false)).to.equal('last 2s250ms');
  });

  it('is taken by ledger.query `since`', async () => {
    const { s } = await runLogged(
      t,
      `
version: 1
name: since-fraction
on: { manual: true }
steps:
  - id: recent
    uses: ledger.query
    with: { since: "\${{ duration('1.5s') }}" }
  - id: computed
    uses: ledger.query
    with: { since: "\${{ duration('1h') + duration('250ms') }}" }
`,
    );
    expect(s.status, s.error).to.equal('succeeded');
    expect(stepOf(s, 'recent').status).to.equal('succeeded');
    expect(stepOf(s, 'computed').status).to.equal('succeeded');
  });
});
