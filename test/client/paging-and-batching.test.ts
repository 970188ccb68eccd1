/**
 * Paging: location report results and exclusions by startIndex (0, then by the items received), device lists
 * by the largest device id seen, with status 202 on pages that have more data. `items()` streams every item in
 * order, and the plain call collects them all.
 *
 * Batching: 25,000 devices in one location.createReport become exactly 3 requests of 10,000, 10,000 and
 * 5,000 devices, and the result lists one report per batch with its device count.
 */
import { expect } from 'chai';

import { ApiError, InputError } from '../../src/errors.js';
import { onRecorder, type RecordedRequest } from '../helpers/recorder.js';

const ACC = '0000123456-00001';
const imei = (i: number) => String(350000000000000 + i);
const entry = (i: number) => ({
  msid: imei(i),
  pd: { time: '20260101120000', x: '40.7', y: '-74.0', radius: '500', qos: true },
  error: {},
});

describe('paging', () => {
  const t = onRecorder({ each: true });

  /** A report of `total` entries served `size` at a time from whatever startIndex is asked. */
  function serveReport(total: number, size: number) {
    t.rec.handle(/^GET \/api\/loc\/v1\/locationreports\/.*\/index\/\d+$/, (r: RecordedRequest) => {
      const start = Number(r.path.split('/').at(-1));
      const list = Array.from({ length: Math.max(0, Math.min(size, total - start)) }, (_, k) =>
        entry(start + k),
      );
      return {
        status: 200,
        body: {
          startIndex: start,
          txid: 'tx-1',
          totalCount: total,
          hasMoreData: start + list.length < total,
          devLocationList: list,
        },
      };
    });
  }
  const reportPages = () =>
    t.rec
      .apiRequests()
      .map((r) => r.path.replace(`/api/loc/v1/locationreports/${ACC}/report/tx-1/index/`, ''));

  it('location.getReport reads 3 pages: startIndex 0, then by items received', async () => {
    serveReport(2_500, 1_000);
    const res = await t.client.location.getReport({ accountName: ACC, txid: 'tx-1' });
    expect(reportPages()).to.deep.equal(['0', '1000', '2000']);
    expect(res.txid).to.equal('tx-1');
    expect(res.totalCount).to.equal(2_500);
    expect(res.devLocationList.map((e) => e.msid)).to.deep.equal(
      Array.from({ length: 2_500 }, (_, i) => imei(i)),
    );
  });

  it('location.getReport advances by what a short page actually held', async () => {
    // The service answers fewer entries than a full page: the next startIndex follows the items received.
    serveReport(7, 3);
    const res = await t.client.location.getReport({ accountName: ACC, txid: 'tx-1' });
    expect(reportPages()).to.deep.equal(['0', '3', '6']);
    expect(res.devLocationList).to.have.length(7);
  });

  it('items() yields every report entry in order, one page at a time', async () => {
    serveReport(2_500, 1_000);
    const seen: string[] = [];
    let requestsWhenFirstItemSeen = -1;
    for await (const item of t.client.items('location.getReport', { accountName: ACC, txid: 'tx-1' })) {
      if (requestsWhenFirstItemSeen < 0) requestsWhenFirstItemSeen = t.rec.apiRequests().length;
      seen.push((item as { msid: string }).msid);
    }
    expect(seen).to.deep.equal(Array.from({ length: 2_500 }, (_, i) => imei(i)));
    // Streamed: the first item arrives before the later pages are asked for.
    expect(requestsWhenFirstItemSeen).to.equal(1);
    expect(reportPages()).to.deep.equal(['0', '1000', '2000']);
  });

  it('a start index given by the caller is where paging starts', async () => {
    serveReport(2_500, 1_000);
    const res = await t.client.location.getReport({ accountName: ACC, txid: 'tx-1', startIndex: 2_000 });
    expect(reportPages()).to.deep.equal(['2000']);
    expect(res.devLocationList).to.have.length(500);
  });

  it('location.getExclusions reads every page', async () => {
    const all = Array.from({ length: 5 }, (_, i) => imei(i));
    t.rec.handle(/^GET \/api\/loc\/v1\/consents\//, (r) => {
      const start = Number(r.path.split('/').at(-1));
      const exclusion = all.slice(start, start + 2);
      return {
        status: 200,
        body: {
          accountName: ACC,
          allDevice: false,
          hasMoreData: start + exclusion.length < all.length,
          totalCount: all.length,
          updateTime: '2026-01-01T00:00:00Z',
          exclusion,
        },
      };
    });
    const res = await t.client.location.getExclusions({ accountName: ACC });
    expect(t.rec.apiRequests().map((r) => r.path)).to.deep.equal(
      [0, 2, 4].map((i) => `/api/loc/v1/consents/${ACC}/index/${i}`),
    );
    expect(res).to.deep.equal({
      accountName: ACC,
      allDevice: false,
      totalCount: 5,
      updateTime: '2026-01-01T00:00:00Z',
      exclusion: all,
    });
    const items: unknown[] = [];
    for await (const x of t.client.items('location.getExclusions', { accountName: ACC })) items.push(x);
    expect(items).to.deep.equal(all);
  });

  it('devices.list reads 3 pages by largestDeviceIdSeen, with 202 on pages that have more data', async () => {
    const device = (i: number) => ({
      accountName: ACC,
      deviceIds: [
        { id: imei(i), kind: 'imei' },
        // A second identifier that sorts above every IMEI: paging must use the first one.
        { id: `99${i}`, kind: 'iccid' },
      ],
      carrierInformations: [{ carrierName: 'Carrier', state: 'active' }],
    });
    const all = Array.from({ length: 7 }, (_, i) => device(i));
    t.rec.handle('POST /api/m2m/v1/devices/actions/list', (r) => {
      const after = (r.body as { largestDeviceIdSeen?: string }).largestDeviceIdSeen;
      const rest = all.filter((d) => after === undefined || d.deviceIds[0]!.id > after);
      const devices = rest.slice(0, 3);
      const hasMoreData = rest.length > 3;
      return { status: hasMoreData ? 202 : 200, body: { hasMoreData, devices } };
    });

    const res = await t.client.devices.list({ accountName: ACC, maxNumberOfDevices: 3 });

    const bodies = t.rec.apiRequests().map((r) => r.body);
    expect(bodies).to.deep.equal([
      { accountName: ACC, maxNumberOfDevices: 3 },
      { accountName: ACC, maxNumberOfDevices: 3, largestDeviceIdSeen: imei(2) },
      { accountName: ACC, maxNumberOfDevices: 3, largestDeviceIdSeen: imei(5) },
    ]);
    expect(res.devices).to.deep.equal(all);

    const ids: string[] = [];
    for await (const d of t.client.items('devices.list', { accountName: ACC, maxNumberOfDevices: 3 }))
      ids.push((d as { deviceIds: { id: string }[] }).deviceIds[0]!.id);
    expect(ids).to.deep.equal(all.map((d) => d.deviceIds[0]!.id));
  });

  it('pages() yields each page as the service sent it', async () => {
    serveReport(2_500, 1_000);
    const sizes: number[] = [];
    for await (const p of t.client.pages('location.getReport', { accountName: ACC, txid: 'tx-1' }))
      sizes.push((p as { devLocationList: unknown[] }).devLocationList.length);
    expect(sizes).to.deep.equal([1_000, 1_000, 500]);
  });

  it('an error on a later page ends the iteration with that error, after the earlier items', async () => {
    serveReport(2_500, 1_000);
    t.rec.enqueue(`GET /api/loc/v1/locationreports/${ACC}/report/tx-1/index/1000`, {
      status: 400,
      body: { errorCode: 'INVALID_PARAMETER', errorMessage: 'Invalid JSON' },
    });
    let n = 0;
    let err: unknown;
    try {
      for await (const _ of t.client.items('location.getReport', { accountName: ACC, txid: 'tx-1' })) n++;
    } catch (e) {
      err = e;
    }
    expect(n).to.equal(1_000);
    expect(err).to.be.instanceOf(ApiError);
  });
});

