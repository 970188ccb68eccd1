import { expect } from 'chai';
import type { Emulator } from '../../src/emulator/index.js';
import { LOCATION_SKU } from '../../src/emulator/seed-tables.js';
import { SESSION_EXPIRED_MESSAGE } from '../../src/errors.js';
import {
  type AccountView,
  emulator,
  idOf,
  imeiOf,
  type Json,
  Raw,
  type RawResponse,
  world,
  type World,
} from './helpers.js';

type Device = AccountView['devices'][number];

/** A Luhn-valid IMEI under a TAC the seed never uses. */
const UNKNOWN_IMEI = '490154203237518';

function expectError(r: RawResponse, status: number, code: string, message: string): void {
  expect(r.body, r.text).to.deep.equal({ errorCode: code, errorMessage: message });
  expect(r.status).to.equal(status);
}

describe('emulator: the error rows of spec 7.1 and 7.2', () => {
  let emu: Emulator;
  let raw: Raw;
  let w: World;
  let primary: AccountView;
  let second: AccountView;
  let outside: AccountView;

  const find = (pred: (d: Device) => boolean, skip = 0): Device => {
    const d = primary.devices.filter(pred)[skip];
    if (!d) throw new Error('the seed has no such device');
    return d;
  };
  const good = (d: Device) => d.iot && d.state === 'active' && d.hasCachedLocation;
  const locate = (body: unknown, as?: string) => raw.api('POST', '/loc/v1/locations', body, as);
  const report = (body: unknown) => raw.api('POST', '/loc/v1/locationreports', body);
  const consents = (body: unknown) => raw.api('POST', '/loc/v1/consents', body);

  before(async () => {
    emu = await emulator({ seed: 'errors', devicesPerAccount: 200 });
    raw = new Raw(emu);
    w = await world(raw);
    [primary, second, outside] = w.accounts as [AccountView, AccountView, AccountView];
  });

  after(() => emu.close());

  afterEach(async () => {
    await raw.control('PUT', '/faults', {});
    await consents({ accountName: primary.accountName, allDevice: false, exclusion: [] });
  });

  describe('7.1 request errors', () => {
    it('400 INVALID_PARAMETER Unable to Cancel: a completed report', async () => {
      const created = await report({ accountName: primary.accountName, deviceList: [imeiOf(find(good))] });
      const txid = String((created.body as Json).txid);
      // A cacheMode 0 report is created QUEUED and completed at once.
      expect((created.body as Json).status).to.equal('QUEUED');
      const base = `/loc/v1/locationreports/${primary.accountName}/report/${txid}`;
      expect(((await raw.api('GET', `${base}/status`)).body as Json).status).to.equal('COMPLETED');
      const r = await raw.api('DELETE', `/loc/v1/locationreports/${primary.accountName}/report/${txid}`);
      expectError(r, 400, 'INVALID_PARAMETER', 'Unable to Cancel');
    });

    it('400 INVALID_PARAMETER Invalid JSON, in the shape of each area', async () => {
      expectError(
        await raw.api('POST', '/loc/v1/locations', '{"accountName": '),
        400,
        'INVALID_PARAMETER',
        'Invalid JSON',
      );
      expectError(
        await raw.api('POST', '/loc/v1/consents', '{bad'),
        400,
        'INVALID_PARAMETER',
        'Invalid JSON',
      );
      expectError(
        await raw.api('POST', '/subsc/v1/managedaccounts/actions/add', '['),
        400,
        'INVALID_PARAMETER',
        'Invalid JSON',
      );
      const t = await raw.api('POST', '/m2m/v2/triggers', '{');
      expect([t.status, t.body]).to.deep.equal([
        400,
        { error: 'INVALID_PARAMETER', error_description: 'Invalid JSON' },
      ]);
      const s = await raw.api('POST', '/dm/v1/devices/sensors/actions/query', 'nope');
      expect([s.status, s.body]).to.deep.equal([
        400,
        { error: 'INVALID_PARAMETER', error_description: 'Invalid JSON', cause: 'Invalid JSON' },
      ]);
    });

    it('400 INVALID_PARAMETER Device not found', async () => {
      const r = await locate({
        accountName: primary.accountName,
        deviceList: [{ id: UNKNOWN_IMEI, kind: 'imei' }],
      });
      expectError(r, 400, 'INVALID_PARAMETER', 'Device not found');
    });

    it('400 CACHE_UNAVAILABLE at cacheMode 0 for a device without a cached fix; cacheMode 1 and 2 locate it', async () => {
      const d = find((x) => x.iot && x.state === 'active' && !x.hasCachedLocation);
      const r = await locate({ accountName: primary.accountName, deviceList: [imeiOf(d)], cacheMode: '0' });
      expectError(r, 400, 'CACHE_UNAVAILABLE', 'Location cache has no data for this device');
      for (const cacheMode of ['1', '2']) {
        const ok = await locate({ accountName: primary.accountName, deviceList: [imeiOf(d)], cacheMode });
        expect(ok.status).to.equal(200);
        expect(((ok.body as Json[])[0]!.pd as Json).x).to.be.a('string');
      }
    });

    it('400 PARAMETER_ERROR Conflicting device list: allDevice with an exclusion list', async () => {
      const r = await consents({
        accountName: primary.accountName,
        allDevice: true,
        exclusion: [idOf(find(good), 'imei')],
      });
      expectError(r, 400, 'PARAMETER_ERROR', 'Conflicting device list');
    });

    it('400 INVALID_PARAMETER Consent check failed: locating only excluded devices', async () => {
      const d = find(good);
      expect(
        (await consents({ accountName: primary.accountName, exclusion: [idOf(d, 'imei')] })).status,
      ).to.equal(200);
      const r = await locate({ accountName: primary.accountName, deviceList: [imeiOf(d)] });
      expectError(r, 400, 'INVALID_PARAMETER', 'Consent check failed');
      // Named by its MEID, it is still the excluded device.
      const byMeid = await locate({
        accountName: primary.accountName,
        deviceList: [{ id: idOf(d, 'meid'), kind: 'MEID' }],
      });
      expectError(byMeid, 400, 'INVALID_PARAMETER', 'Consent check failed');
    });

    it('400 INVALID_PARAMETER Ownership or MDN validation failed: another account’s device, or a wrong MDN', async () => {
      const foreign = second.devices.find((d) => d.iot)!;
      expectError(
        await locate({ accountName: primary.accountName, deviceList: [imeiOf(foreign)] }),
        400,
        'INVALID_PARAMETER',
        'Ownership or MDN validation failed',
      );
      const d = find(good);
      expectError(
        await locate({
          accountName: primary.accountName,
          deviceList: [{ ...imeiOf(d), mdn: idOf(find(good, 1), 'mdn') }],
        }),
        400,
        'INVALID_PARAMETER',
        'Ownership or MDN validation failed',
      );
      const right = await locate({
        accountName: primary.accountName,
        deviceList: [{ ...imeiOf(d), mdn: idOf(d, 'mdn') }],
      });
      expect(right.status).to.equal(200);
    });

    it('400 PARAMETER_ERROR Ownership or MDN validation failed: excluding another account’s device', async () => {
      const r = await consents({
        accountName: primary.accountName,
        exclusion: [idOf(second.devices[0]!, 'imei')],
      });
      expectError(r, 400, 'PARAMETER_ERROR', 'Ownership or MDN validation failed');
    });

    it('400 INVALID_PARAMETER UWS verification failure (Could not find account …)', async () => {
      const r = await locate({ accountName: '9999999999-99999', deviceList: [imeiOf(find(good))] });
      expectError(
        r,
        400,
        'INVALID_PARAMETER',
        'UWS verification failure (Could not find account 9999999999-99999)',
      );
    });

    it('400 INVALID_PARAMETER UWS verification failure (The Session has expired.) for a session that is gone', async () => {
      const r = await raw.send('GET', `/api/loc/v1/consents/${primary.accountName}/index/0`, undefined, {
        authorization: `Bearer ${await raw.token()}`,
        'x-m2m-token': '00000000-0000-4000-8000-000000000000',
      });
      expectError(r, 400, 'INVALID_PARAMETER', SESSION_EXPIRED_MESSAGE);
    });

    it('400 INVALID_PARAMETER Device type check failed: locating only phones and tablets', async () => {
      const phone = find((d) => !d.iot);
      expect(['phone', 'tablet']).to.include(phone.type);
      expectError(
        await locate({ accountName: primary.accountName, deviceList: [imeiOf(phone)] }),
        400,
        'INVALID_PARAMETER',
        'Device type check failed',
      );
    });

    it('400 INVALID_PARAMETER Invalid account name', async () => {
      for (const accountName of ['12345', undefined, '0000123456_00001'])
        expectError(
          await locate({ accountName, deviceList: [imeiOf(find(good))] }),
          400,
          'INVALID_PARAMETER',
          'Invalid account name',
        );
    });

    it('400 INVALID_PARAMETER Unregistered account', async () => {
      expect(outside.locationRegistered).to.equal(false);
      const d = outside.devices.find((x) => x.iot)!;
      expectError(
        await locate({ accountName: outside.accountName, deviceList: [imeiOf(d)] }),
        400,
        'INVALID_PARAMETER',
        'Unregistered account',
      );
    });

    it('400 INVALID_PARAMETER Invalid accuracy mode, Invalid cache mode', async () => {
      const deviceList = [imeiOf(find(good))];
      expectError(
        await locate({ accountName: primary.accountName, deviceList, accuracyMode: '1' }),
        400,
        'INVALID_PARAMETER',
        'Invalid accuracy mode',
      );
      expectError(
        await report({ accountName: primary.accountName, deviceList, cacheMode: '3' }),
        400,
        'INVALID_PARAMETER',
        'Invalid cache mode',
      );
    });

    it('400 INVALID_PARAMETER Empty device list, Per request max devices exceeded, Duplicate devices', async () => {
      expectError(
        await report({ accountName: primary.accountName, deviceList: [] }),
        400,
        'INVALID_PARAMETER',
        'Empty device list',
      );
      const many = Array.from({ length: 10_001 }, (_, i) => ({
        id: String(350000000000000 + i),
        kind: 'imei',
      }));
      expectError(
        await report({ accountName: primary.accountName, deviceList: many }),
        400,
        'INVALID_PARAMETER',
        'Per request max devices exceeded',
      );
      const d = find(good);
      expectError(
        await locate({
          accountName: primary.accountName,
          deviceList: [imeiOf(d), { id: idOf(d, 'esn'), kind: 'esn' }],
        }),
        400,
        'INVALID_PARAMETER',
        'Duplicate devices',
      );
    });

    it('400 INVALID_PARAMETER Input Binding Error', async () => {
      for (const body of [
        { accountName: primary.accountName, deviceList: 'all' },
        { accountName: primary.accountName, deviceList: [{ id: 350000000000001, kind: 'imei' }] },
        [primary.accountName],
      ])
        expectError(await locate(body), 400, 'INVALID_PARAMETER', 'Input Binding Error');
    });

    it('400 INVALID_PARAMETER Invalid device kind', async () => {
      const d = find(good);
      expectError(
        await locate({
          accountName: primary.accountName,
          deviceList: [{ id: idOf(d, 'iccid'), kind: 'iccid' }],
        }),
        400,
        'INVALID_PARAMETER',
        'Invalid device kind. Valid kinds are IMEI, MEID or ESN',
      );
    });

    it('400 Invalid device ID format: INVALID_PARAMETER for locations, PARAMETER_ERROR for consents', async () => {
      const id = idOf(find(good), 'imei');
      const badCheckDigit = id.slice(0, 14) + String((Number(id[14]) + 1) % 10);
      for (const deviceList of [
        [{ id: '12345', kind: 'imei' }],
        [{ id: badCheckDigit, kind: 'imei' }],
        [{ id: 'XYZ', kind: 'esn' }],
      ])
        expectError(
          await locate({ accountName: primary.accountName, deviceList }),
          400,
          'INVALID_PARAMETER',
          'Invalid device ID format',
        );
      expectError(
        await consents({ accountName: primary.accountName, exclusion: ['12345'] }),
        400,
        'PARAMETER_ERROR',
        'Invalid device ID format',
      );
    });

    it('400 INTERNAL_ERROR Failed to get location: every device fails transiently', async () => {
      await raw.control('PUT', '/faults', { deviceErrors: { 'ABSENT SUBSCRIBER': 1 } });
      const r = await locate({
        accountName: primary.accountName,
        deviceList: [imeiOf(find(good)), imeiOf(find(good, 1))],
      });
      expectError(r, 400, 'INTERNAL_ERROR', 'Failed to get location');
    });

    it('500 INTERNAL_ERROR Failed to get location, and 500 Internal system error, under an injected error rate', async () => {
      await raw.control('PUT', '/faults', { errorRate: 1 });
      expectError(
        await locate({ accountName: primary.accountName, deviceList: [imeiOf(find(good))] }),
        500,
        'INTERNAL_ERROR',
        'Failed to get location',
      );
      expectError(
        await raw.api('GET', `/loc/v1/consents/${primary.accountName}/index/0`),
        500,
        'INTERNAL_ERROR',
        'Internal system error',
      );
    });

    it('400 INTERNAL_ERROR Fail to verify device: devices not on the network', async () => {
      const off = find((d) => d.iot && (d.state === 'pending' || d.state === 'deactive'));
      expectError(
        await locate({ accountName: primary.accountName, deviceList: [imeiOf(off)] }),
        400,
        'INTERNAL_ERROR',
        'Fail to verify device',
      );
    });

    it('400 PARAMETER_ERROR Max exclusion devices over limit, Duplicate exclusion devices', async () => {
      const many = Array.from({ length: 2001 }, (_, i) => String(350000000000000 + i));
      expectError(
        await consents({ accountName: primary.accountName, exclusion: many }),
        400,
        'PARAMETER_ERROR',
        'Max exclusion devices over limit',
      );
      const id = idOf(find(good), 'imei');
      expectError(
        await consents({ accountName: primary.accountName, type: 'append', exclusion: [id, id] }),
        400,
        'PARAMETER_ERROR',
        'Duplicate exclusion devices',
      );
    });

    it('401 INVALID_ACCESS for an account the user has no access to, in every area', async () => {
      const message = 'The access policy denied the resource operation for this user';
      expect(emu.defaults.username).to.equal('admin');
      expectError(
        await locate({ accountName: primary.accountName, deviceList: [imeiOf(find(good))] }, 'operator'),
        401,
        'INVALID_ACCESS',
        message,
      );
      expectError(
        await raw.api('POST', '/m2m/v1/devices/actions/list', { accountName: primary.accountName }, 'field'),
        401,
        'INVALID_ACCESS',
        message,
      );
      const t = await raw.api(
        'GET',
        `/m2m/v2/triggers/accounts/${primary.accountName}`,
        undefined,
        'operator',
      );
      expect([t.status, t.body]).to.deep.equal([
        401,
        { error: 'INVALID_ACCESS', error_description: message },
      ]);
      const s = await raw.api(
        'POST',
        '/dm/v1/devices/networkexperience/actions/query',
        { accountname: primary.accountName },
        'operator',
      );
      expect([s.status, s.body]).to.deep.equal([
        401,
        { error: 'INVALID_ACCESS', error_description: message, cause: message },
      ]);
      // The same user may act on the accounts it has.
      const ok = await locate(
        { accountName: second.accountName, deviceList: [imeiOf(second.devices.find(good)!)] },
        'operator',
      );
      expect(ok.status).to.equal(200);
    });
  });

  describe('7.2 managed account errors', () => {
    const add = (body: Json, as?: string) =>
      raw.api('POST', '/subsc/v1/managedaccounts/actions/add', body, as);
    const base = () => ({
      accountName: primary.accountName,
      serviceName: 'Location',
      type: LOCATION_SKU,
      managedAccList: [outside.accountName],
    });

    it('400 Acct Not Provisioned With Provided Parameters: a SKU the primary account did not buy', async () => {
      expectError(
        await add({ ...base(), type: 'TS-LOC-PRECISE-GPS' }),
        400,
        'INVALID_PARAMETER',
        'Acct Not Provisioned With Provided Parameters. Check service & type fields',
      );
    });

    it('400 Invalid Service Name', async () => {
      expectError(
        await add({ ...base(), serviceName: 'Diagnostics' }),
        400,
        'INVALID_PARAMETER',
        'Invalid Service Name',
      );
    });

    it('400 Primary account not registered: adding under an account that is not a primary', async () => {
      expectError(
        await add({ ...base(), accountName: second.accountName }),
        400,
        'INVALID_PARAMETER',
        'Primary account not registered',
      );
    });

    it('400 UWS account validation failed: a user without access to the primary account', async () => {
      expectError(
        await add(base(), 'operator'),
        400,
        'INVALID_PARAMETER',
        `UWS account validation failed(The contact does not have access to the account ${primary.accountName}.)`,
      );
    });

    it('400 Txd Mismatch, then provisioning with the TxId registers the account for location', async () => {
      const provision = (txid: string, accountName = outside.accountName) =>
        raw.api('POST', '/subsc/v1/managedaccounts/actions/provision', {
          accountName,
          paccountName: primary.accountName,
          serviceName: 'Location',
          type: LOCATION_SKU,
          txid,
        });
      expectError(
        await provision('00000000-0000-4000-8000-000000000000'),
        400,
        'INVALID_PARAMETER',
        'Acct Not Provisioned With Provided Parameters. Check service & type fields',
      );
      const added = await add(base());
      expect((added.body as Json).statusList).to.deep.equal([
        { id: outside.accountName, status: 'Success', reason: 'Success' },
      ]);
      const txid = String((added.body as Json).TxId);
      expectError(
        await provision('11111111-1111-4111-8111-111111111111'),
        400,
        'INVALID_PARAMETER',
        'Txd Mismatch',
      );
      expect((await provision(txid)).status).to.equal(200);
      const d = outside.devices.find(good)!;
      expect((await locate({ accountName: outside.accountName, deviceList: [imeiOf(d)] })).status).to.equal(
        200,
      );
    });

    it('per-account Fail in the status list for an account that does not exist', async () => {
      const r = await add({ ...base(), managedAccList: ['9999999999-00001'] });
      expect(r.status).to.equal(200);
      expect((r.body as Json).statusList).to.deep.equal([
        { id: '9999999999-00001', status: 'Fail', reason: 'Invalid account name' },
      ]);
    });
  });

  describe('7.3 per-device errors in location results', () => {
    it('gives each failed device { msid, pd: {}, error: { time, type, info } } and locates the rest', async () => {
      const excluded = find(good);
      const phone = find((d) => !d.iot);
      const noCache = find((d) => d.iot && d.state === 'active' && !d.hasCachedLocation);
      const off = find((d) => d.iot && (d.state === 'pending' || d.state === 'deactive'));
      const fine = find(good, 1);
      await consents({ accountName: primary.accountName, exclusion: [idOf(excluded, 'imei')] });
      const created = await report({
        accountName: primary.accountName,
        deviceList: [excluded, phone, noCache, off, fine].map(imeiOf),
        cacheMode: '0',
      });
      const txid = String((created.body as Json).txid);
      const page = await raw.api(
        'GET',
        `/loc/v1/locationreports/${primary.accountName}/report/${txid}/index/0`,
      );
      const list = (page.body as Json).devLocationList as Json[];
      const types = list.map((e) => (e.error as Json).type);
      expect(types).to.deep.equal([
        'SVC CONSENT CHECK FAILED',
        'SVC DEVICE TYPE CHECK FAILED',
        'SVC CACHE UNAVAILABLE',
        'SVC DEVICE DATA UNAVAILABLE',
        undefined,
      ]);
      for (const e of list.slice(0, 4)) {
        expect(e.pd).to.deep.equal({});
        expect((e.error as Json).time).to.match(/^\d{14}$/);
        expect((e.error as Json).info)
          .to.be.a('string')
          .and.not.equal('');
      }
      expect(list[2]!.error).to.include({ info: 'Location cache has no data' });
      expect(list.map((e) => e.msid)).to.deep.equal(
        [excluded, phone, noCache, off, fine].map((d) => idOf(d, 'imei')),
      );
    });

    it('injects 7.3 errors by type at the rates asked for', async () => {
      await raw.control('PUT', '/faults', { deviceErrors: { 'POSITION METHOD FAILURE': 0.2, TIMEOUT: 0.1 } });
      const devices = primary.devices.filter(good).map(imeiOf);
      const created = await report({ accountName: primary.accountName, deviceList: devices, cacheMode: '0' });
      const txid = String((created.body as Json).txid);
      const page = await raw.api(
        'GET',
        `/loc/v1/locationreports/${primary.accountName}/report/${txid}/index/0`,
      );
      const list = (page.body as Json).devLocationList as Json[];
      const count = (t: string) => list.filter((e) => (e.error as Json).type === t).length;
      expect(list.length).to.be.greaterThan(150);
      expect(count('POSITION METHOD FAILURE') / list.length).to.be.within(0.1, 0.3);
      expect(count('TIMEOUT') / list.length).to.be.within(0.03, 0.18);
      // A page read twice is the same: entries are a function of the report, not of the reading.
      const again = await raw.api(
        'GET',
        `/loc/v1/locationreports/${primary.accountName}/report/${txid}/index/0`,
      );
      expect(again.body).to.deep.equal(page.body);
    });
  });
});
