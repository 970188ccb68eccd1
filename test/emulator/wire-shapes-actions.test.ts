/**
 * The real service's wire shapes where the spec is silent (issue 17, docs/spec-decisions.md), as the emulator
 * accepts and emulates them, driven over loopback: the optional members of the device actions and price plan
 * triggers, the answers of the Location listener operations, and the partial usage trigger update. The
 * session header, devices.list, devices.usage and sms.send are in wire-shapes.test.ts.
 */
import { expect } from 'chai';
import { Listener, onWorld, type Json } from './helpers.js';
import { notification } from '../helpers/action-cases.js';

describe('emulator: the real service wire shapes of device actions, listeners and usage triggers', function () {
  this.timeout(30_000);
  const t = onWorld({ seed: 'wire-shapes', devicesPerAccount: 40 });

  describe('the optional fields of the device actions and price plan triggers', () => {
    type Rec = {
      deviceIds: { id: string; kind: string }[];
      carrierInformations: { servicePlan: string; state: string }[];
      groupNames: string[];
    };
    const all = async () =>
      ((await t.client.devices.list({ accountName: t.account })) as unknown as { devices: Rec[] }).devices;
    const first = (d: Rec) => d.deviceIds[0]!.id;
    const state = (d: Rec) => d.carrierInformations[0]!.state;
    const plan = (d: Rec) => d.carrierInformations[0]!.servicePlan;
    const inRequest = (requestId: string) =>
      t.emu
        .request(requestId)!
        .devices.map((d) => d.deviceIds[0]!.id)
        .sort();

    beforeEach(() => t.emu.reset({ seed: 'wire-shapes', devicesPerAccount: 40 }));

    it('suspend acts on every device of a groupName, and on no other', async () => {
      const before = await all();
      const group = before.find((d) => state(d) === 'active')!.groupNames[0]!;
      const members = before.filter((d) => d.groupNames.includes(group));
      const { requestId } = await t.client.devices.suspend({
        accountName: t.account,
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
      const suspended = await t.client.devices.suspend({
        accountName: t.account,
        devices: before.filter((d) => state(d) === 'active').map((d) => d.deviceIds[0]!),
      });
      expect(t.emu.request(suspended.requestId)!.status).to.equal('Success');
      const named = before.filter((d) => state(d) === 'active');
      const onPlan = plan(named[0]!);
      const { requestId } = await t.client.devices.restore({
        accountName: t.account,
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
      const { requestId: byField } = await t.client.devices.restore({
        accountName: t.account,
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
      const to = t.seed.plans.find((p) => p.code !== from)!.code;
      const takeEffect = new Date(t.emu.now() + 86_400_000).toISOString();
      const { requestId } = await t.client.devices.changePlan({
        accountName: t.account,
        devices: before.map((d) => d.deviceIds[0]!),
        currentServicePlan: from,
        servicePlan: to,
        takeEffect,
      });
      const moving = before.filter((d) => plan(d) === from);
      expect(inRequest(requestId)).to.deep.equal(moving.map(first).sort());
      const status = async () =>
        (await t.client.requests.status({ accountName: t.account, requestId })).status;
      expect(await status()).to.equal('Pending');
      expect((await all()).filter((d) => plan(d) === to).map(first)).to.not.include.members(
        moving.map(first),
      );
      t.emu.advance(2 * 86_400);
      expect(await status()).to.be.oneOf(['Success', 'PartialSuccess']);
      const after = new Map((await all()).map((d) => [first(d), d]));
      for (const d of moving.filter((x) => state(x) !== 'deactive'))
        expect(plan(after.get(first(d))!)).to.equal(to);
    });

    it('deactivate acts on the devices of a group on a plan', async () => {
      const before = await all();
      const d0 = before.find((d) => state(d) === 'active')!;
      const selection = { groupName: d0.groupNames[0]!, servicePlan: plan(d0) };
      const { requestId } = await t.client.devices.deactivate({
        accountName: t.account,
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
      const { requestId } = await t.client.devices.activate({
        accountName: t.account,
        devices: moving.map((d) => d.deviceIds[0]!),
        servicePlan: plan(moving[0]!),
        groupName: target,
        costCenterCode: 'CC-42',
      });
      expect(inRequest(requestId)).to.deep.equal(moving.map(first).sort());
      const inGroup = (
        await t.client.devices.list({ accountName: t.account, groupName: target })
      ).devices.map((d) => d.deviceIds[0]!.id);
      expect(inGroup).to.include.members(moving.map(first));
      t.raw.forget(); // the reset ended the sessions
      const unknown = await t.raw.api('POST', '/m2m/v1/devices/actions/activate', {
        accountName: t.account,
        devices: [{ deviceIds: [moving[0]!.deviceIds[0]] }],
        servicePlan: plan(moving[0]!),
        groupName: 'No Such Group',
      });
      expect(unknown.status).to.equal(400);
      expect((unknown.body as Json).errorMessage).to.equal('Device group not found: No Such Group');
    });

    it('a group that reaches no device is 400', async () => {
      t.raw.forget(); // the reset ended the sessions
      const r = await t.raw.api('POST', '/m2m/v1/devices/actions/suspend', {
        accountName: t.account,
        groupName: 'No Such Group',
      });
      expect(r.status).to.equal(400);
      expect((r.body as Json).errorMessage).to.equal('No device matches the request');
    });

    it('a pay-as-you-go trigger with deviceGroupName alerts for the devices of that group only', async () => {
      const listener = await new Listener().start();
      try {
        await t.client.callbacks.register({ accountName: t.account, name: 'DeviceUsage', url: listener.url });
        const before = await all();
        const d0 = before.find((d) => state(d) === 'active')!;
        const group = d0.groupNames[0]!;
        const code = plan(d0);
        const { triggerId } = await t.client.triggers.createPayAsYouGo({
          triggerName: 'any use',
          ecpdId: t.seed.profile.ecpdId,
          deviceGroupName: group,
          triggerCategory: 'PricePlanDataUsage',
          pricePlanTrigger: {
            payAsYouGo: {
              filterCriteria: { carrierServicePlanCode: code, accountNameList: [t.account] },
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
          notification: { ...notification, notificationFrequencyFactor: 0, severity: 'Minor' },
          active: true,
        });
        const listed = (await t.client.triggers.list({ triggerId })).triggers[0]!;
        expect(listed.triggerAttributes).to.deep.include({ key: 'deviceGroupName', value: group });
        t.emu.advance(86_400);
        await t.emu.callbacksIdle();
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
    it('register answers { t.account, name }, deregister { success: true }, as the real service', async () => {
      t.raw.forget();
      const reg = await t.raw.api('POST', `/loc/v1/callbacks/${t.account}`, {
        name: 'Location',
        url: 'https://hooks.example.com/loc',
      });
      expect(reg.status).to.equal(200);
      expect(reg.body).to.deep.equal({ account: t.account, name: 'Location' });
      expect(await t.client.locationCallbacks.list({ accountName: t.account })).to.deep.equal([
        { accountName: t.account, serviceName: 'Location', url: 'https://hooks.example.com/loc' },
      ]);
      const dereg = await t.raw.api('DELETE', `/loc/v1/callbacks/${t.account}/name/Location`);
      expect(dereg.status).to.equal(200);
      expect(dereg.body).to.deep.equal({ success: true });
      expect(await t.client.locationCallbacks.list({ accountName: t.account })).to.deep.equal([]);
    });

    it('the listing answers an empty body when none is registered (spec 4.2); the client reads []', async () => {
      for (const path of [`/fota/v1/callbacks/${t.account}`, `/loc/v1/callbacks/${t.account}`]) {
        const listed = await t.raw.api('GET', path);
        expect(listed.status, path).to.equal(200);
        expect(listed.text, path).to.equal('');
      }
      expect(await t.client.locationCallbacks.list({ accountName: t.account })).to.deep.equal([]);
    });

    it('the connectivity callbacks keep their answers', async () => {
      const url = 'https://hooks.example.com/carrier';
      expect(
        await t.client.callbacks.register({ accountName: t.account, name: 'CarrierService', url }),
      ).to.deep.equal({
        accountName: t.account,
        serviceName: 'CarrierService',
      });
      expect(
        await t.client.callbacks.deregister({ accountName: t.account, serviceName: 'CarrierService' }),
      ).to.deep.equal({
        accountName: t.account,
        serviceName: 'CarrierService',
      });
    });
  });

  describe('usageTriggers.update', () => {
    it('merges the members given into the trigger, and checks the result', async () => {
      const created = await t.client.usageTriggers.create({
        accountName: t.account,
        serviceName: 'Location',
        triggerName: 'loc-90',
        thresholdValue: '90',
        allowExcess: false,
        sendSmsNotification: true,
        smsPhoneNumbers: '2015550123',
      });
      const { triggerId } = created;
      const updated = await t.client.usageTriggers.update({
        triggerId,
        accountName: t.account,
        thresholdValue: 95,
      });
      expect(updated).to.deep.equal({ ...created, thresholdValue: '95', updateDate: updated.updateDate });
      const renamed = await t.client.usageTriggers.update({
        triggerId,
        accountName: t.account,
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
      t.raw.forget();
      const incomplete = await t.raw.api('POST', `/subsc/v1/usage/triggers/${triggerId}`, {
        accountName: t.account,
        emailAddresses: '',
      });
      expect(incomplete.status).to.equal(400);
      expect((incomplete.body as Json).errorMessage).to.equal(
        'emailAddresses is required when sendEmailNotification is true',
      );
    });
  });
});
