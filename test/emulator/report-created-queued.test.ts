/**
 * A location report's creation answers `{ txid, status: "QUEUED" }` for every cacheMode (public-api-facts.md),
 * `estimatedDuration` only for cacheMode 1 and 2. A cacheMode 0 report's result is available at once: its status
 * reads COMPLETED on the first read and its pages can be read. Before, the emulator answered a cacheMode 0
 * creation COMPLETED, which the real service does not.
 */
import { expect } from 'chai';
import { onWorld, type Json } from './helpers.js';

describe('emulator: a location report is created QUEUED', () => {
  const t = onWorld({ seed: 'queued', accounts: 1, devicesPerAccount: 20 });
  const create = (cacheMode: string) => {
    const d = t.seed.accounts[0]!.devices.find((x) => x.iot && x.state === 'active' && x.hasCachedLocation)!;
    const imei = d.deviceIds.find((x) => x.kind === 'imei')!.id;
    return t.raw.api('POST', '/loc/v1/locationreports', {
      accountName: t.account,
      deviceList: [{ id: imei, kind: 'imei' }],
      cacheMode,
    });
  };

  it('answers a cacheMode 0 report QUEUED, without estimatedDuration; its status then reads COMPLETED', async () => {
    const created = await create('0');
    expect(created.status).to.equal(200);
    const body = created.body as Json;
    expect(Object.keys(body).sort()).to.deep.equal(['status', 'txid']);
    expect(body.status).to.equal('QUEUED');
    const txid = String(body.txid);
    const base = `/loc/v1/locationreports/${t.account}/report/${txid}`;
    expect((await t.raw.api('GET', `${base}/status`)).body).to.deep.equal({ txid, status: 'COMPLETED' });
    const page = (await t.raw.api('GET', `${base}/index/0`)).body as Json;
    expect(page).to.include({ txid, totalCount: 1, hasMoreData: false });
  });

  it('answers cacheMode 1 and 2 QUEUED with estimatedDuration, as before', async () => {
    for (const mode of ['1', '2']) {
      const body = (await create(mode)).body as Json;
      expect(body.status, mode).to.equal('QUEUED');
      expect(body.estimatedDuration, mode).to.be.a('string');
    }
  });
});
