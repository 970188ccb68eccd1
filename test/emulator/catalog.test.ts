import { expect } from 'chai';
import type { Client } from '../../src/api/client.js';
import { ACTIONS, CATALOG, type ActionName } from '../../src/api/catalog.js';
import { check } from '../../src/api/validate.js';
import type { Emulator } from '../../src/emulator/index.js';
import { LOCATION_SKU } from '../../src/emulator/seed-tables.js';
import {
  clientFor,
  emulator,
  idOf,
  Listener,
  Raw,
  sleep,
  world,
  type AccountView,
  type Json,
  type World,
} from './helpers.js';

const NEW_ICCID = '89148000000012345678';
const NEW_IMEI = '490154203237518';

describe('emulator: the client calls every action of the catalog over loopback', () => {
  let emu: Emulator;
  let client: Client;
  let raw: Raw;
  let w: World;
  let primary: AccountView;
  let outside: AccountView;
  let listener: Listener;
  const made: Record<string, string> = {};

  const device = (pred: (d: AccountView['devices'][number]) => boolean, skip = 0) => {
    const found = primary.devices.filter(pred)[skip];
    if (!found) throw new Error('no such device in the seed');
    return found;
  };
  const imei = (d: AccountView['devices'][number]) => ({ id: idOf(d, 'imei'), kind: 'imei' });
  const locatable = (d: AccountView['devices'][number]) =>
    d.iot && d.state === 'active' && d.hasCachedLocation;

  before(async () => {
    emu = await emulator({ seed: 'catalog', devicesPerAccount: 80 });
    client = clientFor(emu);
    raw = new Raw(emu);
    w = await world(raw);
    primary = w.accounts[0]!;
    outside = w.accounts[2]!;
    listener = await new Listener().start();
  });

  after(async () => {
    await client.close();
    await listener.close();
    await emu.close();
  });

  /** Each action's input; some use what an earlier action made (tests run in catalog order). */
  const inputs: Record<ActionName, () => unknown> = {
    'session.login': () => ({ username: emu.defaults.username, password: emu.defaults.password }),
    'session.logout': () => ({}),
    'triggers.createPayAsYouGo': () => ({
      triggerName: 'Over 1 MB a day',
      ecpdId: w.profile.ecpdId,
      triggerCategory: 'pricePlanDataUsage',
      pricePlanTrigger: {
        payAsYouGo: {
          filterCriteria: {
            carrierServicePlanCode: Number(w.plans[0]!.code),
            accountNameList: [primary.accountName],
          },
          condition: {
            conditionType: 'Individual',
            comparator: 'gt',
            threshold: 1,
            thresholdUnit: 'MB',
            cycleType: 'Daily',
          },
          action: {},
        },
      },
      notification: {
        notificationType: 'PerEvent',
        callback: true,
        notificationFequencyFactor: 1,
        notificationFrequencyInterval: 'Daily',
        reminder: false,
        severity: 'Notice',
      },
      active: true,
    }),
    'triggers.updateAccountGroupShare': () => ({
      triggerId: made.trigger,
      triggerName: 'Share plan notice',
      ecpdId: w.profile.ecpdId,
      triggerCategory: 'PricePlanDataUsage',
      pricePlanTrigger: {
        accountShare: {
          accountGroupShareIndividual: {
            filterCriteria: { ratePlanGroupId: w.ratePlanGroups[0]!.id },
            condition: { action: 'notify' },
            action: {
              notify: {
                alertType: 'individualpriceplan',
                threshold: [{ carrierCode: w.plans[1]!.code, percentage: { percentage90: true } }],
              },
            },
          },
        },
      },
      notification: {
        notificationType: 'PerEvent',
        callback: false,
        notificationFrequencyFactor: 0,
        notificationFrequencyInterval: 'Daily',
        reminder: false,
        severity: 'Minor',
      },
      active: false,
    }),
    'triggers.list': () => ({ accountName: primary.accountName }),
    'location.setExclusions': () => ({
      accountName: primary.accountName,
      type: 'replace',
      exclusion: [
        idOf(
          device((d) => d.iot, 3),
          'imei',
        ),
      ],
    }),
    'location.getExclusions': () => ({ accountName: primary.accountName }),
    'location.locate': () => ({ accountName: primary.accountName, deviceList: [imei(device(locatable))] }),
    'location.createReport': () => ({
      accountName: primary.accountName,
      deviceList: primary.devices.slice(0, 30).map(imei),
      cacheMode: '0',
    }),
    'location.getReportStatus': () => ({ accountName: primary.accountName, txid: made.report }),
    'location.getReport': () => ({ accountName: primary.accountName, txid: made.report }),
    'location.cancelReport': () => ({ accountName: primary.accountName, txid: made.queued }),
    'usageTriggers.create': () => ({
      accountName: primary.accountName,
      serviceName: 'location',
      triggerName: 'Ninety percent',
      thresholdValue: 90,
      allowExcess: false,
      sendSmsNotification: true,
      smsPhoneNumbers: '2015550100',
      sendEmailNotification: false,
    }),
    'usageTriggers.update': () => ({
      triggerId: made.usageTrigger,
      accountName: primary.accountName,
      serviceName: 'Location',
      triggerName: 'Ninety-five percent',
      thresholdValue: '95',
      allowExcess: true,
      sendSmsNotification: false,
    }),
    'usageTriggers.delete': () => ({ accountName: primary.accountName, triggerId: made.usageTrigger }),
    'managedAccounts.add': () => ({
      accountName: primary.accountName,
      serviceName: 'Location',
      type: LOCATION_SKU,
      managedAccList: [{ id: outside.accountName }],
    }),
    'locationCallbacks.list': () => ({ accountName: primary.accountName }),
    'locationCallbacks.register': () => ({ accountName: primary.accountName, url: listener.url }),
    'locationCallbacks.deregister': () => ({ accountName: primary.accountName }),
    'callbacks.list': () => ({ accountName: primary.accountName }),
    'callbacks.register': () => ({
      accountName: primary.accountName,
      name: 'CarrierService',
      url: listener.url,
      username: 'hook',
      password: 'hook-secret',
    }),
    'callbacks.deregister': () => ({ accountName: primary.accountName, serviceName: 'DeviceUsage' }),
    'sensors.query': () => ({ accountname: primary.accountName, filter: { $limitnumber: 5 } }),
    'sensors.networkExperience': () => ({ accountname: primary.accountName }),
    'sensors.onboardingStatus': () => {
      const gw = device((d) => d.type === 'gateway');
      return {
        accountname: primary.accountName,
        gatewayidentifier: { deviceid: gw.uuid },
        onboarding: { sensoridentifiers: { deveui: gw.bleSensors![0]!.deveui } },
      };
    },
    'sensors.setConfiguration': () => ({
      accountName: primary.accountName,
      configuration: { HighPrecisionTiltConfig: { mode: 'periodic', holdTime: 500, 'angle-away': 30 } },
      resourceidentifier: { id: device((d) => d.type === 'sensor').uuid },
    }),
    'deviceProfiles.update': () => ({
      accountname: primary.accountName,
      profiles: {
        id: primary.profiles[0]!.id,
        name: 'Tilt every 12 h',
        configuration: { reportingInterval: 12 },
      },
    }),
    'rules.overwrite': () => ({
      accountname: primary.accountName,
      resourceidentifier: { id: primary.rules[0]!.id },
      rule: { name: 'Tilt alarm (40°)', disabled: true, rulesyntax: 'json' },
    }),
    'notificationGroups.removeUsers': () => ({
      accountname: primary.accountName,
      id: primary.notificationGroups[0]!.id,
      userids: [primary.notificationGroups[0]!.userids[0]],
    }),
    'devices.attributes': () => ({ deviceId: { id: idOf(primary.devices[0]!, 'iccid'), kind: 'iccid' } }),
    'devices.list': () => ({ accountName: primary.accountName, maxNumberOfDevices: 7 }),
    'devices.suspend': () => ({
      accountName: primary.accountName,
      devices: [imei(device((d) => d.state === 'active'))],
    }),
    'devices.restore': () => ({
      accountName: primary.accountName,
      devices: [imei(device((d) => d.state === 'active'))],
    }),
    'devices.activate': () => ({
      accountName: primary.accountName,
      // A device the account has never had: activation adds it (spec 4.5).
      devices: [
        {
          deviceIds: [
            { id: NEW_ICCID, kind: 'ICCID' },
            { id: NEW_IMEI, kind: 'imei' },
          ],
        },
      ],
      servicePlan: w.plans[1]!.code,
    }),
    'devices.deactivate': () => ({
      accountName: primary.accountName,
      devices: [imei(device((d) => d.state === 'active', 5))],
    }),
    'devices.changePlan': () => ({
      accountName: primary.accountName,
      devices: [imei(device((d) => d.state === 'active', 6))],
      servicePlan: w.plans[2]!.code,
    }),
    'devices.usage': () => ({
      deviceId: imei(device((d) => d.state === 'active', 7)),
      earliest: '2025-12-29T00:00:00Z',
      latest: '2026-01-05T00:00:00Z',
    }),
    'sms.send': () => ({
      accountName: primary.accountName,
      deviceIds: [imei(primary.devices[1]!)],
      smsMessage: 'ping',
    }),
    'requests.status': () => ({ accountName: primary.accountName, requestId: made.sms! }),
    'managedAccounts.provision': () => ({
      accountName: outside.accountName,
      paccountName: primary.accountName,
      serviceName: 'Location',
      type: LOCATION_SKU,
      txid: made.managedTx,
    }),
    'managedAccounts.cancel': () => ({
      accountName: outside.accountName,
      paccountName: primary.accountName,
      serviceName: 'Location',
      type: LOCATION_SKU,
      txid: made.provisioned,
    }),
    'managedAccounts.list': () => ({ accountName: primary.accountName }),
    'accounts.get': () => ({ accountName: primary.accountName }),
    'accounts.statesAndServices': () => ({ accountName: primary.accountName }),
    'plans.list': () => ({ accountName: primary.accountName }),
    'sms.history': () => ({ accountName: primary.accountName }),
    'sms.startCallbacks': () => ({ accountName: primary.accountName }),
    'location.subscription': () => ({ accountName: primary.accountName }),
    'location.usage': () => ({
      accountName: primary.accountName,
      startDate: '01-01-2026',
      endDate: '01-31-2026',
    }),
    'groups.create': () => ({
      accountName: primary.accountName,
      groupName: 'Cold chain',
      groupDescription: 'Refrigerated trailers',
      devicesToAdd: [imei(primary.devices[10]!), imei(primary.devices[11]!)],
    }),
    'groups.list': () => ({ accountName: primary.accountName }),
    'groups.get': () => ({ accountName: primary.accountName, groupName: 'Cold chain' }),
    'groups.update': () => ({
      accountName: primary.accountName,
      groupName: 'Cold chain',
      newGroupName: 'Cold chain East',
      devicesToRemove: [imei(primary.devices[11]!)],
    }),
    'groups.delete': () => ({ accountName: primary.accountName, groupName: 'Cold chain East' }),
    'devices.connectionHistory': () => ({
      deviceId: imei(device((d) => d.state === 'active', 7)),
      earliest: '2026-01-02T00:00:00Z',
      latest: '2026-01-05T00:00:00Z',
    }),
    // The device devices.suspend suspended and devices.restore restored.
    'devices.provisioningHistory': () => ({
      deviceId: imei(device((d) => d.state === 'active')),
      earliest: '2025-01-01T00:00:00Z',
      latest: '2026-01-06T00:00:00Z',
    }),
    'devices.suspensionStatus': () => ({ deviceIds: [imei(device((d) => d.state === 'active'))] }),
    'usage.aggregate': () => ({
      accountNumber: primary.accountName,
      imei: [
        idOf(
          device((d) => d.state === 'active', 7),
          'imei',
        ),
        '111111111111111',
      ],
      startDate: '2025-12-29',
      endDate: '2026-01-04',
    }),
    'usage.aggregateAsync': () => ({
      accountName: primary.accountName,
      groupName: 'North Fleet',
      startTime: '2025-12-29T00:00:00Z',
      endTime: '2026-01-05T00:00:00Z',
    }),
  };

  /** What each answer must show beyond matching the catalog's output schema. */
  const checks: Partial<Record<ActionName, (out: Json) => unknown>> = {
    'session.login': (out) => expect(out.sessionToken).to.be.a('string'),
    'triggers.createPayAsYouGo': (out) => {
      made.trigger = String(out.triggerId);
    },
    'triggers.list': async (out) => {
      const byId = await client.triggers.list({ triggerId: made.trigger! });
      expect(byId.triggers.map((t) => t.triggerId)).to.deep.equal([made.trigger]);
      const all = await client.triggers.list({});
      expect(all.triggers.length).to.equal(3);
      const t = (out.triggers as Json[]).find((x) => x.triggerId === made.trigger)!;
      expect(t.triggerName).to.equal('Share plan notice');
      expect(
        (t.triggerAttributes as Json[]).some((a) =>
          String(a.key).startsWith('pricePlanTrigger.accountGroupShare.'),
        ),
      ).to.equal(true);
    },
    'location.getExclusions': (out) => {
      expect(out.totalCount).to.equal(1);
      expect(out.allDevice).to.equal(false);
    },
    'location.locate': (out) => {
      const entries = out as unknown as Json[];
      expect(entries).to.have.length(1);
      expect(entries[0]!.error).to.deep.equal({});
      expect((entries[0]!.pd as Json).x).to.match(/^-?\d+\.\d{6}$/);
    },
    'location.createReport': async (out) => {
      const reports = out.reports as Json[];
      expect(reports).to.have.length(1);
      // Created QUEUED, as every report is; a cacheMode 0 report's status reads COMPLETED at once.
      expect(reports[0]!.status).to.equal('QUEUED');
      made.report = String(reports[0]!.txid);
      const queued = await client.location.createReport({
        accountName: primary.accountName,
        deviceList: [imei(primary.devices[0]!)],
        cacheMode: '2',
      });
      made.queued = queued.reports[0]!.txid;
    },
    'location.getReportStatus': (out) => expect(out.status).to.equal('COMPLETED'),
    'location.getReport': (out) => {
      expect(out.totalCount).to.equal(30);
      expect(out.devLocationList as Json[]).to.have.length(30);
    },
    'location.cancelReport': (out) => expect(out.txid).to.equal(made.queued),
    'usageTriggers.create': (out) => {
      made.usageTrigger = String(out.triggerId);
      expect(out.thresholdValue).to.equal('90');
      expect(out.createDate).to.equal('2026-01-05');
    },
    'usageTriggers.update': (out) => expect(out.triggerName).to.equal('Ninety-five percent'),
    'usageTriggers.delete': (out) => expect(out).to.deep.equal({ success: true }),
    'managedAccounts.add': (out) => {
      made.managedTx = String(out.TxId);
      expect(out.TxId).to.be.a('string');
      expect(out.statusList).to.deep.equal([
        { id: outside.accountName, status: 'Success', reason: 'Success' },
      ]);
    },
    'locationCallbacks.list': (out) => expect(out).to.deep.equal([]),
    'locationCallbacks.register': async (out) => {
      expect(out).to.deep.equal({ account: primary.accountName, name: 'Location' });
      const listed = await client.locationCallbacks.list({ accountName: primary.accountName });
      expect(listed).to.deep.equal([
        { accountName: primary.accountName, serviceName: 'Location', url: listener.url },
      ]);
    },
    'callbacks.register': async () => {
      await client.callbacks.register({
        accountName: primary.accountName,
        name: 'DeviceUsage',
        url: listener.url,
      });
      const listed = await client.callbacks.list({ accountName: primary.accountName });
      expect(listed.map((l) => l.serviceName).sort()).to.deep.equal(['CarrierService', 'DeviceUsage']);
      expect(listed.find((l) => l.serviceName === 'CarrierService')).to.include({
        username: 'hook',
        password: 'hook-secret',
      });
    },
    'sensors.query': (out) => {
      const records = out as unknown as Json[];
      expect(records).to.have.length.within(1, 5);
      for (const r of records) expect(r.billingaccountid).to.equal(primary.accountName);
    },
    'sensors.networkExperience': (out) => {
      expect(Number(out.devicesgood) + Number(out.devicesfair) + Number(out.devicesbad)).to.equal(
        out.devicestotal,
      );
    },
    'sensors.onboardingStatus': (out) => expect((out.events as Json[])[0]!.state).to.equal('success'),
    'sensors.setConfiguration': (out) => {
      const r = (out.actionresult as Json[])[0]!;
      expect(r.state).to.equal('success');
      expect(((r.fields as Json).deviceConfig as Json).HighPrecisionTiltConfig).to.deep.include({
        'hold-time': 500,
      });
    },
    'deviceProfiles.update': (out) => {
      const p = (out as unknown as Json[])[0]!;
      expect(p.name).to.equal('Tilt every 12 h');
      expect(p.configuration).to.deep.include({ reportingInterval: 12, randomInt: 1 });
    },
    'rules.overwrite': (out) =>
      expect(out).to.include({ name: 'Tilt alarm (40°)', disabled: true, version: '2' }),
    'notificationGroups.removeUsers': (out) => expect(out).to.equal(null),
    'devices.attributes': (out) => {
      const d = (out.devices as Json[])[0]!;
      expect(d.deviceIds as Json[]).to.deep.include({
        id: idOf(primary.devices[0]!, 'iccid'),
        kind: 'iccid',
      });
    },
    'devices.list': (out) => {
      const devices = out.devices as { deviceIds: { id: string }[] }[];
      expect(devices).to.have.length(80);
      const ids = devices.map((d) => d.deviceIds[0]!.id);
      expect(ids).to.deep.equal([...ids].sort());
    },
    'devices.suspend': (out) => expect(out.requestId).to.be.a('string'),
    'devices.activate': async () => {
      const found = await client.devices.attributes({ deviceId: { id: NEW_ICCID, kind: 'iccid' } });
      const d = found.devices[0]!;
      expect(d.accountName).to.equal(primary.accountName);
      expect(d.carrierInformations[0]).to.include({ state: 'active', servicePlan: w.plans[1]!.code });
      // The lookup names the imei, imsi and iccid (spec 2.13); a listing shows the MDN activation assigned.
      expect(d.deviceIds.map((x) => x.kind)).to.include.members(['iccid', 'imei']);
      const listed = await client.devices.list({
        accountName: primary.accountName,
        deviceId: { id: NEW_ICCID, kind: 'iccid' },
      });
      expect(listed.devices[0]!.deviceIds.map((x) => x.kind)).to.include.members(['mdn', 'msisdn']);
    },
    'devices.usage': (out) => {
      const h = out.usageHistory as Json[];
      expect(h).to.have.length(7);
      for (const r of h) expect(r.bytesUsed).to.be.a('number').and.be.greaterThan(0);
    },
    'sms.send': (out) => {
      made.sms = String(out.requestId);
    },
    'requests.status': (out) => expect(out).to.deep.equal({ requestId: made.sms, status: 'Success' }),
    'managedAccounts.provision': (out) => {
      expect(out).to.include({ accountName: outside.accountName, status: 'Success' });
      expect(out.txid).to.be.a('string').and.not.equal(made.managedTx);
      made.provisioned = String(out.txid);
    },
    'managedAccounts.cancel': (out) => expect(out).to.include({ status: 'Success' }),
    'managedAccounts.list': (out) => {
      // The cancelled account left the list; the seeded managed account is provisioned.
      expect(out.ManagedAccAddedList).to.deep.equal([]);
      expect((out.managedAccProvisionedList as Json[]).map((m) => m.id)).to.deep.equal([
        w.accounts[1]!.accountName,
      ]);
    },
    'accounts.get': (out) => {
      expect(out.accountName).to.equal(primary.accountName);
      expect((out.servicePlans as Json[]).map((p) => p.code)).to.deep.equal(w.plans.map((p) => p.code));
    },
    'accounts.statesAndServices': (out) => {
      const [engagement] = out.engagement as { services: { states: { name: string }[] }[] }[];
      expect(engagement!.services[0]!.states.map((s) => s.name)).to.deep.equal([
        'Pending',
        'Active',
        'Suspended',
        'Deactivated',
      ]);
    },
    'plans.list': (out) =>
      expect((out as unknown as Json[]).map((p) => p.code)).to.deep.equal(w.plans.map((p) => p.code)),
    'sms.history': async (out) => {
      const messages = out.messages as { timestamp: string }[];
      expect(messages.length).to.be.greaterThan(0);
      const times = messages.map((m) => m.timestamp);
      expect(times).to.deep.equal([...times].sort());
      expect(times[0]! >= '2025-12-29T00:00:00.000Z').to.equal(true);
      // For sms.startCallbacks next.
      await client.callbacks.register({
        accountName: primary.accountName,
        name: 'EnhancedConnectivityService',
        url: listener.url,
      });
      made.smsCount = String(messages.length);
    },
    'sms.startCallbacks': async (out) => {
      expect(out).to.deep.equal({ success: true });
      const sms = () =>
        listener.received.filter((m) => (m.body.deviceResponse as Json | undefined)?.smsResponse);
      for (let i = 0; i < 100 && sms().length < Number(made.smsCount); i++) await sleep(20);
      expect(sms()).to.have.length(Number(made.smsCount));
    },
    'location.subscription': (out) =>
      expect(out).to.include({ accountName: primary.accountName, locType: LOCATION_SKU }),
    'location.usage': async (out) => {
      const used = ((await world(raw)).accounts[0] as unknown as { locationUsed: number }).locationUsed;
      expect(used).to.be.greaterThan(0);
      expect(out.transactions).to.equal(used);
    },
    'groups.list': (out) => {
      const groups = out as unknown as { name: string; isDefaultGroup: boolean }[];
      expect(groups.map((g) => g.name)).to.include('Cold chain');
      expect(groups.find((g) => g.isDefaultGroup)?.name).to.equal('Default');
    },
    'groups.get': (out) =>
      expect((out.devices as AccountView['devices']).map((d) => d.deviceIds[0]!.id)).to.deep.equal([
        idOf(primary.devices[10]!, 'imei'),
        idOf(primary.devices[11]!, 'imei'),
      ]),
    'groups.update': async () => {
      const g = await client.groups.get({ accountName: primary.accountName, groupName: 'Cold chain East' });
      expect(g.devices.map((d) => d.deviceIds[0]!.id)).to.deep.equal([idOf(primary.devices[10]!, 'imei')]);
    },
    'groups.delete': async () => {
      const d = await client.groups.get({ accountName: primary.accountName, groupName: 'Default' });
      expect(d.devices.map((x) => x.deviceIds[0]!.id)).to.include(idOf(primary.devices[10]!, 'imei'));
    },
    'devices.connectionHistory': (out) => {
      const events = out.connectionHistory as { occurredAt: string; connectionEventAttributes: Json[] }[];
      expect(events.length).to.be.greaterThan(0);
      expect(events.map((e) => e.connectionEventAttributes[0]!.value)).to.deep.equal(
        events.map((_, i) => (i % 2 ? 'Stop' : 'Start')),
      );
    },
    'devices.provisioningHistory': (out) => {
      const [result] = out as unknown as { provisioningHistory: { eventType: string }[] }[];
      expect(result!.provisioningHistory.map((e) => e.eventType)).to.deep.equal([
        'Activate',
        'Suspend',
        'Restore',
      ]);
    },
    'usage.aggregate': (out) => {
      const [usage] = out.usage as { imei: string; bytesTransferred: number }[];
      expect(usage!.imei).to.equal(
        idOf(
          device((d) => d.state === 'active', 7),
          'imei',
        ),
      );
      expect(usage!.bytesTransferred).to.be.greaterThan(0);
      expect(out.errors).to.deep.equal([{ imei: '111111111111111', errorMessage: 'Device not found' }]);
    },
  };

  for (const action of ACTIONS) {
    it(action, async () => {
      const out = (await client.callByName(action, inputs[action]())) as Json;
      const problems = check(CATALOG[action].output, out);
      expect(problems, `${action} answer does not match the catalog's output schema`).to.deep.equal([]);
      await checks[action]?.(out);
    });
  }

  it('counted every action, and the session renewed itself after the logout', async () => {
    const calls = (await raw.control('GET', '/calls')).body as { actions: Record<string, number> };
    for (const action of ACTIONS) expect(calls.actions[action], action).to.be.at.least(1);
    expect(client.stats.sessionRenewals).to.be.at.least(1);
  });
});
