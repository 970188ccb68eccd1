/**
 * The real service's wire shapes where the spec is silent (issue 17, docs/spec-decisions.md), as the emulator
 * accepts and emulates them, driven over loopback: the optional members of the device actions and price plan
 * triggers, the answers of the Location listener operations, and the partial usage trigger update. The
 * session header, devices.list, devices.usage and sms.send are in wire-shapes.test.ts.
 */
import { expect } from 'chai';
import type { Emulator } from '../../src/emulator/index.js';
import type { Client } from '../../src/api/client.js';
import { clientFor, emulator, Listener, Raw, world, type Json, type World } from './helpers.js';

describe('emulator: the real service wire shapes of device actions, listeners and usage triggers', function () {
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
