/**
 * The bytes a device used are the same whichever way they are read, over loopback: the daily records of
 * `devices.usage` add up to the synchronous aggregated report of the same days and to the DeviceUsage message of
 * the asynchronous one. A user who reconciles them must not find a byte more on one side.
 */
import { expect } from 'chai';
import type { Client } from '../../src/api/client.js';
import type { Emulator } from '../../src/emulator/index.js';
import { clientFor, emulator, imeiOf, Listener, Raw, world, type AccountView, type Json } from './helpers.js';

const START = '2025-12-29T00:00:00Z';
const END = '2026-01-05T00:00:00Z';

describe('emulator: the bytes of a device agree between usage, reports and history', () => {
  let emu: Emulator;
  let client: Client;
  let acc: AccountView;
  let listener: Listener;

  before(async () => {
    emu = await emulator({ seed: 'bytes', devicesPerAccount: 60 });
    client = clientFor(emu);
    acc = (await world(new Raw(emu))).accounts[0]!;
    listener = await new Listener().start();
  });
  after(async () => {
    await emu.callbacksIdle();
    await listener.close();
    await client.close();
    await emu.close();
  });

  it('daily usage records add up to the synchronous and the asynchronous aggregated report', async () => {
    const devices = acc.devices.filter((d) => d.state === 'active').slice(0, 10);
    expect(devices).to.have.length(10);
    const report = await client.usage.aggregate({
      accountNumber: acc.accountName,
      imei: devices.map((d) => imeiOf(d).id),
      startDate: '2025-12-29',
      endDate: '2026-01-04',
    });
    await client.callbacks.register({ accountName: acc.accountName, name: 'DeviceUsage', url: listener.url });
    await client.usage.aggregateAsync({ deviceIds: devices.map(imeiOf), startTime: START, endTime: END });
    await listener.waitFor(devices.length);
    for (const d of devices) {
      const id = imeiOf(d).id;
      const daily = await client.devices.usage({ deviceId: imeiOf(d), earliest: START, latest: END });
      expect(daily.usageHistory).to.have.length(7);
      const sum = daily.usageHistory.reduce((s, r) => s + (r.bytesUsed ?? 0), 0);
      const reported = report.usage.find((u) => u.imei === id)!.bytesTransferred;
      expect(sum, `${id}: daily records against the report`).to.equal(reported);
      const m = listener.received.find((x) => (x.body.deviceIds as Json[])[0]!.id === id)!.body;
      const [u] = (m.deviceResponse as Json).usageResponse as Json[];
      expect(u!.bytesUsed, `${id}: the DeviceUsage message against the report`).to.equal(reported);
    }
  });
});
