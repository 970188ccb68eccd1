/**
 * What happened to devices, over loopback: connection history (pages of 500 continued by time, no session
 * while a device is out of service), provisioning history (the seed's events and every change since),
 * suspension status and aggregated usage by callback, and the synchronous aggregated report, which counts the
 * same sessions and the same bytes.
 */
import { expect } from 'chai';
import type { Client } from '../../src/api/client.js';
import type { Emulator } from '../../src/emulator/index.js';
import { MAX_CONNECTION_EVENTS } from '../../src/emulator/history.js';
import {
  clientFor,
  emulator,
  idOf,
  imeiOf,
  Listener,
  Raw,
  refusal,
  world,
  type AccountView,
  type Json,
} from './helpers.js';

type Device = AccountView['devices'][number];
const imei = imeiOf;
const NOW = '2026-01-05T00:00:00.000Z';

describe('emulator: device history and usage reports', () => {
  let emu: Emulator;
  let client: Client;
  let raw: Raw;
  let acc: AccountView;
  let listener: Listener;
  const inState = (state: string, skip = 0) => acc.devices.filter((d) => d.state === state)[skip]!;

  before(async () => {
    emu = await emulator({ seed: 'history', devicesPerAccount: 200 });
    client = clientFor(emu);
    raw = new Raw(emu);
  });
  beforeEach(async () => {
    emu.reset({ seed: 'history', devicesPerAccount: 200 });
    acc = (await world(raw)).accounts[0]!;
    listener = await new Listener().start();
  });
  afterEach(async () => {
    await emu.callbacksIdle();
    await listener.close();
  });
  after(async () => {
    await client.close();
    await emu.close();
  });

  const history = (d: Device, earliest: string, latest = NOW) =>
    client.devices.connectionHistory({ deviceId: imei(d), earliest, latest });
  const starts = (events: { connectionEventAttributes?: { value?: string | null }[] }[]) =>
    events.filter((e) => e.connectionEventAttributes![0]!.value === 'Start').length;

  it('connection history: sessions in order, 500 an answer, continued from the last event time', async () => {
    // A device old enough to have more than 500 events since 2025 (devices were created 30 to 400 days ago).
    let d: Device | undefined;
    let first: { status: number; body: unknown } | undefined;
    for (const candidate of acc.devices.filter((x) => x.state === 'active')) {
      first = await raw.api('POST', '/m2m/v1/devices/connections/actions/listHistory', {
        deviceId: imei(candidate),
        earliest: '2025-01-01T00:00:00Z',
        latest: NOW,
      });
      d = candidate;
      if (first.status === 202) break;
    }
    expect(first!.status).to.equal(202);
    expect((first!.body as { connectionHistory: unknown[] }).connectionHistory).to.have.length(
      MAX_CONNECTION_EVENTS,
    );
    const all = (await history(d!, '2025-01-01T00:00:00Z')).connectionHistory;
    expect(all.length).to.be.greaterThan(MAX_CONNECTION_EVENTS);
    const times = all.map((e) => e.occurredAt);
    expect(new Set(times).size, 'no event twice').to.equal(times.length);
    expect(times).to.deep.equal([...times].sort());
    expect(all.map((e) => e.connectionEventAttributes![0]!.value)).to.deep.equal(
      all.map((_, i) => (i % 2 ? 'Stop' : 'Start')),
    );
  });

  it('connection history: no session while a device is suspended, and the same sessions the report counts', async () => {
    const d = inState('active', 1);
    await client.devices.suspend({ accountName: acc.accountName, devices: [imei(d)] });
    emu.advance(3 * 86_400);
    const after = await history(d, NOW, '2026-01-08T00:00:00Z');
    expect(after.connectionHistory).to.deep.equal([]);
    const week = await history(d, '2025-12-29T00:00:00Z');
    const report = await client.usage.aggregate({
      accountNumber: acc.accountName,
      imei: [imei(d).id],
      startDate: '2025-12-29',
      endDate: '2026-01-04',
    });
    expect(report.usage[0]!.numberOfSessions).to.equal(starts(week.connectionHistory));
  });

  it('refuses an unknown device, a device of an account the user cannot see, and a reversed period', async () => {
    const unknown = { id: '111111111111111', kind: 'imei' };
    expect(
      await refusal(client.devices.connectionHistory({ deviceId: unknown, earliest: NOW, latest: NOW })),
    ).to.deep.equal([400, 'INVALID_PARAMETER', 'Device not found: imei 111111111111111']);
    const field = clientFor(emu, { username: 'field', password: 'field-password' });
    try {
      const e = await refusal(
        field.devices.provisioningHistory({ deviceId: imei(acc.devices[0]!), earliest: NOW, latest: NOW }),
      );
      expect(e.slice(0, 2)).to.deep.equal([401, 'INVALID_ACCESS']);
    } finally {
      await field.close();
    }
    expect(await refusal(history(acc.devices[0]!, NOW, '2026-01-01T00:00:00Z'))).to.deep.equal([
      400,
      'INVALID_PARAMETER',
      'earliest must not be after latest',
    ]);
  });

  it("provisioning history: the seed's events, then each change with the plan it left", async () => {
    const d = inState('suspend');
    const events = async () =>
      (
        await client.devices.provisioningHistory({
          deviceId: imei(d),
          earliest: '2024-01-01T00:00:00Z',
          latest: '2026-02-01T00:00:00Z',
        })
      )[0]!.provisioningHistory!;
    expect((await events()).map((e) => e.eventType)).to.deep.equal(['Activate', 'Suspend']);
    const plans = await client.plans.list({ accountName: acc.accountName });
    const other = plans.find((p) => p.code !== d.servicePlan)!.code!;
    await client.devices.restore({ accountName: acc.accountName, devices: [imei(d)] });
    emu.advance(60);
    await client.devices.changePlan({ accountName: acc.accountName, devices: [imei(d)], servicePlan: other });
    const now = await events();
    expect(now.map((e) => [e.eventType, e.servicePlan])).to.deep.equal([
      ['Activate', d.servicePlan],
      ['Suspend', d.servicePlan],
      ['Restore', d.servicePlan],
      ['Change Plan', other],
    ]);
    expect(now[2]).to.include({ occurredAt: NOW, status: 'Success', mdn: idOf(d, 'mdn') });
  });

  it('suspension status: one DeviceSuspensionStatus message per device with the days used and left', async () => {
    await client.callbacks.register({
      accountName: acc.accountName,
      name: 'DeviceSuspensionStatus',
      url: listener.url,
    });
    const suspended = inState('suspend');
    const active = inState('active');
    const { requestId } = await client.devices.suspensionStatus({
      deviceIds: [imei(suspended), imei(active)],
    });
    await listener.waitFor(2);
    const by = new Map(listener.received.map((m) => [(m.body.deviceIds as Json[])[0]!.id, m.body] as const));
    const s = (by.get(imei(suspended).id)!.deviceResponse as Json).suspensionStatusResponse as Json;
    expect(by.get(imei(suspended).id)!.requestId).to.equal(requestId);
    expect(s).to.include({ accountName: acc.accountName, state: 'suspend' });
    expect(s.suspendedSince).to.be.a('string');
    expect(Number(s.suspendedDaysInLast12Months) + Number(s.remainingSuspendDays)).to.equal(
      Math.max(180, Number(s.suspendedDaysInLast12Months)),
    );
    const a = (by.get(imei(active).id)!.deviceResponse as Json).suspensionStatusResponse as Json;
    expect(a).to.deep.equal({
      accountName: acc.accountName,
      state: 'active',
      suspendedDaysInLast12Months: 0,
      remainingSuspendDays: 180,
    });
  });

  it('suspension status by filter: every device of the group, and none without a listener', async () => {
    const group = await client.devices.list({ accountName: acc.accountName, groupName: 'Depot Sensors' });
    await client.devices.suspensionStatus({
      accountName: acc.accountName,
      filter: { groupName: 'Depot Sensors' },
    });
    await emu.callbacksIdle();
    expect(listener.received).to.have.length(0);
    await client.callbacks.register({
      accountName: acc.accountName,
      name: 'DeviceSuspensionStatus',
      url: listener.url,
    });
    await client.devices.suspensionStatus({
      accountName: acc.accountName,
      filter: { groupName: 'Depot Sensors' },
    });
    await listener.waitFor(group.devices.length);
    expect(listener.received.map((m) => (m.body.deviceIds as Json[])[0]!.id).sort()).to.deep.equal(
      group.devices.map((d) => d.deviceIds[0]!.id).sort(),
    );
  });

  it('aggregated usage by callback: one DeviceUsage message per device, the bytes the report counts', async () => {
    await client.callbacks.register({ accountName: acc.accountName, name: 'DeviceUsage', url: listener.url });
    const devices = [inState('active', 2), inState('active', 3)];
    const { requestId } = await client.usage.aggregateAsync({
      deviceIds: devices.map(imei),
      startTime: '2025-12-29T00:00:00Z',
      endTime: NOW,
    });
    await listener.waitFor(2);
    const report = await client.usage.aggregate({
      accountNumber: acc.accountName,
      imei: devices.map((d) => imei(d).id),
      startDate: '2025-12-29',
      endDate: '2026-01-04',
    });
    for (const d of devices) {
      const m = listener.received.find((x) => (x.body.deviceIds as Json[])[0]!.id === imei(d).id)!.body;
      expect(m.requestId).to.equal(requestId);
      const [u] = (m.deviceResponse as Json).usageResponse as Json[];
      expect(u).to.include({ startTime: '2025-12-29T00:00:00.000Z', endTime: NOW });
      expect(u!.bytesUsed).to.equal(report.usage.find((x) => x.imei === imei(d).id)!.bytesTransferred);
    }
  });

  it('aggregated usage by callback refuses a start older than 6 months, a span over a month, and labels', async () => {
    const base = { accountName: acc.accountName };
    expect(
      await refusal(
        client.usage.aggregateAsync({
          ...base,
          startTime: '2025-06-01T00:00:00Z',
          endTime: '2025-06-02T00:00:00Z',
        }),
      ),
    ).to.deep.equal([400, 'INVALID_PARAMETER', 'startTime cannot be more than 6 months ago']);
    expect(
      await refusal(
        client.usage.aggregateAsync({
          ...base,
          startTime: '2025-11-01T00:00:00Z',
          endTime: '2025-12-15T00:00:00Z',
        }),
      ),
    ).to.deep.equal([400, 'INVALID_PARAMETER', 'endTime must be within one month of startTime']);
    expect(
      await refusal(
        client.usage.aggregateAsync({
          ...base,
          label: [{ name: 'vin', value: 'X1' }],
          startTime: '2025-12-01T00:00:00Z',
          endTime: '2025-12-15T00:00:00Z',
        }),
      ),
    ).to.deep.equal([400, 'INVALID_PARAMETER', 'No device has the label vin=X1']);
  });

  it('the synchronous report: at most 10 devices, 180 days, and only sessionless devices on request', async () => {
    expect((await refusal(client.usage.aggregate({ accountNumber: acc.accountName, imei: [] })))[2]).to.match(
      /^A synchronous report covers at most 10 devices, and 200 match/,
    );
    expect(
      await refusal(
        client.usage.aggregate({
          accountNumber: acc.accountName,
          imei: [imei(acc.devices[0]!).id],
          startDate: '2025-01-01',
        }),
      ),
    ).to.deep.equal([400, 'INVALID_PARAMETER', 'The date range of a report is at most 180 days']);
    const pending = inState('pending');
    const active = inState('active');
    const r = await client.usage.aggregate({
      accountNumber: acc.accountName,
      imei: [imei(pending).id, imei(active).id],
      startDate: '2026-01-01',
      noSessionFlag: true,
    });
    expect(r.usage).to.deep.equal([{ imei: imei(pending).id, numberOfSessions: 0, bytesTransferred: 0 }]);
  });
});
