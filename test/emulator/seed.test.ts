import { expect } from 'chai';
import type { Emulator } from '../../src/emulator/index.js';
import { luhnValid } from '../../src/emulator/random.js';
import { clientFor, emulator, idOf, Raw, world, type Json, type World } from './helpers.js';

/** The parts of the world that the seed decides (not the clock). */
function essence(w: World) {
  return w.accounts.map((a) => ({
    accountName: a.accountName,
    devices: a.devices.map((d) => ({ ids: d.deviceIds, type: d.type, state: d.state, plan: d.servicePlan })),
  }));
}

describe('emulator: seed data', () => {
  let emu: Emulator;
  let raw: Raw;

  before(async () => {
    emu = await emulator({ seed: 7, devicesPerAccount: 120 });
    raw = new Raw(emu);
  });
  after(() => emu.close());

  it('is the same for the same seed, in a new emulator and after a reset', async () => {
    const a = await world(raw);
    const other = await emulator({ seed: 7, devicesPerAccount: 120 });
    try {
      expect(essence(await world(new Raw(other)))).to.deep.equal(essence(a));
    } finally {
      await other.close();
    }
    await raw.control('POST', '/reset', { seed: 8 });
    await raw.control('POST', '/reset', { seed: 7 });
    expect(essence(await world(raw))).to.deep.equal(essence(a));
  });

  it('differs for a different seed', async () => {
    const a = await world(raw);
    await raw.control('POST', '/reset', { seed: 'another' });
    const b = await world(raw);
    await raw.control('POST', '/reset', { seed: 7 });
    expect(b.accounts.map((x) => x.accountName)).to.not.deep.equal(a.accounts.map((x) => x.accountName));
    const imeis = new Set(a.accounts.flatMap((x) => x.devices.map((d) => idOf(d, 'imei'))));
    expect(b.accounts.flatMap((x) => x.devices).filter((d) => imeis.has(idOf(d, 'imei')))).to.have.length(0);
  });

  it('has valid identifiers of every kind, and the device kinds the spec needs', async () => {
    const w = await world(raw);
    expect(w.accounts).to.have.length(3);
    for (const a of w.accounts) expect(a.accountName).to.match(/^[0-9]{10}-[0-9]{5}$/);
    expect(w.accounts.map((a) => a.primary)).to.deep.equal([true, false, false]);
    const devices = w.accounts.flatMap((a) => a.devices);
    for (const d of devices) {
      const imei = idOf(d, 'imei');
      expect(imei).to.match(/^[0-9]{15}$/);
      expect(luhnValid(imei), imei).to.equal(true);
      const iccid = idOf(d, 'iccid');
      expect(iccid).to.match(/^89[0-9]{18}$/);
      expect(luhnValid(iccid), iccid).to.equal(true);
      expect(idOf(d, 'mdn')).to.match(/^[2-9][0-9]{9}$/);
      expect(idOf(d, 'msisdn')).to.equal(`1${idOf(d, 'mdn')}`);
      expect(idOf(d, 'meid')).to.equal(imei.slice(0, 14));
      expect(idOf(d, 'esn')).to.match(/^80[0-9A-F]{6}$/);
      expect(idOf(d, 'imsi')).to.match(/^311480[0-9]{9}$/);
    }
    const types = new Set(devices.map((d) => d.type));
    for (const t of ['phone', 'tablet', 'sensor', 'gateway', 'tracker'])
      expect(types.has(t), t).to.equal(true);
    expect(devices.filter((d) => !d.iot).every((d) => d.type === 'phone' || d.type === 'tablet')).to.equal(
      true,
    );
    expect(devices.some((d) => d.iot && !d.hasCachedLocation)).to.equal(true);
    expect(devices.filter((d) => d.hasCachedLocation).length / devices.length).to.be.greaterThan(0.9);
    expect(devices.some((d) => d.bleSensors?.length === 2)).to.equal(true);
    for (const id of ['imei', 'iccid', 'esn'] as const) {
      const all = devices.map((d) => idOf(d, id));
      expect(new Set(all).size, id).to.equal(all.length);
    }
  });

  it('gives users access to subsets of the accounts', async () => {
    const r = await raw.control('GET', '/accounts?devices=0');
    const { users, accounts } = r.body as {
      users: { username: string; accounts: string[] }[];
      accounts: Json[];
    };
    const names = accounts.map((a) => a.accountName);
    expect(users.find((u) => u.username === 'admin')!.accounts).to.deep.equal(names);
    expect(users.find((u) => u.username === 'operator')!.accounts).to.deep.equal(names.slice(1));
    expect(users.find((u) => u.username === 'field')!.accounts).to.deep.equal([names[1]]);
  });

  describe('at scale: 100,000 devices in one account', function () {
    // The report's case takes 5 s on an idle machine: past the default 20 s once under a load of 15.
    this.timeout(120_000);
    before(() => emu.reset({ seed: 'scale', accounts: 1, devicesPerAccount: 100_000 }));
    after(() => emu.reset({ seed: 7, devicesPerAccount: 120 }));

    it('resets to a world of 100,000 devices', async () => {
      const r = await raw.control('POST', '/reset', {
        seed: 'scale',
        accounts: 1,
        devicesPerAccount: 100_000,
      });
      expect(r.status).to.equal(200);
      const { accounts } = (await raw.control('GET', '/accounts?devices=0')).body as { accounts: Json[] };
      expect(accounts.map((a) => a.deviceCount)).to.deep.equal([100_000]);
    });

    it('pages devices.list by the largest device id seen, with 202 while there is more', async () => {
      const account = ((await raw.control('GET', '/accounts?devices=0')).body as { accounts: Json[] })
        .accounts[0]!.accountName as string;
      const first = await raw.api('POST', '/m2m/v1/devices/actions/list', {
        accountName: account,
        maxNumberOfDevices: 2000,
      });
      expect(first.status).to.equal(202);
      const devices = (first.body as { devices: { deviceIds: { id: string }[] }[] }).devices;
      expect(devices).to.have.length(2000);
      const largest = devices[1999]!.deviceIds[0]!.id;
      const next = await raw.api('POST', '/m2m/v1/devices/actions/list', {
        accountName: account,
        maxNumberOfDevices: 2000,
        largestDeviceIdSeen: largest,
      });
      const nextIds = (next.body as { devices: { deviceIds: { id: string }[] }[] }).devices.map(
        (d) => d.deviceIds[0]!.id,
      );
      expect(nextIds[0]! > largest).to.equal(true);
      const lastPage = await raw.api('POST', '/m2m/v1/devices/actions/list', {
        accountName: account,
        largestDeviceIdSeen: '9',
      });
      expect([lastPage.status, (lastPage.body as Json).hasMoreData]).to.deep.equal([200, false]);
    });

    it('serves a 100,000-device location report in ten requests and a hundred pages', async () => {
      const client = clientFor(emu);
      try {
        const account = ((await raw.control('GET', '/accounts?devices=0')).body as { accounts: Json[] })
          .accounts[0]!.accountName as string;
        const deviceList: { id: string; kind: string }[] = [];
        for await (const d of client.items('devices.list', {
          accountName: account,
          maxNumberOfDevices: 2000,
        }))
          deviceList.push({ id: (d as { deviceIds: { id: string }[] }).deviceIds[0]!.id, kind: 'imei' });
        expect(deviceList).to.have.length(100_000);
        const heap = process.memoryUsage().heapUsed;
        const created = await client.location.createReport({
          accountName: account,
          deviceList,
          cacheMode: '0',
        });
        expect(created.reports).to.have.length(10);
        let entries = 0;
        let failures = 0;
        for (const r of created.reports)
          for await (const e of client.items('location.getReport', { accountName: account, txid: r.txid })) {
            entries++;
            if ((e as { error: Json }).error.type) failures++;
          }
        expect(entries).to.equal(100_000);
        // Phones and tablets, devices off the network and a few without a cached fix fail; most are located.
        expect(failures / entries).to.be.within(0.05, 0.2);
        expect(process.memoryUsage().heapUsed - heap).to.be.lessThan(300 * 1024 * 1024);
      } finally {
        await client.close();
      }
    });
  });
});
