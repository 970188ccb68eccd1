/**
 * The real service's wire shapes where the spec is silent (issue 17, docs/spec-decisions.md), as the emulator
 * accepts and emulates them, driven over loopback.
 */
import { expect } from 'chai';
import { onWorld, type Json } from './helpers.js';

describe('emulator: the real service wire shapes', function () {
  this.timeout(30_000);
  const t = onWorld({ seed: 'wire-shapes', devicesPerAccount: 40 });

  describe('the session header', () => {
    const listing = async (headers: Record<string, string>) =>
      t.raw.send('GET', `/api/m2m/v1/callbacks/${t.account}`, undefined, {
        authorization: `Bearer ${await t.raw.token()}`,
        ...headers,
      });

    it('is read as X-M2M-Token, the spec name, or VZ-M2M-Token, the real service name', async () => {
      const token = await t.raw.session();
      expect((await listing({ 'X-M2M-Token': token })).status).to.equal(200);
      expect((await listing({ 'VZ-M2M-Token': token })).status).to.equal(200);
    });

    it('is required under one of those names', async () => {
      const token = await t.raw.session();
      const r = await listing({ 'X-Session-Token': token });
      expect(r.status).to.equal(401);
      expect((r.body as Json).errorMessage).to.equal(
        'An X-M2M-Token or VZ-M2M-Token session token is required',
      );
    });
  });

  describe('devices.list', () => {
    type Rec = {
      deviceIds: { id: string; kind: string }[];
      carrierInformations: { servicePlan: string; state: string }[];
      groupNames: string[];
      customFields: { key: string; value: string }[];
      createdAt: string;
    };
    let all: Rec[];
    const ids = (recs: Rec[]) => recs.map((d) => d.deviceIds[0]!.id);
    const list = async (selection: Json) =>
      ids(
        (
          (await t.client.callByName('devices.list', { accountName: t.account, ...selection })) as {
            devices: Rec[];
          }
        ).devices,
      );
    const idOf = (d: Rec, kind: string) => d.deviceIds.find((x) => x.kind === kind)!.id;

    before(async () => {
      all = ((await t.client.devices.list({ accountName: t.account })) as unknown as { devices: Rec[] })
        .devices;
      expect(all.length).to.be.greaterThan(10);
    });

    it('selects by currentState, servicePlan and groupName at the top level', async () => {
      const d = all[3]!;
      const { state, servicePlan } = d.carrierInformations[0]!;
      const group = d.groupNames[0]!;
      expect(await list({ currentState: state })).to.deep.equal(
        ids(all.filter((x) => x.carrierInformations[0]!.state === state)),
      );
      expect(await list({ servicePlan })).to.deep.equal(
        ids(all.filter((x) => x.carrierInformations[0]!.servicePlan === servicePlan)),
      );
      const inGroup = await list({ groupName: group, currentState: state });
      expect(inGroup).to.include(d.deviceIds[0]!.id);
      expect(inGroup).to.deep.equal(
        ids(all.filter((x) => x.groupNames.includes(group) && x.carrierInformations[0]!.state === state)),
      );
      expect(inGroup.length).to.be.lessThan(all.length);
    });

    it('selects by custom fields, by when devices were added, and one device by deviceId', async () => {
      const d = all[5]!;
      const field = d.customFields[0]!;
      expect(await list({ customFields: [field] })).to.deep.equal(
        ids(all.filter((x) => x.customFields.some((f) => f.key === field.key && f.value === field.value))),
      );
      const times = [...new Set(all.map((x) => x.createdAt))].sort();
      const mid = times[Math.floor(times.length / 2)]!;
      expect(await list({ earliest: mid })).to.deep.equal(ids(all.filter((x) => x.createdAt >= mid)));
      expect(await list({ latest: mid })).to.deep.equal(ids(all.filter((x) => x.createdAt <= mid)));
      expect(await list({ deviceId: { id: idOf(d, 'iccid'), kind: 'iccid' } })).to.deep.equal([
        d.deviceIds[0]!.id,
      ]);
    });

    it('matches identifiers by kind: contains, startswith, endswith', async () => {
      const d = all[7]!;
      const iccid = idOf(d, 'iccid');
      const mdn = idOf(d, 'mdn');
      const by = (f: Json) => list({ filter: { deviceIdentifierFilters: [f] } });
      expect(await by({ kind: 'iccid', endswith: iccid.slice(-6) })).to.deep.equal([d.deviceIds[0]!.id]);
      expect(await by({ kind: 'MDN', contains: mdn.slice(2, 9) })).to.deep.equal(
        ids(all.filter((x) => idOf(x, 'mdn').includes(mdn.slice(2, 9)))),
      );
      expect(await by({ kind: 'iccid', startswith: iccid.slice(0, 4) })).to.deep.equal(
        ids(all.filter((x) => idOf(x, 'iccid').startsWith(iccid.slice(0, 4)))),
      );
      expect(await by({ kind: 'eid', contains: '1' }), 'no device has an EID').to.deep.equal([]);
    });

    it('pages after a largestDeviceIdSeen given as a number', async () => {
      const after = all[9]!.deviceIds[0]!.id;
      expect(await list({ largestDeviceIdSeen: Number(after) })).to.deep.equal(ids(all.slice(10)));
    });

    it('refuses the old filter members (400)', async () => {
      const r = await t.raw.api('POST', '/m2m/v1/devices/actions/list', {
        accountName: t.account,
        filter: { state: 'active' },
      });
      expect(r.status).to.equal(400);
      expect((r.body as Json).errorMessage).to.include('currentState');
    });
  });

  describe('devices.usage', () => {
    const device = () => t.seed.accounts[0]!.devices.find((d) => d.state === 'active')!;
    const imeiOf = (d: { deviceIds: { id: string; kind: string }[] }) =>
      d.deviceIds.find((x) => x.kind === 'imei')!.id;

    it('answers the daily usage history of one device', async () => {
      const d = device();
      const out = await t.client.devices.usage({
        deviceId: { id: imeiOf(d), kind: 'imei' },
        earliest: '2025-12-29T00:00:00Z',
        latest: '2026-01-05T00:00:00Z',
      });
      expect(out.hasMoreData).to.equal(false);
      expect(out.usageHistory.map((u) => u.timestamp)).to.deep.equal(
        [29, 30, 31]
          .map((day) => `2025-12-${day}T00:00:00.000Z`)
          .concat([1, 2, 3, 4].map((day) => `2026-01-0${day}T00:00:00.000Z`)),
      );
      for (const u of out.usageHistory) {
        expect(Object.keys(u)).to.deep.equal([
          'timestamp',
          'bytesUsed',
          'smsUsed',
          'servicePlan',
          'source',
          'extendedAttributes',
        ]);
        expect(u.bytesUsed).to.be.greaterThan(0);
        expect(u).to.include({ servicePlan: d.servicePlan, source: 'Raw Usage' });
        const sms = Object.fromEntries((u.extendedAttributes ?? []).map((a) => [a.key, Number(a.value)]));
        expect(sms.MoSms! + sms.MtSms!).to.equal(u.smsUsed);
      }
    });

    it('refuses a device the user cannot see (401), an unknown one and the old list shape (400)', async () => {
      const PATH = '/m2m/v1/devices/usage/actions/list';
      const span = { earliest: '2026-01-01T00:00:00Z', latest: '2026-01-02T00:00:00Z' };
      const d = { deviceId: { id: imeiOf(device()), kind: 'imei' }, ...span };
      expect(t.seed.accounts[0]!.primary, 'the field user cannot see the primary t.account').to.equal(true);
      const hidden = await t.raw.api('POST', PATH, d, 'field');
      expect(hidden.status).to.equal(401);
      expect((hidden.body as Json).errorCode).to.equal('INVALID_ACCESS');
      const unknown = await t.raw.api('POST', PATH, {
        ...d,
        deviceId: { id: '353456789012340', kind: 'imei' },
      });
      expect(unknown.status).to.equal(400);
      expect((unknown.body as Json).errorMessage).to.equal('Device not found: imei 353456789012340');
      const old = await t.raw.api('POST', PATH, {
        accountName: t.account,
        devices: [{ deviceIds: [d.deviceId] }],
        ...span,
      });
      expect(old.status).to.equal(400);
    });
  });

  describe('sms.send', () => {
    /** The identifiers a queued SMS request went to (the one each device was named by), as the emulator has it. */
    const recipients = (requestId: string) =>
      t.emu
        .request(requestId)!
        .devices.map((d) => d.deviceIds[0]!.id)
        .sort();
    const listed = async (selection: Json) =>
      (
        (await t.client.callByName('devices.list', { accountName: t.account, ...selection })) as {
          devices: { deviceIds: { id: string }[]; groupNames: string[] }[];
        }
      ).devices;

    it('queues a message to a flat list of devices', async () => {
      const [a, b] = t.seed.accounts[0]!.devices;
      const mdn = a!.deviceIds.find((x) => x.kind === 'mdn')!.id;
      const out = await t.client.sms.send({
        accountName: t.account,
        deviceIds: [
          { id: mdn, kind: 'MDN' },
          { id: b!.deviceIds[0]!.id, kind: b!.deviceIds[0]!.kind },
        ],
        smsMessage: 'hello',
      });
      expect(recipients(out.requestId)).to.deep.equal([mdn, b!.deviceIds[0]!.id].sort());
    });

    it('queues a message to every device of a group, on a plan', async () => {
      const d = t.seed.accounts[0]!.devices[2]!;
      const group = (await listed({ deviceId: d.deviceIds[0] }))[0]!.groupNames[0]!;
      const selection = { groupName: group, servicePlan: d.servicePlan };
      const expected = (await listed(selection)).map((x) => x.deviceIds[0]!.id).sort();
      expect(expected.length).to.be.greaterThan(0);
      const out = await t.client.sms.send({ accountName: t.account, ...selection, smsMessage: 'hi' });
      expect(recipients(out.requestId)).to.deep.equal(expected);
    });

    it('refuses the old devices list (400)', async () => {
      const r = await t.raw.api('POST', '/m2m/v1/sms', {
        accountName: t.account,
        devices: [{ deviceIds: [t.seed.accounts[0]!.devices[0]!.deviceIds[0]] }],
        smsMessage: 'hello',
      });
      expect(r.status).to.equal(400);
    });
  });
});
