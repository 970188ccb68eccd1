import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { render } from '../../src/api/schema-files.js';
import { explainingAjv } from '../../src/api/validate.js';
import type { Client } from '../../src/api/client.js';
import type { Emulator } from '../../src/emulator/index.js';
import { eventSchemaFiles } from '../../src/events/files.js';
import { checkEvent, EVENT_SERVICES, eventExample, eventSchema } from '../../src/events/index.js';
import {
  clientFor,
  emulator,
  imeiOf,
  Listener,
  Raw,
  world,
  type AccountView,
  type Json,
  type World,
} from '../emulator/helpers.js';
import { notification } from '../helpers/action-cases.js';

/** What a playbook reads as `event`: the message without the listener's credentials and the counters. */
function asEvent(body: Json): Json {
  const { username: _u, password: _p, callbackCount: _c, maxCallbackThreshold: _m, ...event } = body;
  return event;
}

describe('events: the schema and example of every callback service', () => {
  it('has a schema and an example for each service the spec names, and the example validates', () => {
    expect(EVENT_SERVICES).to.include.members([
      'CarrierService',
      'DeviceSuspensionStatus',
      'DeviceUsage',
      'EnhancedConnectivityService',
      'Location',
      'DeviceProfileService',
      'DeviceService',
      'DiagnosticsService',
      'ExternalProvisioningChanges',
      'NetworkEventService',
      'StateService',
    ]);
    for (const s of EVENT_SERVICES) {
      expect(eventSchema(s), s).to.have.property('type', 'object');
      expect(checkEvent(s, eventExample(s)), s).to.deep.equal([]);
    }
  });

  it('refuses a misspelt member, a wrong type and a missing requestId, at their paths', () => {
    const e = eventExample('DeviceUsage');
    const alert = (e.deviceResponse as Json).alertServiceResponse as Json;
    alert.triggerNmae = alert.triggerName;
    (alert.payAsYouGo as Json).threshold = '5';
    delete e.requestId;
    const problems = checkEvent('DeviceUsage', e);
    const paths = problems.map((p) => p.path);
    expect(paths).to.include('/deviceResponse/alertServiceResponse/payAsYouGo/threshold');
    expect(problems.map((p) => p.message).join('\n')).to.match(/triggerNmae/);
    expect(problems.map((p) => p.message).join('\n')).to.match(/requestId/);
  });

  it('refuses the shape the old README taught for DeviceUsage (event.usage.bytes)', () => {
    const problems = checkEvent('DeviceUsage', { requestId: 'r-1', usage: { bytes: 1 } });
    expect(problems.map((p) => p.message).join('\n')).to.match(/usage/);
  });

  it('keeps the payload of a service it does not know open, and types its envelope', () => {
    const e = eventExample('StateService');
    (e.deviceResponse as Json).anything = { at: 'all' };
    e.someOtherResponse = { x: 1 };
    expect(checkEvent('StateService', e)).to.deep.equal([]);
    expect(checkEvent('StateService', { ...e, requestId: 7 }).map((p) => p.path)).to.deep.equal([
      '/requestId',
    ]);
  });

  it('names an unknown service, with the closest names', () => {
    const [p] = checkEvent('DeviceUsgae', {});
    expect(p).to.include({ path: '/' });
    expect(p!.message).to.match(/DeviceUsage/);
    expect(() => eventSchema('Nope')).to.throw(/unknown callback service Nope/);
  });

  it('gives a fresh copy of the example each time', () => {
    const a = eventExample('Location');
    a.requestId = 'changed';
    expect(eventExample('Location').requestId).to.not.equal('changed');
  });
});

