/**
 * A process fences its mutations to its lease on the store (`beforeMutation`): checked as each request that may
 * change something has its rate slot, so that one queued behind the slots when the process froze is not sent
 * when it thaws; and again as its connection is about to write it, so that one handed to the HTTP client just
 * before the freeze is not either. Reads go out whatever it says.
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
      // The first suspend at its slot and at its write; the second at its slot, where it stopped.
      expect(checked).to.deep.equal(['devices.suspend', 'devices.suspend', 'devices.suspend']);
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

  it('stops a mutation whose lease is lost between its slot and its write, with nothing sent', async () => {
    const rec = await Recorder.start();
    let checks = 0;
    const client = createClient({
      baseUrl: rec.baseUrl,
      ...rec.credentials,
      rates: FAST_RATES,
      // Held at the slot; lost by the write, as for a process stopped (SIGSTOP) in between and run again.
      beforeMutation: () => {
        if (++checks > 1) throw new LeaseLostError('me');
      },
    });
    try {
      const input = { accountName: ACC, devices: [{ deviceIds: [{ id: '350000000000001', kind: 'imei' }] }] };
      const e = await client.callByName('devices.suspend', input).then(
        () => undefined,
        (err: unknown) => err as Error,
      );
      expect(e).to.be.instanceOf(LeaseLostError);
      expect(checks).to.equal(2);
      expect(rec.requestsTo(SUSPEND), 'nothing written').to.have.length(0);
    } finally {
      await client.close();
      await rec.close();
    }
  });
});