describe('location.createReport batching', () => {
  const t = onRecorder({ each: true });
  beforeEach(() => {
    // Each batch gets a txid named after its first device, so that results can be matched to batches.
    t.rec.handle('POST /api/loc/v1/locationreports', (r) => {
      const list = (r.body as { deviceList: { id: string }[] }).deviceList;
      return { status: 200, body: { txid: `tx-${list[0]!.id}`, status: 'QUEUED', estimatedDuration: '5' } };
    });
  });

  it('25,000 devices become exactly 3 requests of 10,000, 10,000 and 5,000 devices', async () => {
    const deviceList = Array.from({ length: 25_000 }, (_, i) => ({ id: imei(i), kind: 'IMEI' }));

    const res = await t.client.location.createReport({ accountName: ACC, deviceList, cacheMode: '1' });

    const sent = t.rec.requestsTo('/api/loc/v1/locationreports', 'POST');
    expect(sent).to.have.length(3);
    const bodies = sent
      .map(
        (r) =>
          r.body as { accountName: string; cacheMode: string; deviceList: { id: string; kind: string }[] },
      )
      .sort((a, b) => a.deviceList[0]!.id.localeCompare(b.deviceList[0]!.id));
    expect(bodies.map((b) => b.deviceList.length)).to.deep.equal([10_000, 10_000, 5_000]);
    // Every device exactly once, in order, normalised; the other fields on every batch.
    expect(bodies.flatMap((b) => b.deviceList)).to.deep.equal(
      deviceList.map((d) => ({ id: d.id, kind: 'imei' })),
    );
    for (const b of bodies) {
      expect(b.accountName).to.equal(ACC);
      expect(b.cacheMode).to.equal('1');
    }
    expect(res).to.deep.equal({
      reports: [
        { txid: `tx-${imei(0)}`, status: 'QUEUED', estimatedDuration: '5', devices: 10_000 },
        { txid: `tx-${imei(10_000)}`, status: 'QUEUED', estimatedDuration: '5', devices: 10_000 },
        { txid: `tx-${imei(20_000)}`, status: 'QUEUED', estimatedDuration: '5', devices: 5_000 },
      ],
    });
  });

  it('10,000 devices are one request', async () => {
    const deviceList = Array.from({ length: 10_000 }, (_, i) => ({ id: imei(i), kind: 'imei' }));
    const res = await t.client.location.createReport({ accountName: ACC, deviceList });
    expect(t.rec.requestsTo('/api/loc/v1/locationreports')).to.have.length(1);
    expect(res.reports.map((r) => r.devices)).to.deep.equal([10_000]);
  });

  it('a failed batch throws, and the error carries the reports already created', async () => {
    t.rec.enqueue(
      (r) =>
        r.path === '/api/loc/v1/locationreports' &&
        (r.body as { deviceList: { id: string }[] }).deviceList[0]!.id === imei(10_000),
      { status: 400, body: { errorCode: 'INVALID_PARAMETER', errorMessage: 'Device not found' } },
    );
    const deviceList = Array.from({ length: 25_000 }, (_, i) => ({ id: imei(i), kind: 'imei' }));
    let err: unknown;
    try {
      await t.client.location.createReport({ accountName: ACC, deviceList });
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(ApiError);
    const partial = (err as ApiError).partial as { reports: { txid: string; devices: number }[] };
    expect(partial.reports.map((r) => [r.txid, r.devices])).to.deep.equal([
      [`tx-${imei(0)}`, 10_000],
      [`tx-${imei(20_000)}`, 5_000],
    ]);
  });

  it('location.setExclusions refuses more than 2,000 devices with a clear error, sending nothing', async () => {
    let err: unknown;
    try {
      await t.client.location.setExclusions({
        accountName: ACC,
        exclusion: Array.from({ length: 2_001 }, (_, i) => imei(i)),
      });
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(InputError);
    expect((err as InputError).message).to.match(/exclusion has 2001 items; at most 2000 are allowed/);
    expect(t.rec.requests).to.deep.equal([]);
  });
});
