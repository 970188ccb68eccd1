/**
 * An engine action's rendered arguments are checked once, before the step makes its first attempt: an input that
 * is wrong (FB_INPUT) fails the step at once, with no attempt counted (nothing was tried, nothing reached), as
 * an API action whose input its client refuses. A `retry:` that would take FB_INPUT changes nothing: the check
 * is not inside the retry loop, so it is not made again.
 */
import { expect } from 'chai';
import { engineSettings } from '../../src/actions/settings.js';
import { onEmulator, runLogged, stepOf, tempDir } from './helpers.js';

describe('runner: an engine action with a wrong input makes no attempt', function () {
  this.timeout(30_000);
  const t = onEmulator();
  let tmp: { dir: string; close(): Promise<void> };
  before(async () => (tmp = await tempDir()));
  after(async () => tmp.close());

  const cases: [string, string, RegExp][] = [
    ['log', `{ message: hi, level: "\${{ ['warn', 1][1] }}" }`, /\/level: level must be one of/],
    ['ledger.query', `{ since: "\${{ 'a day' }}" }`, /since "a day" is not a duration/],
    [
      'report.write',
      `"\${{ {'path': 'b.csv', 'step': 'x', 'rows': [{'a': 1}]} }}"`,
      /`rows` and `step` are two sources/,
    ],
  ];
  for (const [uses, args, problem] of cases)
    it(`${uses}: fails at once, no attempt, even with a retry`, async () => {
      const { s } = await runLogged(
        t,
        `
version: 1
name: no-attempt
on: { manual: true }
steps:
  - id: bad
    uses: ${uses}
    with: ${args}
    retry: { on: [retryable], maxAttempts: 5, delay: 1ms }
`,
        { engine: engineSettings({ reportsDir: tmp.dir }) },
      );
      expect(s.status).to.equal('failed');
      expect(s.error).to.match(
        new RegExp(`^step \`bad\` failed: ${uses.replace('.', '\\.')}: invalid input`),
      );
      expect(s.error).to.match(problem);
      const step = stepOf(s, 'bad');
      expect(step.status).to.equal('failed');
      expect(step.attempts).to.equal(0);
      expect(step.calls).to.equal(0);
    });
});
