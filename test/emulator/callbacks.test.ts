import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import type { Client } from '../../src/api/client.js';
import { DEFAULT_CALLBACK_SECRET, SIGNATURE_HEADER, type Emulator } from '../../src/emulator/index.js';
import {
  type AccountView,
  clientFor,
  emulator,
  imeiOf,
  type Json,
  Listener,
  Raw,
  sleep,
  world,
  type World,
} from './helpers.js';
import { notification } from '../helpers/action-cases.js';

describe('emulator: callbacks', () => {
  let emu: Emulator;
  let raw: Raw;
  let client: Client;
  let w: World;
  let primary: AccountView;
  let listener: Listener;

  before(async () => {
    emu = await emulator({ seed: 'callbacks', devicesPerAccount: 300 });
    raw = new Raw(emu);
    client = clientFor(emu);
    w = await world(raw);
    primary = w.accounts[0]!;
  });

  beforeEach(async () => {
    listener = await new Listener().start();
    await raw.control('PUT', '/faults', { callbackRetryMs: 20 });
  });

  afterEach(async () => {
    await emu.callbacksIdle();
    await listener.close();
    for (const serviceName of ['CarrierService', 'DeviceUsage', 'Location'] as const)
      await client.callbacks
        .deregister({ accountName: primary.accountName, serviceName })
        .catch(() => undefined);
  });

  after(async () => {
    await client.close();
    await emu.close();
  });

  const active = (skip = 0) => primary.devices.filter((d) => d.state === 'active')[skip]!;

  describe('delivery', () => {
    beforeEach(() =>
      client.callbacks.register({
        accountName: primary.accountName,
        name: 'CarrierService',
        url: listener.url,
        username: 'hook-user',
        password: 'hook-pass',
      }),
    );

    it('sends a CarrierService message per device with the envelope of public-api-facts.md', async () => {
      const d = active(0);
      const { requestId } = await client.devices.suspend({
        accountName: primary.accountName,
        devices: [imeiOf(d)],
      });
      await listener.waitFor(1);
      const body = listener.received[0]!.body;
      expect(Object.keys(body)).to.deep.equal([
        'username',
        'password',
        'requestId',
        'deviceIds',
        'deviceResponse',
        'status',
        'callbackCount',
        'maxCallbackThreshold',
      ]);
      expect(body).to.deep.include({
        username: 'hook-user',
        password: 'hook-pass',
        requestId,
        deviceIds: [imeiOf(d)],
        status: 'Success',
        callbackCount: 1,
        maxCallbackThreshold: 4,
      });
      expect(body.deviceResponse).to.deep.equal({ suspendResponse: { accountName: primary.accountName } });
      // Connectivity messages are not signed; only Location ones are.
      expect(listener.received[0]!.headers[SIGNATURE_HEADER]).to.equal(undefined);
      await client.devices.restore({ accountName: primary.accountName, devices: [imeiOf(d)] });
    });

    it('re-sends while the listener answers 500, and stops at maxCallbackThreshold', async () => {
      listener.status = () => 500;
      const { requestId } = await client.devices.suspend({
        accountName: primary.accountName,
        devices: [imeiOf(active(1))],
      });
      await listener.waitFor(4);
      await emu.callbacksIdle();
      await sleep(200);
      expect(listener.received).to.have.length(4);
      expect(listener.received.map((r) => r.body.callbackCount)).to.deep.equal([1, 2, 3, 4]);
      for (const r of listener.received) expect(r.body).to.include({ requestId, maxCallbackThreshold: 4 });
      const log = (await raw.control('GET', '/callbacks')).body as { deliveries: Json[] };
      const delivery = log.deliveries.find((x) => x.requestId === requestId)!;
      expect(delivery.state).to.equal('failed');
      expect((delivery.attempts as Json[]).map((a) => a.status)).to.deep.equal([500, 500, 500, 500]);
      await client.devices.restore({ accountName: primary.accountName, devices: [imeiOf(active(1))] });
    });

    it('stops re-sending once the listener acknowledges, and honours a lower maxCallbackThreshold', async () => {
      let calls = 0;
      listener.status = () => (++calls <= 2 ? 503 : 200);
      await client.devices.suspend({ accountName: primary.accountName, devices: [imeiOf(active(2))] });
      await listener.waitFor(3);
      await emu.callbacksIdle();
      expect(listener.received.map((r) => r.body.callbackCount)).to.deep.equal([1, 2, 3]);

      await raw.control('PUT', '/faults', { callbackRetryMs: 20, maxCallbackThreshold: 2 });
      listener.status = () => 500;
      await client.devices.restore({ accountName: primary.accountName, devices: [imeiOf(active(2))] });
      await listener.waitFor(5);
      await emu.callbacksIdle();
      expect(
        listener.received.slice(3).map((r) => [r.body.callbackCount, r.body.maxCallbackThreshold]),
      ).to.deep.equal([
        [1, 2],
        [2, 2],
      ]);
    });

    it('sends a message waiting to be sent again at once when asked, as its next attempt', async () => {
      // A wait no test sits out: the message is sent again when the test asks, or not at all.
      await raw.control('PUT', '/faults', { callbackRetryMs: 600_000 });
      let calls = 0;
      listener.status = () => (++calls === 1 ? 503 : 200);
      const d = active(6);
      await client.devices.suspend({ accountName: primary.accountName, devices: [imeiOf(d)] });
      await listener.waitFor(1);
      // Nothing waits until the refusal is read; then the one message does, and is sent.
      while (emu.resendCallbacksNow() === 0) await sleep(5);
      await listener.waitFor(2);
      await emu.callbacksIdle();
      expect(listener.received.map((r) => r.body.callbackCount)).to.deep.equal([1, 2]);
      expect(emu.resendCallbacksNow()).to.equal(0);
      await raw.control('PUT', '/faults', { callbackRetryMs: 20 });
      await client.devices.restore({ accountName: primary.accountName, devices: [imeiOf(d)] });
    });

    it('reports a device the action cannot apply to as failed in its own message, with a fault', async () => {
      const suspended = primary.devices.find((d) => d.state === 'suspend')!;
      const fine = active(3);
      await client.devices.restore({
        accountName: primary.accountName,
        devices: [imeiOf(suspended), imeiOf(fine)],
      });
      await client.devices.suspend({ accountName: primary.accountName, devices: [imeiOf(suspended)] });
      const pending = primary.devices.find((d) => d.state === 'pending')!;
      const { requestId } = await client.devices.suspend({
        accountName: primary.accountName,
        devices: [imeiOf(pending), imeiOf(fine)],
      });
      // Two for the restore (one per device), one for the first suspend, two for the last.
      await listener.waitFor(5);
      const last = listener.received.slice(3).map((r) => r.body);
      expect(last.map((b) => b.requestId)).to.deep.equal([requestId, requestId]);
      expect(last[0]).to.deep.include({
        deviceIds: [imeiOf(pending)],
        status: 'Failed',
        faultResponse: {
          faultcode: 'INVALID DEVICE STATE',
          faultstring: 'Only an active device can be suspended; the device is pending',
        },
      });
      expect(last[1]).to.deep.include({ deviceIds: [imeiOf(fine)], status: 'Success' });
      expect(last[1]!.faultResponse).to.equal(undefined);
      await client.devices.restore({ accountName: primary.accountName, devices: [imeiOf(fine)] });
    });
  });

  describe('Location', () => {
    beforeEach(() =>
      client.locationCallbacks.register({ accountName: primary.accountName, url: listener.url }),
    );

    it('signs each message with HMAC-SHA256 of the body, and sends none for a cacheMode 0 report', async () => {
      const deviceList = primary.devices
        .filter((d) => d.iot)
        .slice(0, 20)
        .map(imeiOf);
      await client.location.createReport({ accountName: primary.accountName, deviceList, cacheMode: '0' });
      const created = await client.location.createReport({
        accountName: primary.accountName,
        deviceList,
        cacheMode: '1',
      });
      const txid = created.reports[0]!.txid;
      emu.advance(Number(created.reports[0]!.estimatedDuration) * 60 - 1);
      await sleep(100);
      expect(listener.received).to.have.length(0);
      emu.advance(1);
      await listener.waitFor(1);
      await sleep(100);
      expect(listener.received).to.have.length(1);
      const { body, text, headers } = listener.received[0]!;
      expect(body.locationReportResponse as Json).to.include({ txid, status: 'COMPLETED', totalCount: 20 });
      const expected = `sha256=${createHmac('sha256', DEFAULT_CALLBACK_SECRET).update(text).digest('hex')}`;
      expect(headers[SIGNATURE_HEADER]).to.equal(expected);
    });

    it('alerts once per billing cycle when location usage passes a usage trigger, checked at midnight', async () => {
      emu.reset({ seed: 'callbacks', devicesPerAccount: 300 });
      await client.locationCallbacks.register({ accountName: primary.accountName, url: listener.url });
      const t = await client.usageTriggers.create({
        accountName: primary.accountName,
        serviceName: 'Location',
        triggerName: 'one percent',
        thresholdValue: '1',
        allowExcess: false,
        sendSmsNotification: false,
        sendEmailNotification: true,
        emailAddresses: 'ops@example.com',
      });
      const all = primary.devices.filter((d) => d.iot).map(imeiOf);
      // The subscription is 30 transactions per device a cycle: 1% of it is 90 for 300 devices.
      await client.location.createReport({ accountName: primary.accountName, deviceList: all.slice(0, 100) });
      emu.advance(3600);
      await sleep(50);
      expect(listener.received).to.have.length(0);
      emu.advance(86_400);
      await listener.waitFor(1);
      const alert = (listener.received[0]!.body.usageTriggerResponse as Json) ?? {};
      expect(alert).to.include({
        triggerId: t.triggerId,
        usedTransactions: 100,
        subscribedTransactions: 9000,
        usagePercentage: 1,
      });
      const notes = (await raw.control('GET', '/notifications')).body as Json[];
      expect(notes.some((n) => n.triggerId === t.triggerId && n.email === 'ops@example.com')).to.equal(true);
      emu.advance(2 * 86_400);
      await sleep(100);
      expect(listener.received).to.have.length(1);
      await client.usageTriggers.delete({ accountName: primary.accountName, triggerId: t.triggerId });
    });
  });

  describe('price plan triggers', () => {
    before(() => emu.reset({ seed: 'callbacks', devicesPerAccount: 300 }));
    beforeEach(() =>
      client.callbacks.register({ accountName: primary.accountName, name: 'DeviceUsage', url: listener.url }),
    );

    const trigger = (plan: string, action: Json, callback = true) =>
      client.triggers.createPayAsYouGo({
        triggerName: 'Over 5 MB a day',
        ecpdId: w.profile.ecpdId,
        triggerCategory: 'PricePlanDataUsage',
        pricePlanTrigger: {
          payAsYouGo: {
            filterCriteria: { carrierServicePlanCode: plan, accountNameList: [primary.accountName] },
            condition: {
              conditionType: 'Individual',
              comparator: 'gt',
              threshold: 5,
              thresholdUnit: 'MB',
              cycleType: 'Daily',
            },
            action,
          },
        },
        notification: { ...notification, callback, notificationFrequencyFactor: 0 },
        active: true,
      });

    it('activate per device on the simulated clock and send the spec section 6 payload', async () => {
      const plan = w.plans[0]!.code;
      const { triggerId } = await trigger(plan, {});
      // Half a day, then the rest: a device over the threshold at noon is still over it at midnight, and
      // must not activate twice in one cycle.
      emu.advance(43_200);
      await emu.callbacksIdle();
      const atNoon = listener.received.length;
      expect(atNoon).to.be.greaterThan(0);
      emu.advance(43_200);
      await emu.callbacksIdle();
      const alerts = listener.received.map(
        (r) => (r.body.deviceResponse as Json).alertServiceResponse as Json,
      );
      expect(alerts.length).to.be.greaterThan(0);
      // The usage of each device on the plan that day, one device per request.
      const over: string[] = [];
      for (const d of primary.devices.filter((x) => x.servicePlan === plan && x.state === 'active')) {
        const day = await client.devices.usage({
          deviceId: imeiOf(d),
          earliest: '2026-01-05T00:00:00Z',
          latest: '2026-01-06T00:00:00Z',
        });
        if (day.usageHistory.some((u) => u.bytesUsed > 5 * 1024 * 1024)) over.push(imeiOf(d).id);
      }
      const alerted = alerts.map((a) => ((a.payAsYouGo as Json).deviceIds as Json[])[0]!.id);
      expect([...alerted].sort()).to.deep.equal([...over].sort());
      for (const a of alerts) {
        expect(a).to.include({
          triggerId,
          triggerCategory: 'PricePlanDataUsage',
          accountName: primary.accountName,
        });
        const p = a.payAsYouGo as Json;
        expect(p).to.include({
          carrierServicePlanCode: plan,
          cycleType: 'DAILY',
          threshold: 5,
          thresholdUnit: 'MB',
          triggerValue: 5,
        });
        expect(
          String(p.triggerDateTime) >= '2026-01-05T00:00:00' && String(p.triggerDateTime) < '2026-01-06',
        ).to.equal(true);
      }
      expect(new Set(alerted).size).to.equal(alerted.length);
      expect(alerted.length).to.be.greaterThan(atNoon);
    });

    it('suspend the devices when the action says so, with or without a callback', async () => {
      emu.reset({ seed: 'callbacks', devicesPerAccount: 300 });
      await client.callbacks.register({
        accountName: primary.accountName,
        name: 'DeviceUsage',
        url: listener.url,
      });
      const plan = w.plans[1]!.code;
      await trigger(
        plan,
        { suspend: true, suspendDetails: { suspendDuration: '30', suspendOption: 'WithBilling' } },
        false,
      );
      emu.advance(86_400);
      await sleep(100);
      expect(listener.received).to.have.length(0);
      const calls = (await raw.control('GET', '/calls')).body as { devices: Record<string, Json[]> };
      const suspended = Object.entries(calls.devices).filter(([, list]) =>
        list.some((m) => m.action === 'triggers.suspend'),
      );
      expect(suspended.length).to.be.greaterThan(0);
      const listed = await client.devices.list({
        accountName: primary.accountName,
        currentState: 'suspend',
      });
      const ids = new Set(listed.devices.map((d) => d.deviceIds[0]!.id));
      for (const [id] of suspended) expect(ids.has(id)).to.equal(true);
    });
  });
});