describe('events: what the emulator sends validates against the schema of its service', () => {
  let emu: Emulator;
  let raw: Raw;
  let client: Client;
  let w: World;
  let acc: AccountView;
  let listener: Listener;

  before(async () => {
    emu = await emulator({ seed: 'events', devicesPerAccount: 120 });
    raw = new Raw(emu);
    client = clientFor(emu);
    w = await world(raw);
    acc = w.accounts[0]!;
    listener = await new Listener().start();
    for (const name of [
      'CarrierService',
      'DeviceUsage',
      'DeviceSuspensionStatus',
      'EnhancedConnectivityService',
    ])
      await client.callbacks.register({ accountName: acc.accountName, name, url: listener.url } as never);
    await client.locationCallbacks.register({ accountName: acc.accountName, url: listener.url });
  });

  after(async () => {
    await emu.callbacksIdle();
    await listener.close();
    await client.close();
    await emu.close();
  });

  it('sends messages of every kind it makes, each valid for its service', async () => {
    const inState = (s: string, skip = 0) => acc.devices.filter((d) => d.state === s)[skip]!;
    const accountName = acc.accountName;
    // CarrierService: success, failure (a fault), activation and plan change (a servicePlan).
    await client.devices.suspend({ accountName, devices: [imeiOf(inState('active'))] });
    await client.devices.suspend({ accountName, devices: [imeiOf(inState('deactive'))] });
    await client.devices.restore({ accountName, devices: [imeiOf(inState('active'))] });
    await client.devices.deactivate({ accountName, devices: [imeiOf(inState('active', 5))] } as never);
    const plan = w.plans[0]!.code;
    await client.devices.activate({
      accountName,
      devices: [imeiOf(inState('pending'))],
      servicePlan: plan,
    } as never);
    await client.devices.changePlan({
      accountName,
      devices: [imeiOf(inState('active', 1))],
      servicePlan: plan,
    });
    // DeviceSuspensionStatus and DeviceUsage (aggregated usage).
    await client.devices.suspensionStatus({ deviceIds: [imeiOf(inState('active', 2))] });
    await client.usage.aggregateAsync({
      deviceIds: [imeiOf(inState('active', 3))],
      startTime: '2025-12-29T00:00:00Z',
      endTime: '2026-01-05T00:00:00Z',
    });
    // EnhancedConnectivityService: the SMS devices sent.
    await client.sms.startCallbacks({ accountName });
    // DeviceUsage: a price plan trigger alert.
    await client.triggers.createPayAsYouGo({
      triggerName: 'overuse',
      ecpdId: w.profile.ecpdId,
      triggerCategory: 'PricePlanDataUsage',
      pricePlanTrigger: {
        payAsYouGo: {
          filterCriteria: { carrierServicePlanCode: plan, accountNameList: [accountName] },
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
      notification: { ...notification, notificationFrequencyFactor: 0 },
      active: true,
    } as never);
    // Location: a report completed, and a usage trigger alert.
    await client.usageTriggers.create({
      accountName,
      serviceName: 'Location',
      triggerName: 'one percent',
      thresholdValue: '1',
      allowExcess: false,
      sendSmsNotification: false,
      sendEmailNotification: false,
    } as never);
    const deviceList = acc.devices.filter((d) => d.iot).map(imeiOf);
    const report = await client.location.createReport({ accountName, deviceList, cacheMode: '1' });
    emu.advance(Number(report.reports[0]!.estimatedDuration) * 60);
    emu.advance(86_400);
    await emu.callbacksIdle();

    const { deliveries } = (await raw.control('GET', '/callbacks')).body as {
      deliveries: { service: string; kind: string; body: Json }[];
    };
    const kinds = new Set<string>();
    for (const d of deliveries) {
      kinds.add(`${d.service} ${d.kind}`);
      const event = asEvent(d.body);
      expect(checkEvent(d.service, event), `${d.service} ${d.kind}: ${JSON.stringify(event)}`).to.deep.equal(
        [],
      );
    }
    expect([...kinds].sort()).to.deep.equal([
      'CarrierService activateResponse',
      'CarrierService changePlanResponse',
      'CarrierService deactivateResponse',
      'CarrierService restoreResponse',
      'CarrierService suspendResponse',
      'DeviceSuspensionStatus suspensionStatusResponse',
      'DeviceUsage alertServiceResponse',
      'DeviceUsage usageResponse',
      'EnhancedConnectivityService smsResponse',
      'Location locationReportResponse',
      'Location usageTriggerResponse',
    ]);
    const failed = deliveries.find((d) => d.body.status === 'Failed');
    expect(failed?.body.faultResponse, 'a failed device carries its fault').to.be.an('object');
  });
});

describe('schemas/events', () => {
  it('are up to date (run `npm run schemas` when this fails), and each example validates', async () => {
    const dir = join(import.meta.dirname, '..', '..', 'schemas', 'events');
    const files = eventSchemaFiles();
    expect((await readdir(dir)).sort()).to.deep.equal([...files.keys()].sort());
    for (const [name, schema] of files) {
      expect(await readFile(join(dir, name), 'utf8'), name).to.equal(render(schema));
      const { $id: _id, examples, ...rest } = schema as { $id: string; examples: unknown[] };
      expect(explainingAjv().compile(rest)(examples[0]), name).to.equal(true);
    }
  });
});
