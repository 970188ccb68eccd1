/**
 * Every time the emulator writes is one the spec's date-time format can hold: a four-digit year, from 0000 to
 * 9999. At the clock's last time (9999-12-31) a device's billingCycleEndDate, the end of a cycle that runs past
 * the year, was written `+010000-01-13T23:59:59.000Z`; at a start in year 0, the seeded devices were made in year
 * -1 (`-000001-07-30…`) and billing cycles began in 1900 (Date.UTC reads years 0 to 99 as 1900 to 1999). Real
 * HTTP to a loopback emulator.
 */
import { expect } from 'chai';
import { type Emulator } from '../../src/emulator/index.js';
import { LATEST } from '../../src/emulator/sim-clock.js';
import { emulator, Raw, type Json } from './helpers.js';

/** A time as the API writes it: four-digit year, milliseconds, UTC. */
const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** `2017-05-10 06:25:25.171 +0000 UTC`, the location subscription's purchaseTime. */
const SERVICE_TIME = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}\.\d{3}) \+0000 UTC$/;

/** Every string of `v` at a key that names a time, as `path: value`. */
function times(v: unknown, path = ''): Record<string, string> {
  const out: Record<string, string> = {};
  if (Array.isArray(v)) v.forEach((x, i) => Object.assign(out, times(x, `${path}[${i}]`)));
  else if (v && typeof v === 'object')
    for (const [k, x] of Object.entries(v as Json)) {
      if (typeof x === 'string' && /(Date|At|Time|time|on)$/.test(k)) out[`${path}.${k}`] = x;
      else Object.assign(out, times(x, `${path}.${k}`));
    }
  return out;
}

/** The times the API writes of the first account: its devices, its location subscription. */
async function readTimes(emu: Emulator): Promise<Record<string, string>> {
  const raw = new Raw(emu);
  const account = emu.defaults.accounts[0]!;
  const list = await raw.api('POST', '/m2m/v1/devices/actions/list', { accountName: account });
  const sub = await raw.api('GET', `/loc/v1/subscriptions/${account}`);
  expect([list.status, sub.status]).to.deep.equal([200, 200]);
  const found = { ...times(list.body, 'devices.list'), ...times(sub.body, 'subscription') };
  const purchase = SERVICE_TIME.exec(found['subscription.purchaseTime'] ?? '');
  expect(purchase, found['subscription.purchaseTime']).to.not.equal(null);
  found['subscription.purchaseTime'] = `${purchase![1]}T${purchase![2]}Z`;
  return found;
}

/** The values of `found` that are no time of the spec's format or fall outside [from, to]. */
function outside(found: Record<string, string>, from: string, to: string): Record<string, string> {
  return Object.fromEntries(Object.entries(found).filter(([, t]) => !TIME.test(t) || t < from || t > to));
}

describe('emulator: the times it writes at the edges of its clock', function () {
  this.timeout(30_000);
  let emu: Emulator | undefined;
  afterEach(async () => {
    await emu?.close();
    emu = undefined;
  });

  it('at the end of year 9999, no derived time passes it (billingCycleEndDate is the end of time)', async () => {
    emu = await emulator({ startTime: '9999-12-30T00:00:00Z', accounts: 1, devicesPerAccount: 20 });
    for (const at of ['start', 'end']) {
      if (at === 'end') emu.advance((LATEST - emu.now()) / 1000);
      const found = await readTimes(emu);
      expect(Object.keys(found).length, at).to.be.greaterThan(40);
      expect(outside(found, '9998-01-01', '9999-12-31T23:59:59.999Z'), at).to.deep.equal({});
      // The cycle that began on the bill day of December ends after the clock's last time: it ends there.
      expect(found['devices.list.devices[0].billingCycleEndDate'], at).to.equal('9999-12-31T23:59:59.999Z');
    }
  });

  it('at the earliest start, every time has four digits and is of its own century', async () => {
    emu = await emulator({ startTime: '0002-01-01T00:00:00Z', accounts: 1, devicesPerAccount: 20 });
    const found = await readTimes(emu);
    expect(Object.keys(found).length).to.be.greaterThan(40);
    // Devices are made up to 400 days before the start; a billing cycle ends within a month after it.
    expect(outside(found, '0000-01-01', '0002-02-01')).to.deep.equal({});
  });
});
