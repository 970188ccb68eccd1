/**
 * A process fences its mutations to its lease on the store (`beforeMutation`): checked as each request that may
 * change something is about to leave, once its rate slot is held, so that one queued behind the slots when the
 * process froze is not sent when it thaws. Reads go out whatever it says.
 */
import { expect } from 'chai';
import { createClient } from '../../src/api/client.js';
import { LeaseLostError } from '../../src/errors.js';
import { FAST_RATES, Recorder } from '../helpers/recorder.js';

const ACC = '0000123456-00001';
const SUSPEND = '/api/m2m/v1/devices/actions/suspend';

describe('client: beforeMutation', () => {
  it('stops a mutation it throws for, with nothing sent, and lets reads through', async () => {
    const rec = await Recorder.start();
    let held = true;
    const checked: string[] = [];
    const client = createClient({
      baseUrl: rec.baseUrl,
      ...rec.credentials,
      rates: FAST_RATES,
      beforeMutation: (action) => {
        checked.push(action);
        if (!held) throw new LeaseLostError('me');
      },
    });
    try {
      const input = { accountName: ACC, devices: [{ deviceIds: [{ id: '350000000000001', kind: 'imei' }] }] };
      await client.callByName('devices.suspend', input);
      held = false;
      const e = await client.callByName('devices.suspend', input).then(
        () => undefined,
        (err: unknown) => err as Error,
      );
      expect(e).to.be.instanceOf(LeaseLostError);
      await client.callByName('devices.list', { accountName: ACC });
      expect(checked).to.deep.equal(['devices.suspend', 'devices.suspend']);
      expect(rec.requestsTo(SUSPEND), 'only the suspend sent while the lease held').to.have.length(1);
      expect(rec.apiRequests().map((r) => r.path)).to.deep.equal([
        SUSPEND,
        '/api/m2m/v1/devices/actions/list',
      ]);
    } finally {
      await client.close();
      await rec.close();
    }
  });
});
