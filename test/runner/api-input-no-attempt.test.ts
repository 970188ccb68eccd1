/**
 * An API action whose rendered input its client refuses (FB_INPUT, before anything is sent) fails the step with
 * no attempt counted, whatever the action's kind: a listing, a device action, a plain call, a report. Nothing
 * was tried, nothing reached the service, as for an engine action (engine-input-no-attempt.test.ts). Before, a
 * device action counted 1 where a listing counted 0.
 */
import { expect } from 'chai';
import { onEmulator, runLogged, stepOf } from './helpers.js';

describe('runner: an API action whose input the client refuses makes no attempt', function () {
  this.timeout(30_000);
  const t = onEmulator();

  // An account name no expression could be typed for at validate time: an element of a list of mixed values.
  const account = `"\${{ ['x', 1][1] }}"`;
  const cases: [string, string][] = [
    ['devices.list', `{ accountName: ${account} }`],
    ['devices.suspend', `{ accountName: ${account}, devices: [{ id: '356758880000000', kind: imei }] }`],
    [
      'sms.send',
      `{ accountName: ${account}, smsMessage: hi, deviceIds: [{ id: '356758880000000', kind: imei }] }`,
    ],
    [
      'location.createReport',
      `{ accountName: ${account}, deviceList: [{ id: '356758880000000', kind: imei }] }`,
    ],
  ];
  for (const [uses, args] of cases)
    it(`${uses}: fails at once, no attempt, no call, even with a retry`, async () => {
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
      );
      expect(s.status).to.equal('failed');
      expect(s.error).to.match(
        new RegExp(`^step \`bad\` failed: ${uses.replace('.', '\\.')}: invalid input`),
      );
      const step = stepOf(s, 'bad');
      expect(step.status).to.equal('failed');
      expect([step.attempts, step.calls]).to.deep.equal([0, 0]);
    });
});
