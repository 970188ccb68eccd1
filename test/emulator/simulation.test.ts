import { expect } from 'chai';
import type { Client } from '../../src/api/client.js';
import type { Emulator } from '../../src/emulator/index.js';
import {
  clientFor,
  emulator,
  idOf,
  Listener,
  Raw,
  world,
  type AccountView,
  type Json,
  type World,
} from './helpers.js';

const notification = (o: Json = {}) => ({
  notificationType: 'PerEvent',
  callback: true,
  notificationFrequencyFactor: 0,
  notificationFrequencyInterval: 'Daily',
  reminder: false,
  severity: 'Notice',
  ...o,
});

describe('emulator: simulated time', () => {
  let emu: Emulator;
  let raw: Raw;
  let client: Client;
  let w: World;
  let primary: AccountView;
  let listener: Listener;

  beforeEach(async () => {
    emu = await emulator({ seed: 'simulation', devicesPerAccount: 200 });
    raw = new Raw(emu);
    client = clientFor(emu);
    w = await world(raw);
    primary = w.accounts[0]!;
    listener = await new Listener().start();
    await client.callbacks.register({
      accountName: primary.accountName,
      name: 'DeviceUsage',
      url: listener.url,
    });
  });

  afterEach(async () => {
    await client.close();
    await listener.close();
    await emu.close();
  });

  const alerts = () =>
    listener.received.map(
      (r) => (r.body.deviceResponse as Json).alertServiceResponse as { payAsYouGo: Json },
    );

  it('Aging: activates once per device after the bill cycles given, and moves it to the new plan', async () => {
    const [from, to] = [w.plans[0]!.code, w.plans[2]!.code];
    const onPlan = primary.devices.filter(
      (d) => d.servicePlan === from && (d.state === 'active' || d.state === 'suspend'),
    );
    await client.triggers.createPayAsYouGo({
      triggerName: 'Move after two cycles',
      ecpdId: w.profile.ecpdId,
      triggerCategory: 'PricePlanDataUsage',
      pricePlanTrigger: {
        payAsYouGo: {
          filterCriteria: { carrierServicePlanCode: from, accountNameList: [primary.accountName] },
          condition: { conditionType: 'Aging' },
          action: {
            changePlan: true,
            agingDetails: { onNumberOfBillCycle: 2, toCarrierServicePlanCode: to },
          },
        },
      },
      notification: notification(),
      active: true,
    });
    // Every seed device is older than 30 days; a few months cover every device's second bill cycle.
    emu.advance(90 * 86_400);
    await emu.callbacksIdle();
    const moved = alerts().map((a) => ((a.payAsYouGo.deviceIds as Json[])[0] as Json).id);
    expect([...moved].sort()).to.deep.equal(onPlan.map((d) => idOf(d, 'imei')).sort());
    const now = await client.devices.list({ accountName: primary.accountName, servicePlan: to });
    const ids = new Set(now.devices.map((d) => d.deviceIds[0]!.id));
    for (const id of moved) expect(ids.has(id as string)).to.equal(true);
    const calls = (await raw.control('GET', '/calls')).body as { devices: Record<string, Json[]> };
    for (const id of moved)
      expect(calls.devices[id as string]!.map((m) => m.action)).to.deep.equal(['triggers.changePlan']);
  });

  it('DailySummary: one message per account at the end of the day, with every device that activated', async () => {
    const plan = w.plans[0]!.code;
    await client.triggers.createPayAsYouGo({
      triggerName: 'Daily summary over 1 MB',
      ecpdId: w.profile.ecpdId,
      triggerCategory: 'PricePlanDataUsage',
      pricePlanTrigger: {
        payAsYouGo: {
          filterCriteria: { carrierServicePlanCode: plan, accountNameList: [primary.accountName] },
          condition: { comparator: 'gt', threshold: 1, thresholdUnit: 'MB', cycleType: 'Daily' },
          action: {},
        },
      },
      notification: notification({ notificationType: 'DailySummary' }),
      active: true,
    });
    emu.advance(20 * 3600);
    await emu.callbacksIdle();
    expect(listener.received).to.have.length(0);
    emu.advance(4 * 3600);
    await emu.callbacksIdle();
    expect(listener.received).to.have.length(1);
    const devices = alerts()[0]!.payAsYouGo.deviceIds as Json[];
    expect(devices.length).to.be.greaterThan(1);
    expect(String(alerts()[0]!.payAsYouGo.message)).to.match(/^Daily summary: \d+ activation/);
  });

  it('AccountLevel with reminders: one activation for the account, then the reminders at their interval', async () => {
    const plan = w.plans[1]!.code;
    await client.triggers.createPayAsYouGo({
      triggerName: 'Account over 10 MB a day',
      ecpdId: w.profile.ecpdId,
      triggerCategory: 'PricePlanDataUsage',
      pricePlanTrigger: {
        payAsYouGo: {
          filterCriteria: { carrierServicePlanCode: plan, accountNameList: [primary.accountName] },
          condition: {
            conditionType: 'AccountLevel',
            comparator: 'gt',
            threshold: 10,
            thresholdUnit: 'MB',
            cycleType: 'Weekly',
          },
          action: {},
        },
      },
      notification: notification({
        reminder: true,
        notificationFrequencyFactor: 2,
        notificationFrequencyInterval: 'Hourly',
      }),
      active: true,
    });
    emu.advance(600);
    await emu.callbacksIdle();
    emu.advance(600);
    await emu.callbacksIdle();
    expect(listener.received).to.have.length(1);
    emu.advance(2 * 3600);
    await emu.callbacksIdle();
    const messages = alerts().map((a) => String(a.payAsYouGo.message));
    expect(messages).to.have.length(3);
    expect(messages[1]).to.match(/^Reminder 1 of 2: /);
    expect(messages[2]).to.match(/^Reminder 2 of 2: /);
    expect(new Set(listener.received.map((r) => r.body.requestId)).size).to.equal(3);
  });

  it('runs the clock by itself at timeScale: a report completes and its callback arrives without an advance', async () => {
    await raw.control('PUT', '/clock', { timeScale: 600 });
    const loc = await new Listener().start();
    try {
      await client.locationCallbacks.register({ accountName: primary.accountName, url: loc.url });
      const deviceList = primary.devices
        .filter((d) => d.iot)
        .slice(0, 5)
        .map((d) => ({ id: idOf(d, 'imei'), kind: 'imei' }));
      const created = await client.location.createReport({
        accountName: primary.accountName,
        deviceList,
        cacheMode: '1',
      });
      // Three simulated minutes are 0.3 s at 600x.
      await loc.waitFor(1, 3000);
      const status = await client.location.getReportStatus({
        accountName: primary.accountName,
        txid: created.reports[0]!.txid,
      });
      expect(status.status).to.equal('COMPLETED');
    } finally {
      await raw.control('PUT', '/clock', { timeScale: 0 });
      await loc.close();
    }
  });

  it('serves the POST-or-PATCH sensor operations both ways', async () => {
    for (const method of ['POST', 'PATCH']) {
      const r = await raw.api(method, '/dm/v1/devices/networkexperience/actions/query', {
        accountname: primary.accountName,
      });
      expect(r.status, method).to.equal(200);
      expect((r.body as Json).billingaccountid).to.equal(primary.accountName);
    }
  });
});
