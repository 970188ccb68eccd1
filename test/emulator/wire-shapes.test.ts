/**
 * The real service's wire shapes where the spec is silent (issue 17, docs/spec-decisions.md), as the emulator
 * accepts and emulates them, driven over loopback.
 */
import { expect } from 'chai';
import type { Emulator } from '../../src/emulator/index.js';
import type { Client } from '../../src/api/client.js';
import { clientFor, emulator, Listener, Raw, world, type Json, type World } from './helpers.js';

describe('emulator: the real service wire shapes', function () {
  this.timeout(30_000);
  let emu: Emulator;
  let raw: Raw;
  let client: Client;
  let seed: World;
  let account: string;

  before(async () => {
    emu = await emulator({ seed: 'wire-shapes', devicesPerAccount: 40 });
    raw = new Raw(emu);
    client = clientFor(emu);
    seed = await world(raw);
    account = seed.accounts[0]!.accountName;
  });
  after(async () => {
    await client.close();
    await emu.close();
  });

  describe('the session header', () => {
    const listing = async (headers: Record<string, string>) =>
      raw.send('GET', `/api/m2m/v1/callbacks/${account}`, undefined, {
        authorization: `Bearer ${await raw.token()}`,
        ...headers,
      });

    it('is read as X-M2M-Token, the spec name, or VZ-M2M-Token, the real service name', async () => {
      const token = await raw.session();
      expect((await listing({ 'X-M2M-Token': token })).status).to.equal(200);
      expect((await listing({ 'VZ-M2M-Token': token })).status).to.equal(200);
    });

    it('is required under one of those names', async () => {
      const token = await raw.session();
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
          (await client.callByName('devices.list', { accountName: account, ...selection })) as {
            devices: Rec[];
          }
        ).devices,
      );
    const idOf = (d: Rec, kind: string) => d.deviceIds.find((x) => x.kind === kind)!.id;

    before(async () => {
      all = ((await client.devices.list({ accountName: account })) as unknown as { devices: Rec[] }).devices;
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
      const r = await raw.api('POST', '/m2m/v1/devices/actions/list', {
        accountName: account,
        filter: { state: 'active' },
      });
      expect(r.status).to.equal(400);
      expect((r.body as Json).errorMessage).to.include('currentState');
    });
  });

  describe('devices.usage', () => {
    const device = () => seed.accounts[0]!.devices.find((d) => d.state === 'active')!;
    const imeiOf = (d: { deviceIds: { id: string; kind: string }[] }) =>
      d.deviceIds.find((x) => x.kind === 'imei')!.id;

    it('answers the daily usage history of one device', async () => {
      const d = device();
      const out = await client.devices.usage({
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
      expect(seed.accounts[0]!.primary, 'the field user cannot see the primary account').to.equal(true);
      const hidden = await raw.api('POST', PATH, d, 'field');
      expect(hidden.status).to.equal(401);
      expect((hidden.body as Json).errorCode).to.equal('INVALID_ACCESS');
      const unknown = await raw.api('POST', PATH, {
        ...d,
        deviceId: { id: '353456789012340', kind: 'imei' },
      });
      expect(unknown.status).to.equal(400);
      expect((unknown.body as Json).errorMessage).to.equal('Device not found: imei 353456789012340');
      const old = await raw.api('POST', PATH, {
        accountName: account,
        devices: [{ deviceIds: [d.deviceId] }],
        ...span,
      });
      expect(old.status).to.equal(400);
    });
  });

  describe('sms.send', () => {
    /** The identifiers a queued SMS request went to (the one each device was named by), as the emulator has it. */
    const recipients = (requestId: string) =>
      emu
        .request(requestId)!
        .devices.map((d) => d.deviceIds[0]!.id)
        .sort();
    const listed = async (selection: Json) =>
      (
        (await client.callByName('devices.list', { accountName: account, ...selection })) as {
          devices: { deviceIds: { id: string }[]; groupNames: string[] }[];
        }
      ).devices;

    it('queues a message to a flat list of devices', async () => {
      const [a, b] = seed.accounts[0]!.devices;
      const mdn = a!.deviceIds.find((x) => x.kind === 'mdn')!.id;
      const out = await client.sms.send({
        accountName: account,
        deviceIds: [
          { id: mdn, kind: 'MDN' },
          { id: b!.deviceIds[0]!.id, kind: b!.deviceIds[0]!.kind },
        ],
        smsMessage: 'hello',
      });
      expect(recipients(out.requestId)).to.deep.equal([mdn, b!.deviceIds[0]!.id].sort());
    });

    it('queues a message to every device of a group, on a plan', async () => {
      const d = seed.accounts[0]!.devices[2]!;
      const group = (await listed({ deviceId: d.deviceIds[0] }))[0]!.groupNames[0]!;
      const selection = { groupName: group, servicePlan: d.servicePlan };
      const expected = (await listed(selection)).map((x) => x.deviceIds[0]!.id).sort();
      expect(expected.length).to.be.greaterThan(0);
      const out = await client.sms.send({ accountName: account, ...selection, smsMessage: 'hi' });
      expect(recipients(out.requestId)).to.deep.equal(expected);
    });

    it('refuses the old devices list (400)', async () => {
      const r = await raw.api('POST', '/m2m/v1/sms', {
        accountName: account,
        devices: [{ deviceIds: [seed.accounts[0]!.devices[0]!.deviceIds[0]] }],
        smsMessage: 'hello',
      });
      expect(r.status).to.equal(400);
    });
  });

  describe('the optional fields of the device actions and price plan triggers', () => {
    type Rec = {
      deviceIds: { id: string; kind: string }[];
      carrierInformations: { servicePlan: string; state: string }[];
      groupNames: string[];
    };
    const all = async () =>
      ((await client.devices.list({ accountName: account })) as unknown as { devices: Rec[] }).devices;
    const first = (d: Rec) => d.deviceIds[0]!.id;
    const state = (d: Rec) => d.carrierInformations[0]!.state;
    const plan = (d: Rec) => d.carrierInformations[0]!.servicePlan;
    const inRequest = (requestId: string) =>
      emu
        .request(requestId)!
        .devices.map((d) => d.deviceIds[0]!.id)
        .sort();

    beforeEach(() => emu.reset({ seed: 'wire-shapes', devicesPerAccount: 40 }));

    it('suspend acts on every device of a groupName, and on no other', async () => {
      const before = await all();
      const group = before.find((d) => state(d) === 'active')!.groupNames[0]!;
      const members = before.filter((d) => d.groupNames.includes(group));
      const { requestId } = await client.devices.suspend({
        accountName: account,
        groupName: group,
        withBilling: true,
      });
      expect(inRequest(requestId)).to.deep.equal(members.map(first).sort());
      const after = new Map((await all()).map((d) => [first(d), d]));
      for (const d of before) {
        const now = state(after.get(first(d))!);
        if (members.includes(d) && state(d) === 'active') expect(now, first(d)).to.equal('suspend');
        else expect(now, first(d)).to.equal(state(d));
      }
    });

    it('the devices named are narrowed by servicePlan and customFields', async () => {
      const before = await all();
      const suspended = await client.devices.suspend({
        accountName: account,
        devices: before.filter((d) => state(d) === 'active').map((d) => d.deviceIds[0]!),
      });
      expect(emu.request(suspended.requestId)!.status).to.equal('Success');
      const named = before.filter((d) => state(d) === 'active');
      const onPlan = plan(named[0]!);
      const { requestId } = await client.devices.restore({
        accountName: account,
        devices: named.map((d) => d.deviceIds[0]!),
        servicePlan: onPlan,
      });
      const expected = named
        .filter((d) => plan(d) === onPlan)
        .map(first)
        .sort();
      expect(expected.length).to.be.lessThan(named.length);
      expect(inRequest(requestId)).to.deep.equal(expected);
      const group = named[0]!.groupNames[0]!;
      const { requestId: byField } = await client.devices.restore({
        accountName: account,
        devices: named.map((d) => d.deviceIds[0]!),
        customFields: [{ key: 'CustomField1', value: group }],
      });
      expect(inRequest(byField)).to.deep.equal(
        named
          .filter((d) => d.groupNames.includes(group))
          .map(first)
          .sort(),
      );
    });

    it('changePlan leaves only currentServicePlan, and not before takeEffect', async () => {
      const before = await all();
      const from = plan(before.find((d) => state(d) === 'active')!);
      const to = seed.plans.find((p) => p.code !== from)!.code;
      const takeEffect = new Date(emu.now() + 86_400_000).toISOString();
      const { requestId } = await client.devices.changePlan({
        accountName: account,
        devices: before.map((d) => d.deviceIds[0]!),
        currentServicePlan: from,
        servicePlan: to,
        takeEffect,
      });
      const moving = before.filter((d) => plan(d) === from);
      expect(inRequest(requestId)).to.deep.equal(moving.map(first).sort());
      const status = async () => (await client.requests.status({ accountName: account, requestId })).status;
      expect(await status()).to.equal('Pending');
      expect((await all()).filter((d) => plan(d) === to).map(first)).to.not.include.members(
        moving.map(first),
      );
      emu.advance(2 * 86_400);
      expect(await status()).to.be.oneOf(['Success', 'PartialSuccess']);
      const after = new Map((await all()).map((d) => [first(d), d]));
      for (const d of moving.filter((x) => state(x) !== 'deactive'))
        expect(plan(after.get(first(d))!)).to.equal(to);
    });

    it('deactivate acts on the devices of a group on a plan', async () => {
      const before = await all();
      const d0 = before.find((d) => state(d) === 'active')!;
      const selection = { groupName: d0.groupNames[0]!, servicePlan: plan(d0) };
      const { requestId } = await client.devices.deactivate({
        accountName: account,
        ...selection,
        reasonCode: 'FF',
      });
      const chosen = before.filter(
        (d) => d.groupNames.includes(selection.groupName) && plan(d) === selection.servicePlan,
      );
      expect(inRequest(requestId)).to.deep.equal(chosen.map(first).sort());
      const after = new Map((await all()).map((d) => [first(d), d]));
      for (const d of chosen) expect(state(after.get(first(d))!)).to.equal('deactive');
    });

    it('activate with devices named: groupName is the group they join', async () => {
      const before = await all();
      const idle = before.filter((d) => ['pending', 'deactive'].includes(state(d)));
      const target = 'South Fleet';
      const moving = idle.filter((d) => !d.groupNames.includes(target)).slice(0, 3);
      expect(moving.length).to.be.greaterThan(0);
      const { requestId } = await client.devices.activate({
        accountName: account,
        devices: moving.map((d) => d.deviceIds[0]!),
        servicePlan: plan(moving[0]!),
        groupName: target,
        costCenterCode: 'CC-42',
      });
      expect(inRequest(requestId)).to.deep.equal(moving.map(first).sort());
      const inGroup = (await client.devices.list({ accountName: account, groupName: target })).devices.map(
        (d) => d.deviceIds[0]!.id,
      );
      expect(inGroup).to.include.members(moving.map(first));
      raw.forget(); // the reset ended the sessions
      const unknown = await raw.api('POST', '/m2m/v1/devices/actions/activate', {
        accountName: account,
        devices: [{ deviceIds: [moving[0]!.deviceIds[0]] }],
        servicePlan: plan(moving[0]!),
        groupName: 'No Such Group',
      });
      expect(unknown.status).to.equal(400);
      expect((unknown.body as Json).errorMessage).to.equal('Device group not found: No Such Group');
    });

    it('a group that reaches no device is 400', async () => {
      raw.forget(); // the reset ended the sessions
      const r = await raw.api('POST', '/m2m/v1/devices/actions/suspend', {
        accountName: account,
        groupName: 'No Such Group',
      });
      expect(r.status).to.equal(400);
      expect((r.body as Json).errorMessage).to.equal('No device matches the request');
    });

    it('a pay-as-you-go trigger with deviceGroupName alerts for the devices of that group only', async () => {
      const listener = await new Listener().start();
      try {
        await client.callbacks.register({ accountName: account, name: 'DeviceUsage', url: listener.url });
        const before = await all();
        const d0 = before.find((d) => state(d) === 'active')!;
        const group = d0.groupNames[0]!;
        const code = plan(d0);
        const { triggerId } = await client.triggers.createPayAsYouGo({
          triggerName: 'any use',
          ecpdId: seed.profile.ecpdId,
          deviceGroupName: group,
          triggerCategory: 'PricePlanDataUsage',
          pricePlanTrigger: {
            payAsYouGo: {
              filterCriteria: { carrierServicePlanCode: code, accountNameList: [account] },
              condition: {
                conditionType: 'Individual',
                comparator: 'gt',
                threshold: 1,
                thresholdUnit: 'KB',
                cycleType: 'Daily',
              },
              action: {},
            },
          },
          notification: {
            notificationType: 'PerEvent',
            callback: true,
            notificationFrequencyFactor: 0,
            notificationFrequencyInterval: 'Daily',
            reminder: false,
            severity: 'Minor',
          },
          active: true,
        });
        const listed = (await client.triggers.list({ triggerId })).triggers[0]!;
        expect(listed.triggerAttributes).to.deep.include({ key: 'deviceGroupName', value: group });
        emu.advance(86_400);
        await emu.callbacksIdle();
        const alerted = listener.received.map(
          (r) =>
            (
              (((r.body.deviceResponse as Json).alertServiceResponse as Json).payAsYouGo as Json)
                .deviceIds as Json[]
            )[0]!.id,
        );
        const imeis = new Map(before.map((d) => [d.deviceIds.find((x) => x.kind === 'imei')!.id, d]));
        expect(alerted.length).to.be.greaterThan(0);
        for (const id of alerted) expect(imeis.get(String(id))!.groupNames).to.include(group);
        const inService = before.filter(
          (d) => d.groupNames.includes(group) && plan(d) === code && ['active', 'suspend'].includes(state(d)),
        );
        expect(alerted.length).to.be.at.most(inService.length);
      } finally {
        await listener.close();
      }
    });
  });

  describe('location callbacks', () => {
    it('register answers { account, name }, deregister { success: true }, as the real service', async () => {
      raw.forget();
      const reg = await raw.api('POST', `/loc/v1/callbacks/${account}`, {
        name: 'Location',
        url: 'https://hooks.example.com/loc',
      });
      expect(reg.status).to.equal(200);
      expect(reg.body).to.deep.equal({ account, name: 'Location' });
      expect(await client.locationCallbacks.list({ accountName: account })).to.deep.equal([
        { accountName: account, serviceName: 'Location', url: 'https://hooks.example.com/loc' },
      ]);
      const dereg = await raw.api('DELETE', `/loc/v1/callbacks/${account}/name/Location`);
      expect(dereg.status).to.equal(200);
      expect(dereg.body).to.deep.equal({ success: true });
      expect(await client.locationCallbacks.list({ accountName: account })).to.deep.equal([]);
    });

    it('the connectivity callbacks keep their answers', async () => {
      const url = 'https://hooks.example.com/carrier';
      expect(
        await client.callbacks.register({ accountName: account, name: 'CarrierService', url }),
      ).to.deep.equal({
        accountName: account,
        serviceName: 'CarrierService',
      });
      expect(
        await client.callbacks.deregister({ accountName: account, serviceName: 'CarrierService' }),
      ).to.deep.equal({
        accountName: account,
        serviceName: 'CarrierService',
      });
    });
  });

  describe('usageTriggers.update', () => {
    it('merges the members given into the trigger, and checks the result', async () => {
      const created = await client.usageTriggers.create({
        accountName: account,
        serviceName: 'Location',
        triggerName: 'loc-90',
        thresholdValue: '90',
        allowExcess: false,
        sendSmsNotification: true,
        smsPhoneNumbers: '2015550123',
      });
      const { triggerId } = created;
      const updated = await client.usageTriggers.update({
        triggerId,
        accountName: account,
        thresholdValue: 95,
      });
      expect(updated).to.deep.equal({ ...created, thresholdValue: '95', updateDate: updated.updateDate });
      const renamed = await client.usageTriggers.update({
        triggerId,
        accountName: account,
        triggerName: 'loc-95',
        sendEmailNotification: true,
        emailAddresses: 'ops@example.com',
      });
      expect(renamed).to.include({
        triggerName: 'loc-95',
        thresholdValue: '95',
        smsPhoneNumbers: '2015550123',
        sendEmailNotification: true,
        emailAddresses: 'ops@example.com',
      });
      raw.forget();
      const incomplete = await raw.api('POST', `/subsc/v1/usage/triggers/${triggerId}`, {
        accountName: account,
        emailAddresses: '',
      });
      expect(incomplete.status).to.equal(400);
      expect((incomplete.body as Json).errorMessage).to.equal(
        'emailAddresses is required when sendEmailNotification is true',
      );
    });
  });
});
