/**
 * The real service's request shapes where the spec is silent (issue 17, docs/spec-decisions.md): the exact
 * bytes each sends, against a recording server, and the old invented spellings refused with the real name.
 */
import { expect } from 'chai';
import { CATALOG } from '../../src/api/catalog.js';
import { createClient, type Client } from '../../src/api/client.js';
import { explainingAjv } from '../../src/api/validate.js';
import { InputError } from '../../src/errors.js';
import { ACC, CASES } from '../helpers/action-cases.js';
import { FAST_RATES, Recorder } from '../helpers/recorder.js';

const IMEI = '353456789012345';
type Json = Record<string, unknown>;

describe('the real service wire shapes', () => {
  let rec: Recorder;
  let client: Client;
  before(async () => {
    rec = await Recorder.start();
    client = createClient({ baseUrl: rec.baseUrl, ...rec.credentials, rates: FAST_RATES });
  });
  after(async () => {
    await client.close();
    await rec.close();
  });
  beforeEach(() => {
    rec.requests.length = 0;
  });

  /** The one request sent to `path`: its raw body. */
  function bodyTo(path: string): string {
    const sent = rec.requestsTo(`/api${path}`);
    expect(sent, `one request to ${path}`).to.have.length(1);
    return sent[0]!.rawBody;
  }

  /** The messages of the InputError `call` throws; nothing is sent. */
  async function refused(call: () => Promise<unknown>): Promise<string[]> {
    const before = rec.apiRequests().length;
    try {
      await call();
    } catch (e) {
      expect(e).to.be.instanceOf(InputError);
      expect(rec.apiRequests().length, 'nothing sent').to.equal(before);
      return (e as InputError).problems.map((p) => `${p.path}: ${p.message}`);
    }
    return expect.fail('the input was accepted');
  }

  describe('devices.list', () => {
    it('sends the selection at the top level and identifier matches under filter, kinds in lower case', async () => {
      rec.enqueue('POST /api/m2m/v1/devices/actions/list', { body: { hasMoreData: false, devices: [] } });
      await client.devices.list({
        accountName: ACC,
        groupName: 'North Fleet',
        servicePlan: 'M2M4G',
        currentState: 'active',
        earliest: '2026-01-01T00:00:00Z',
        latest: '2026-02-01T00:00:00Z',
        customFields: [{ key: 'CustomField1', value: 'North Fleet' }],
        deviceId: { id: IMEI, kind: 'IMEI' },
        filter: { deviceIdentifierFilters: [{ kind: 'ICCID', startswith: '8914' }] },
        maxNumberOfDevices: 500,
      });
      expect(bodyTo('/m2m/v1/devices/actions/list')).to.equal(
        JSON.stringify({
          accountName: ACC,
          groupName: 'North Fleet',
          servicePlan: 'M2M4G',
          currentState: 'active',
          earliest: '2026-01-01T00:00:00Z',
          latest: '2026-02-01T00:00:00Z',
          customFields: [{ key: 'CustomField1', value: 'North Fleet' }],
          deviceId: { id: IMEI, kind: 'imei' },
          filter: { deviceIdentifierFilters: [{ kind: 'iccid', startswith: '8914' }] },
          maxNumberOfDevices: 500,
        }),
      );
    });

    it('takes largestDeviceIdSeen as a number too, and sends it as given', async () => {
      rec.enqueue('POST /api/m2m/v1/devices/actions/list', { body: { hasMoreData: false, devices: [] } });
      await client.devices.list({ accountName: ACC, largestDeviceIdSeen: 353456789012345 });
      expect(bodyTo('/m2m/v1/devices/actions/list')).to.equal(
        `{"accountName":"${ACC}","largestDeviceIdSeen":353456789012345}`,
      );
    });

    it('refuses the old invented filter members, naming the real field', async () => {
      const list = (filter: object) => () => client.callByName('devices.list', { accountName: ACC, filter });
      // Beside the member it names, `filter` without deviceIdentifierFilters is incomplete.
      const moved = async (filter: object) =>
        (await refused(list(filter))).filter((m) => !m.startsWith('/filter/deviceIdentifierFilters:'));
      expect(await moved({ state: 'active' })).to.deep.equal([
        '/filter/state: unknown field `state`: use `currentState` at the top level',
      ]);
      expect(await moved({ groupName: 'North Fleet', servicePlan: 'M2M4G' })).to.deep.equal([
        '/filter/groupName: unknown field `groupName`: use `groupName` at the top level',
        '/filter/servicePlan: unknown field `servicePlan`: use `servicePlan` at the top level',
      ]);
      expect(await moved({ kind: 'imei' })).to.deep.equal([
        '/filter/kind: unknown field `kind`: use `deviceIdentifierFilters: [{ kind, contains | startswith | endswith }]`',
      ]);
    });

    it('names the field meant by a misspelt one, nothing sent', async () => {
      expect(
        await refused(() =>
          client.callByName('devices.list', {
            accountName: ACC,
            maxNumberOfDevice: 2,
            currentStat: 'active',
          }),
        ),
      ).to.deep.equal([
        '/maxNumberOfDevice: unknown field `maxNumberOfDevice` (did you mean `maxNumberOfDevices`?)',
        '/currentStat: unknown field `currentStat` (did you mean `currentState`?)',
      ]);
    });

    it('refuses an identifier filter without a string to match', async () => {
      expect(
        await refused(() =>
          client.callByName('devices.list', {
            accountName: ACC,
            filter: { deviceIdentifierFilters: [{ kind: 'imei' }] },
          }),
        ),
      ).to.deep.equal([
        '/filter/deviceIdentifierFilters/0: an identifier filter takes kind and at least one of contains, startswith, endswith',
      ]);
    });
  });

  describe('devices.usage', () => {
    const PATH = '/m2m/v1/devices/usage/actions/list';

    it('asks for the usage history of one device', async () => {
      rec.enqueue(`POST /api${PATH}`, { body: { hasMoreData: false, usageHistory: [] } });
      await client.devices.usage({
        deviceId: { id: IMEI, kind: 'IMEI' },
        earliest: '2026-01-01T00:00:00Z',
        latest: '2026-01-31T00:00:00Z',
      });
      expect(bodyTo(PATH)).to.equal(
        `{"deviceId":{"id":"${IMEI}","kind":"imei"},"earliest":"2026-01-01T00:00:00Z","latest":"2026-01-31T00:00:00Z"}`,
      );
    });

    it('refuses a list of devices, naming the one-device field', async () => {
      expect(
        await refused(() =>
          client.callByName('devices.usage', {
            deviceId: { id: IMEI, kind: 'imei' },
            devices: [{ id: IMEI, kind: 'imei' }],
            earliest: '2026-01-01T00:00:00Z',
            latest: '2026-01-31T00:00:00Z',
          }),
        ),
      ).to.deep.equal([
        '/devices: unknown field `devices`: use `deviceId`, one device per call (a forEach step for several)',
      ]);
    });
  });

  describe('the device actions', () => {
    it('send flat devices as one identifier each, every kind in lower case whatever came before it', async () => {
      rec.enqueue('POST /api/m2m/v1/devices/actions/suspend', { body: { requestId: 'r-1' } });
      const ICCID = '89148000000000000001';
      const given = [
        { id: IMEI, kind: 'IMEI' },
        { id: '353456789012346', kind: 'imei' },
        { id: ICCID, kind: 'ICCID' },
        { id: '89148000000000000002', kind: 'iccid' },
        { id: '353456789012347', kind: 'IMEI' },
        { id: '353456789012348', kind: 'IMEI' },
      ];
      await client.devices.suspend({ accountName: ACC, devices: given });
      expect(bodyTo('/m2m/v1/devices/actions/suspend')).to.equal(
        JSON.stringify({
          accountName: ACC,
          devices: given.map(({ id, kind }) => ({ deviceIds: [{ id, kind: kind.toLowerCase() }] })),
        }),
      );
    });
  });

  describe('sms.send', () => {
    it('sends a flat deviceIds list, kinds in lower case', async () => {
      rec.enqueue('POST /api/m2m/v1/sms', { body: { requestId: 'r-1' } });
      await client.sms.send({
        accountName: ACC,
        deviceIds: [
          { id: IMEI, kind: 'IMEI' },
          { id: '2015550123', kind: 'mdn' },
        ],
        smsMessage: 'reboot',
        dataEncoding: '7-bit',
      });
      expect(bodyTo('/m2m/v1/sms')).to.equal(
        JSON.stringify({
          accountName: ACC,
          deviceIds: [
            { id: IMEI, kind: 'imei' },
            { id: '2015550123', kind: 'mdn' },
          ],
          smsMessage: 'reboot',
          dataEncoding: '7-bit',
        }),
      );
    });

    it('sends to a device group, narrowed by plan and custom fields', async () => {
      rec.enqueue('POST /api/m2m/v1/sms', { body: { requestId: 'r-2' } });
      await client.sms.send({
        accountName: ACC,
        groupName: 'North Fleet',
        servicePlan: 'M2M4G',
        customFields: [{ key: 'CustomField1', value: 'North Fleet' }],
        smsMessage: 'reboot',
      });
      expect(bodyTo('/m2m/v1/sms')).to.equal(
        `{"accountName":"${ACC}","groupName":"North Fleet","servicePlan":"M2M4G","customFields":[{"key":"CustomField1","value":"North Fleet"}],"smsMessage":"reboot"}`,
      );
    });

    it('refuses the old devices list, naming deviceIds, and a message to no one', async () => {
      expect(
        await refused(() =>
          client.callByName('sms.send', {
            accountName: ACC,
            devices: [{ deviceIds: [{ id: IMEI, kind: 'imei' }] }],
            smsMessage: 'reboot',
          }),
        ),
      ).to.include('/devices: unknown field `devices`: use `deviceIds: [{ id, kind }]`, a flat list');
      expect(
        await refused(() => client.callByName('sms.send', { accountName: ACC, smsMessage: 'reboot' })),
      ).to.deep.equal(['/deviceIds: deviceIds is required: name the devices, or give a groupName']);
    });
  });

  describe('the optional fields of the device actions and price plan triggers', () => {
    const sent = async (path: string, call: () => Promise<unknown>) => {
      rec.enqueue(`/api${path}`, { body: { requestId: 'r-1', triggerId: 't-1' } });
      await call();
      return JSON.parse(bodyTo(path)) as unknown;
    };
    const device = { deviceIds: [{ id: IMEI, kind: 'imei' }] };
    const place = {
      address: {
        addressLine1: '1 Main St',
        city: 'Bedminster',
        state: 'NJ',
        zip: '07921',
        country: 'USA',
      },
      customerName: { firstName: 'Ada', lastName: 'Lovelace' },
    };

    it('activate: every member the service takes, sent as given', async () => {
      const input = {
        accountName: ACC,
        devices: [device],
        servicePlan: 'M2M4G',
        mdnZipCode: '07920',
        skuNumber: 'SKU-1',
        carrierIpPoolName: 'Pool01',
        carrierName: 'Wireless Carrier',
        costCenterCode: 'CC-42',
        customFields: [{ key: 'CustomField2', value: 'north' }],
        groupName: 'North Fleet',
        leadId: 'lead-7',
        primaryPlaceOfUse: place,
        publicIpRestriction: 'restricted',
      };
      expect(
        await sent('/m2m/v1/devices/actions/activate', () => client.devices.activate(input)),
      ).to.deep.equal(input);
      expect(bodyTo('/m2m/v1/devices/actions/activate')).to.equal(JSON.stringify(input));
    });

    it('deactivate, suspend, restore: a device group instead of devices, and their own members', async () => {
      const deactivate = {
        accountName: ACC,
        groupName: 'North Fleet',
        servicePlan: 'M2M4G',
        customFields: [{ key: 'CustomField1', value: 'North Fleet' }],
        reasonCode: 'FF',
        etfWaiver: false,
        deleteAfterDeactivation: true,
      };
      await sent('/m2m/v1/devices/actions/deactivate', () => client.devices.deactivate(deactivate));
      expect(bodyTo('/m2m/v1/devices/actions/deactivate')).to.equal(JSON.stringify(deactivate));
      rec.requests.length = 0;
      const suspend = { accountName: ACC, groupName: 'South Fleet', withBilling: true };
      await sent('/m2m/v1/devices/actions/suspend', () => client.devices.suspend(suspend));
      expect(bodyTo('/m2m/v1/devices/actions/suspend')).to.equal(JSON.stringify(suspend));
      rec.requests.length = 0;
      const restore = { accountName: ACC, devices: [device], servicePlan: 'M2M4G' };
      await sent('/m2m/v1/devices/actions/restore', () => client.devices.restore(restore));
      expect(bodyTo('/m2m/v1/devices/actions/restore')).to.equal(JSON.stringify(restore));
    });

    it('changePlan: the plan to leave, when, the IP pool, and a device group', async () => {
      const input = {
        accountName: ACC,
        groupName: 'North Fleet',
        servicePlan: 'M2M5G',
        currentServicePlan: 'M2M4G',
        takeEffect: '2026-02-01T00:00:00Z',
        carrierIpPoolName: 'Pool01',
        customFields: [{ key: 'CustomField1', value: 'North Fleet' }],
      };
      await sent('/m2m/v1/devices/actions/plan', () => client.devices.changePlan(input));
      expect(bodyTo('/m2m/v1/devices/actions/plan')).to.equal(JSON.stringify(input));
    });

    it('price plan triggers: deviceGroupName, on create and on update', async () => {
      const create = { ...CASES['triggers.createPayAsYouGo'].input, deviceGroupName: 'North Fleet' };
      const body = (await sent('/m2m/v2/triggers', () => client.triggers.createPayAsYouGo(create))) as Json;
      expect(body.deviceGroupName).to.equal('North Fleet');
      expect(body).to.deep.equal({
        ...(CASES['triggers.createPayAsYouGo'].body as Json),
        deviceGroupName: 'North Fleet',
      });
      rec.requests.length = 0;
      const update = { ...CASES['triggers.updateAccountGroupShare'].input, deviceGroupName: 'South Fleet' };
      const sentUpdate = (await sent('/m2m/v2/triggers', () =>
        client.triggers.updateAccountGroupShare(update),
      )) as Json;
      expect(sentUpdate.deviceGroupName).to.equal('South Fleet');
    });

    it('refuses a device action that names neither devices nor a group', async () => {
      expect(await refused(() => client.callByName('devices.suspend', { accountName: ACC }))).to.deep.equal([
        '/devices: devices is required: name the devices, or give a groupName',
      ]);
    });
  });

  describe('location callbacks', () => {
    const REGISTER = `/loc/v1/callbacks/${ACC}`;
    const DEREGISTER = `/loc/v1/callbacks/${ACC}/name/Location`;

    it('register sends { name, url }; its answer is read in either shape', async () => {
      rec.enqueue(`POST /api${REGISTER}`, { body: { account: ACC, name: 'Location' } });
      expect(
        await client.locationCallbacks.register({ accountName: ACC, url: 'https://hooks.example.com/loc' }),
      ).to.deep.equal({
        account: ACC,
        name: 'Location',
      });
      expect(bodyTo(REGISTER)).to.equal('{"name":"Location","url":"https://hooks.example.com/loc"}');
      const output = explainingAjv().compile(CATALOG['locationCallbacks.register'].output);
      expect(output({ account: ACC, name: 'Location' }), 'the real service').to.equal(true);
      expect(output({ accountName: ACC, serviceName: 'Location' }), 'the spec').to.equal(true);
      expect(output({ name: 'Location' })).to.equal(false);
    });

    it('deregister sends no body; its answer is read in either shape', async () => {
      rec.enqueue(`DELETE /api${DEREGISTER}`, { body: { success: true } });
      expect(await client.locationCallbacks.deregister({ accountName: ACC })).to.deep.equal({
        success: true,
      });
      const [req] = rec.requestsTo(`/api${DEREGISTER}`);
      expect(req!.method).to.equal('DELETE');
      expect(req!.rawBody).to.equal('');
      const output = explainingAjv().compile(CATALOG['locationCallbacks.deregister'].output);
      expect(output({ success: true })).to.equal(true);
      expect(output({ accountName: ACC, serviceName: 'Location' })).to.equal(true);
    });
  });

  describe('usageTriggers.update', () => {
    const TRIGGER = '0123456789abcdef0123456789abcdef';
    const PATH = `/subsc/v1/usage/triggers/${TRIGGER}`;

    it('sends only the members to change, beside the account', async () => {
      rec.enqueue(`POST /api${PATH}`, { body: {} });
      await client.usageTriggers.update({ triggerId: TRIGGER, accountName: ACC, thresholdValue: 95 });
      expect(bodyTo(PATH)).to.equal(`{"accountName":"${ACC}","thresholdValue":"95"}`);
    });

    it('still takes a whole trigger, and refuses a body with nothing to change', async () => {
      rec.enqueue(`POST /api${PATH}`, { body: {} });
      await client.usageTriggers.update({
        triggerId: TRIGGER,
        accountName: ACC,
        serviceName: 'Location',
        triggerName: 'loc-95',
        thresholdValue: '95',
        allowExcess: false,
        sendSmsNotification: true,
        smsPhoneNumbers: '2015550123',
      });
      expect(JSON.parse(bodyTo(PATH))).to.include({ triggerName: 'loc-95', smsPhoneNumbers: '2015550123' });
      expect(
        await refused(() =>
          client.callByName('usageTriggers.update', { triggerId: TRIGGER, accountName: ACC }),
        ),
      ).to.deep.equal(['/: give at least one member to change']);
    });
  });
});
