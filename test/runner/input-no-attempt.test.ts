/**
 * A step whose rendered input is refused before anything is sent (FB_INPUT) fails at once with no attempt
 * counted: nothing was tried, nothing reached anything. An engine action's arguments are checked once, before
 * the step's first attempt; an API action's input by its client, before the request leaves, whatever the
 * action's kind (a listing, a device action, a plain call, a report). No `retry.on` selects FB_INPUT: the step's
 * `retry:` here is not what keeps the count at 0. Before, a device action, a plain call and a report counted 1
 * attempt where a listing counted 0, and an
 * engine action's input was checked again inside its retry loop. The devices such a request names have no send
 * among their attempts either: a device action recorded them `failed` (FB_INPUT) with 1 attempt.
 */
import { expect } from 'chai';
import { engineSettings } from '../../src/actions/settings.js';
import { onEmulator, runLogged, stepOf } from './helpers.js';
import { tempDir } from '../helpers/temp.js';

describe('runner: an input refused before anything is sent makes no attempt', function () {
  this.timeout(30_000);
  const t = onEmulator();
  let tmp: string;
  before(async () => (tmp = tempDir('fleetbook-input-no-attempt-')));

  // An account name no expression could be typed for at validate time: an element of a list of mixed values.
  const account = `"\${{ ['x', 1][1] }}"`;
  const device = `{ id: '356758880000000', kind: imei }`;
  const cases: [string, string, RegExp][] = [
    ['log', `{ message: hi, level: "\${{ ['warn', 1][1] }}" }`, /\/level: level must be one of/],
    ['ledger.query', `{ since: "\${{ 'a day' }}" }`, /since "a day" is not a duration/],
    [
      'report.write',
      `"\${{ {'path': 'b.csv', 'step': 'x', 'rows': [{'a': 1}]} }}"`,
      /`rows` and `step` are two sources/,
    ],
    ['devices.list', `{ accountName: ${account} }`, /accountName/],
    ['devices.suspend', `{ accountName: ${account}, devices: [${device}] }`, /accountName/],
    ['sms.send', `{ accountName: ${account}, smsMessage: hi, deviceIds: [${device}] }`, /accountName/],
    ['location.createReport', `{ accountName: ${account}, deviceList: [${device}] }`, /accountName/],
  ];
  for (const [uses, args, problem] of cases)
    it(`${uses}: fails at once, no attempt, no call`, async () => {
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
        { engine: engineSettings({ reportsDir: tmp }) },
      );
      expect(s.status).to.equal('failed');
      expect(s.error).to.match(
        new RegExp(`^step \`bad\` failed: ${uses.replace('.', '\\.')}: invalid input`),
      );
      expect(s.error).to.match(problem);
      const step = stepOf(s, 'bad');
      expect(step.status).to.equal('failed');
      expect([step.attempts, step.calls]).to.deep.equal([0, 0]);
      // A device named by a request never sent has no send among its attempts (docs/ledger.md).
      const sent = (await t.store.deviceResults(s.runId, 'bad')).map((r) => r.attempts);
      expect(
        sent.every((a) => a === 0),
        `attempts ${sent.join(' ')}`,
      ).to.equal(true);
    });
});
