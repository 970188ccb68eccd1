/**
 * Managed accounts, the whole lifecycle over loopback (spec 2.5, 3 and 7.2): add answers a TxId, provision
 * quotes it and answers the txid that cancel quotes; the primary lists accounts added and provisioned; location
 * works for a provisioned account and not for a cancelled one; a txid that is not the last action's is
 * `Txd Mismatch`. A service other than `Location`: managed-service-name.test.ts.
 */
import { expect } from 'chai';
import type { Client } from '../../src/api/client.js';
import type { ApiError } from '../../src/errors.js';
import type { Emulator } from '../../src/emulator/index.js';
import { LOCATION_SKU } from '../../src/emulator/seed-tables.js';
import { clientFor, emulator, Raw, refusal, world, type World } from './helpers.js';

describe('emulator: managed accounts', () => {
  let emu: Emulator;
  let client: Client;
  let w: World;
  let primary: string;
  let second: string;
  let outside: string;

  before(async () => {
    emu = await emulator({ seed: 'managed', devicesPerAccount: 20 });
    client = clientFor(emu);
  });
  beforeEach(async () => {
    emu.reset({ seed: 'managed', devicesPerAccount: 20 });
    w = await world(new Raw(emu));
    [primary, second, outside] = w.accounts.map((a) => a.accountName) as [string, string, string];
  });
  after(async () => {
    await client.close();
    await emu.close();
  });

  const action = (accountName: string, txid: string) => ({
    accountName,
    paccountName: primary,
    serviceName: 'Location',
    type: LOCATION_SKU,
    txid,
  });
  const NOT_PROVISIONED = [
    400,
    'INVALID_PARAMETER',
    'Acct Not Provisioned With Provided Parameters. Check service & type fields',
  ];
  const MISMATCH = [400, 'INVALID_PARAMETER', 'Txd Mismatch'];
  /** Whether the account may use location: `registered`, or the service's refusal. */
  const located = (account: string) =>
    client.location.getExclusions({ accountName: account }).then(
      () => 'registered',
      (e: ApiError) => e.apiMessage,
    );

  it('add, provision, list, cancel: each quoting the txid of the action before it', async () => {
    // The seed's managed account was added and provisioned before the world began.
    const seeded = await client.managedAccounts.list({ accountName: primary });
    expect(seeded.ManagedAccAddedList).to.deep.equal([]);
    expect(seeded.managedAccProvisionedList!.map((m) => m.id)).to.deep.equal([second]);
    const added = await client.managedAccounts.add({
      accountName: primary,
      serviceName: 'Location',
      type: LOCATION_SKU,
      managedAccList: [outside],
    });
    const txId = added.TxId!;
    const listed = await client.managedAccounts.list({ accountName: primary });
    expect(listed.ManagedAccAddedList).to.deep.equal([{ id: outside, txid: txId }]);
    expect(await located(outside)).to.equal('Unregistered account');

    const provisioned = await client.managedAccounts.provision(action(outside, txId));
    expect(provisioned).to.deep.include({ accountName: outside, paccountName: primary, status: 'Success' });
    const txid = provisioned.txid!;
    expect(txid).to.not.equal(txId);
    // Sent again, a provision answers the same txid.
    expect((await client.managedAccounts.provision(action(outside, txId))).txid).to.equal(txid);
    expect(await located(outside)).to.equal('registered');
    const after = await client.managedAccounts.list({ accountName: primary });
    expect(after.ManagedAccAddedList).to.deep.equal([]);
    expect(after.managedAccProvisionedList).to.deep.include({ id: outside, txid });

    // The TxId of the add is not the last action any more.
    expect(await refusal(client.managedAccounts.cancel(action(outside, txId)))).to.deep.equal(MISMATCH);
    expect((await client.managedAccounts.cancel(action(outside, txid))).status).to.equal('Success');
    expect(await located(outside)).to.equal('Unregistered account');
    expect(
      (await client.managedAccounts.list({ accountName: primary })).managedAccProvisionedList,
    ).to.not.deep.include({
      id: outside,
      txid,
    });
    // Cancelled: it must be added again first.
    expect(await refusal(client.managedAccounts.cancel(action(outside, txid)))).to.deep.equal(
      NOT_PROVISIONED,
    );
    expect(await refusal(client.managedAccounts.provision(action(outside, txId)))).to.deep.equal(
      NOT_PROVISIONED,
    );
  });

  it('refuses a wrong TxId, an account never added, a cancel before provisioning, and a wrong SKU', async () => {
    const added = await client.managedAccounts.add({
      accountName: primary,
      serviceName: 'Location',
      type: LOCATION_SKU,
      managedAccList: [outside],
    });
    const other = '0123456789abcdef0123456789abcdef';
    expect(await refusal(client.managedAccounts.provision(action(outside, other)))).to.deep.equal(MISMATCH);
    expect(await refusal(client.managedAccounts.cancel(action(outside, added.TxId!)))).to.deep.equal(
      NOT_PROVISIONED,
    );
    expect(await refusal(client.managedAccounts.provision(action('0000000000-00009', other)))).to.deep.equal(
      NOT_PROVISIONED,
    );
    expect(
      await refusal(client.managedAccounts.provision({ ...action(outside, added.TxId!), type: 'TS-OTHER' })),
    ).to.deep.equal(NOT_PROVISIONED);
  });

  it('lists only for the primary account, by its user', async () => {
    expect(await refusal(client.managedAccounts.list({ accountName: second }))).to.deep.equal([
      400,
      'INVALID_PARAMETER',
      'Primary account not registered',
    ]);
    const operator = clientFor(emu, { username: 'operator', password: 'operator-password' });
    try {
      expect(await refusal(operator.managedAccounts.list({ accountName: primary }))).to.deep.equal([
        400,
        'INVALID_PARAMETER',
        `UWS account validation failed(The contact does not have access to the account ${primary}.)`,
      ]);
    } finally {
      await operator.close();
    }
  });
});
