/**
 * Pages of a sensor query, over loopback. The spec gives `$pagenumber` without saying where pages start; the
 * emulator's pages start at 1 (docs/spec-decisions.md). A `$pagenumber` of 0 was answered as page 1, so a user
 * who paged 0, 1, 2 ... read the first page twice: 0 is now refused.
 */
import { expect } from 'chai';
import type { Emulator } from '../../src/emulator/index.js';
import { emulator, Raw } from './helpers.js';

const PATH = '/dm/v1/devices/sensors/actions/query';
const ACCOUNT = '0000123456-00001';

describe('emulator: pages of a sensor query', () => {
  let emu: Emulator;
  let raw: Raw;

  before(async () => {
    emu = await emulator();
    raw = new Raw(emu);
  });
  after(async () => {
    await emu.close();
  });

  const ids = (body: unknown) => (body as { id: string }[]).map((r) => r.id);

  it('page 1 is the first, page 2 the next; $pagenumber 0 is refused', async () => {
    const all = await raw.api('POST', PATH, { accountname: ACCOUNT, filter: { $nopagination: true } });
    expect(all.status).to.equal(200);
    const everyId = ids(all.body);
    expect(everyId.length).to.be.greaterThan(4);
    const page = (n: number) =>
      raw.api('POST', PATH, { accountname: ACCOUNT, filter: { $limitnumber: 2, $pagenumber: n } });
    expect(ids((await page(1)).body)).to.deep.equal(everyId.slice(0, 2));
    expect(ids((await page(2)).body)).to.deep.equal(everyId.slice(2, 4));
    const zero = await page(0);
    expect(zero.status).to.equal(400);
    expect(zero.body).to.include({ error: 'INVALID_PARAMETER' });
  });
});
