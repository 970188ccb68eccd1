/**
 * The location quota over loopback: an account's subscription, and the transactions it used in a period, as
 * located devices count them per day; a primary account also sees its managed accounts. Usage triggers check
 * the same count.
 */
import { expect } from 'chai';
import type { Client } from '../../src/api/client.js';
import type { Emulator } from '../../src/emulator/index.js';
import { LOCATION_SKU } from '../../src/emulator/seed-tables.js';
import { clientFor, emulator, idOf, Raw, refusal, world, type AccountView } from './helpers.js';

describe('emulator: location quota', () => {
  let emu: Emulator;
  let client: Client;
  let raw: Raw;
  let accounts: (AccountView & { locationSubscription: number; locationUsed: number })[];

  before(async () => {
    emu = await emulator({ seed: 'quota', devicesPerAccount: 60 });
    client = clientFor(emu);
    raw = new Raw(emu);
  });
  beforeEach(async () => {
    emu.reset({ seed: 'quota', devicesPerAccount: 60 });
    accounts = (await world(raw)).accounts as typeof accounts;
  });
  after(async () => {
    await client.close();
    await emu.close();
  });

  const locatable = (a: AccountView) =>
    a.devices
      .filter((d) => d.iot && d.state === 'active' && d.hasCachedLocation)
      .map((d) => ({ id: idOf(d, 'imei'), kind: 'imei' }));
  const report = (a: AccountView, n: number) =>
    client.location.createReport({
      accountName: a.accountName,
      deviceList: locatable(a).slice(0, n),
      cacheMode: '0',
    });
  const usage = (a: AccountView, startDate: string, endDate: string, all?: boolean) =>
    client.location.usage({
      accountName: a.accountName,
      startDate,
      endDate,
      ...(all === undefined ? {} : { usageForAllAccounts: all }),
    });

  it('the subscription: license type and transactions allowed per cycle; none for an unregistered account', async () => {
    const [primary, , outside] = accounts;
    expect(await client.location.subscription({ accountName: primary!.accountName })).to.deep.include({
      accountName: primary!.accountName,
      locType: LOCATION_SKU,
      maxAllowance: String(primary!.locationSubscription),
    });
    expect(await refusal(client.location.subscription({ accountName: outside!.accountName }))).to.deep.equal([
      400,
      'INVALID_PARAMETER',
      'Unregistered account',
    ]);
  });

  it('counts located devices per day, the count usage triggers check', async () => {
    const [primary, second] = accounts;
    await report(primary!, 5);
    emu.advance(86_400);
    await report(primary!, 3);
    await report(second!, 2);
    expect((await usage(primary!, '01-05-2026', '01-05-2026')).transactions).to.equal(5);
    expect((await usage(primary!, '01-06-2026', '01-31-2026')).transactions).to.equal(3);
    const both = await usage(primary!, '01-01-2026', '01-31-2026');
    expect(both).to.deep.include({
      accountName: primary!.accountName,
      transactions: 8,
      locType: LOCATION_SKU,
    });
    expect(both).to.not.have.property('accounts');
    const used = ((await world(raw)).accounts[0] as unknown as { locationUsed: number }).locationUsed;
    expect(used, 'the billing cycle count of usage triggers').to.equal(8);
    // A primary account sees its managed accounts, and the total it is billed for.
    const all = await usage(primary!, '01-01-2026', '01-31-2026', true);
    expect(all.accounts).to.deep.equal([
      { accountName: primary!.accountName, transactions: 8 },
      { accountName: second!.accountName, transactions: 2 },
    ]);
    expect(all.totalTransactions).to.equal(10);
    // A managed account sees only its own, whatever it asks.
    expect(await usage(second!, '01-01-2026', '01-31-2026', true)).to.not.have.property('accounts');
  });

  it('refuses a date that does not exist and a reversed period', async () => {
    const [primary] = accounts;
    expect(await refusal(usage(primary!, '02-30-2026', '03-01-2026'))).to.deep.equal([
      400,
      'INVALID_PARAMETER',
      'startDate is not a date: 02-30-2026',
    ]);
    expect(await refusal(usage(primary!, '03-01-2026', '02-01-2026'))).to.deep.equal([
      400,
      'INVALID_PARAMETER',
      'startDate must not be after endDate',
    ]);
  });
});
