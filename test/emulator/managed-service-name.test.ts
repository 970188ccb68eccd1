/**
 * A managed-account operation's `serviceName` is `Location` (spec 2.5), and any other value is the service's
 * `400 INVALID_PARAMETER Invalid Service Name` (7.2): real HTTP to an emulator on a loopback port. The emulator
 * took the name in any case (`location`, `LOCATION`) and added, provisioned and listed under it, where the real
 * service refuses it; and the client sent any name it was given, so that a playbook's `serviceName: location`
 * passed every check here and failed on the service.
 */
import { expect } from 'chai';
import { InputError } from '../../src/errors.js';
import { LOCATION_SKU } from '../../src/emulator/seed-tables.js';
import { onWorld, type Json } from './helpers.js';

const INVALID_SERVICE_NAME = { errorCode: 'INVALID_PARAMETER', errorMessage: 'Invalid Service Name' };
const NOT_LOCATION = ['location', 'LOCATION', 'Fota', ''];

describe('emulator: the serviceName of managed accounts', () => {
  const t = onWorld({ seed: 'managed', devicesPerAccount: 5 });
  let primary: string;
  let outside: string;
  before(() => {
    [primary, , outside] = t.seed.accounts.map((a) => a.accountName) as [string, string, string];
  });
  beforeEach(() => {
    t.emu.reset({ seed: 'managed', devicesPerAccount: 5 });
    // A reset ends the sessions.
    t.raw.forget();
  });

  const add = (serviceName: string) =>
    t.raw.api('POST', '/subsc/v1/managedaccounts/actions/add', {
      accountName: primary,
      serviceName,
      type: LOCATION_SKU,
      managedAccList: [outside],
    });
  const provision = (serviceName: string, txid: string) =>
    t.raw.api('POST', '/subsc/v1/managedaccounts/actions/provision', {
      accountName: outside,
      paccountName: primary,
      serviceName,
      type: LOCATION_SKU,
      txid,
    });
  const list = (serviceName: string) =>
    t.raw.api('GET', `/subsc/v1/managedaccounts/${primary}/service/${encodeURIComponent(serviceName)}`);
  const added = async () =>
    (((await list('Location')).body as Json).ManagedAccAddedList as { id: string }[]).map((m) => m.id);

  it('add: a name other than Location is Invalid Service Name, and adds nothing', async () => {
    for (const name of NOT_LOCATION) {
      const r = await add(name);
      expect([name, r.status, r.body]).to.deep.equal([name, 400, INVALID_SERVICE_NAME]);
    }
    expect(await added()).to.deep.equal([]);
    const r = await add('Location');
    expect(r.status).to.equal(200);
    expect(await added()).to.deep.equal([outside]);
  });

  it('provision: a name other than Location is Invalid Service Name, and provisions nothing', async () => {
    const txid = String(((await add('Location')).body as Json).TxId);
    for (const name of NOT_LOCATION) {
      const r = await provision(name, txid);
      expect([name, r.status, r.body]).to.deep.equal([name, 400, INVALID_SERVICE_NAME]);
    }
    expect(await added()).to.deep.equal([outside]);
    expect((await provision('Location', txid)).status).to.equal(200);
  });

  it('list: a {serviceName} other than Location is Invalid Service Name', async () => {
    for (const name of ['location', 'LOCATION', 'Fota']) {
      const r = await list(name);
      expect([name, r.status, r.body]).to.deep.equal([name, 400, INVALID_SERVICE_NAME]);
    }
    expect((await list('Location')).status).to.equal(200);
  });

  it('the client refuses a name other than Location before it sends it, and sends Location when none is given', async () => {
    const adds = async () =>
      ((await t.raw.control('GET', '/calls')).body as { actions: Record<string, number> }).actions[
        'managedAccounts.add'
      ] ?? 0;
    const before = await adds();
    for (const name of NOT_LOCATION) {
      const e = await t.client.managedAccounts
        .add({ accountName: primary, serviceName: name, type: LOCATION_SKU, managedAccList: [outside] })
        .then(
          () => undefined,
          (x: unknown) => x,
        );
      expect(e, name).to.be.instanceOf(InputError);
      expect((e as InputError).problems.map((p) => p.message).join('; '), name).to.match(
        /serviceName.*"Location"/,
      );
    }
    expect(await adds(), 'adds the service was sent').to.equal(before);
    const listed = await t.client.managedAccounts.list({ accountName: primary });
    expect(listed.accountName).to.equal(primary);
  });
});
