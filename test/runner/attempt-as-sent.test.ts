/**
 * A step's counts row (step_calls), written as each request leaves, holds the attempt that request belongs to: a
 * run resumed after a crash in mid-call continues from it (StepCount.resume), and the live view shows it while the
 * call is in flight. A plain call's attempt was counted as it ended for a while: its row said 1 call, 0 attempts.
 */
import { expect } from 'chai';
import { onEmulator, runLogged, stepOf } from './helpers.js';

describe("runner: a plain call's counts row holds its attempt as its request leaves", function () {
  this.timeout(30_000);
  const t = onEmulator();

  it('sms.send: the row written as the request leaves says 1 call, 1 attempt', async () => {
    const rows: [string, number, number][] = [];
    const saveCalls = t.store.saveCalls.bind(t.store);
    t.store.saveCalls = (runId, key, calls, attempts) => {
      rows.push([key, calls, attempts]);
      saveCalls(runId, key, calls, attempts);
    };
    try {
      const { s } = await runLogged(
        t,
        `
version: 1
name: attempt-as-sent
on: { manual: true }
steps:
  - id: text
    uses: sms.send
    with: { accountName: '${t.account}', smsMessage: hi, deviceIds: [{ id: '356758880000000', kind: imei }] }
`,
      );
      expect(stepOf(s, 'text')).to.include({ attempts: 1, calls: 1 });
    } finally {
      t.store.saveCalls = saveCalls;
    }
    expect(rows.filter(([key]) => key === 'text')).to.deep.equal([['text', 1, 1]]);
  });
});
