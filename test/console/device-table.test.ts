/**
 * The console's per-device table of a run, on every backend: each device's latest result in each step (a
 * retried or confirmed device has several entries, the latest counts), filtered in the store by step, outcome,
 * error type and part of a device id, paged by a cursor that may stop inside an entry; and a device's history
 * across runs.
 */
import { expect } from 'chai';
import {
  decodeCursor,
  devicePage,
  encodeCursor,
  latestOf,
  type DeviceFilter,
} from '../../src/store/device-table.js';
import type { Store } from '../../src/store/store.js';
import { forEachBackend } from '../store/backends.js';
import { group, imei, imeis, MISS, run } from '../store/fixtures.js';

const AT = '2026-11-23T10:00:00.000Z';

/** Every row of the table, read `limit` at a time: the ids in order, and how many pages it took. */
async function all(store: Store, runId: string, f: DeviceFilter, limit: number, ended = false) {
  const latest = latestOf(store, runId, ended);
  const rows: string[] = [];
  let pages = 0;
  let after;
  do {
    const page = await devicePage(store, runId, latest, f, after, limit);
    pages++;
    rows.push(
      ...page.rows.map((r) => `${r.step}/${r.deviceId}/${r.outcome}${r.errorType ? `/${r.errorType}` : ''}`),
    );
    // The cursor goes through the URL as text.
    after = page.next ? decodeCursor(encodeCursor(page.next)) : undefined;
    expect(page.rows.length, 'a page').to.be.at.most(limit);
    if (page.next) expect(page.rows.length, 'a page with a next one is full').to.equal(limit);
  } while (after);
  return { rows, pages };
}

/** The first row of a running run's table (device/outcome), and how many lookups its page made. */
async function firstRow(store: Store, runId: string) {
  const latest = latestOf(store, runId, false);
  let lookups = 0;
  const counting = (keys: readonly string[]) => {
    lookups++;
    return latest(keys);
  };
  const page = await devicePage(store, runId, counting, {}, undefined, 1);
  return { rows: page.rows.map((r) => `${r.deviceId}/${r.outcome}`), lookups };
}

forEachBackend("the console: a run's device table and a device's history", (b) => {
  let store: Store;

  beforeEach(async () => {
    store = await b.open();
    store.createRun(run('r1'));
    store.createRun(run('r2', { playbook: 'other', startedAt: '2026-11-24T10:00:00.000Z' }));
    // A report: 0-9 located, 10-14 missed and retried (10-12 then located, 13-14 missed again), 15-16 refused.
    store.recordDevices(
      'r1',
      'report',
      [
        group(imeis(0, 10)),
        group(imeis(10, 15), { outcome: 'failed', errorType: MISS, errorClass: 'remediable' }),
        group(imeis(15, 17), {
          outcome: 'failed',
          errorType: 'SVC CONSENT CHECK FAILED',
          errorClass: 'permanent',
        }),
      ],
      AT,
    );
    store.recordDevices(
      'r1',
      'report',
      [
        group(imeis(10, 13), { attempts: 2 }),
        group(imeis(13, 15), { outcome: 'failed', errorType: MISS, errorClass: 'remediable', attempts: 2 }),
      ],
      AT,
    );
    // A suspend of 3 devices: accepted, then confirmed.
    store.recordDevices(
      'r1',
      'suspend',
      [group(imeis(0, 3), { outcome: 'accepted', requestId: 'req-1' })],
      AT,
    );
    store.recordDevices('r1', 'suspend', [group(imeis(0, 3), { requestId: 'req-1' })], AT);
    store.recordDevices(
      'r2',
      'locate',
      [group([imei(1)], { outcome: 'failed', errorType: 'ABSENT SUBSCRIBER' })],
      AT,
    );
    await store.durable();
  });

  it('gives each device its latest result once per step, in every page size', async () => {
    const expected = [
      ...imeis(0, 10).map((id) => `report/${id}/succeeded`),
      ...imeis(15, 17).map((id) => `report/${id}/failed/SVC CONSENT CHECK FAILED`),
      ...imeis(10, 13).map((id) => `report/${id}/succeeded`),
      ...imeis(13, 15).map((id) => `report/${id}/failed/${MISS}`),
      ...imeis(0, 3).map((id) => `suspend/${id}/succeeded`),
    ];
    // A run that goes on is read for the devices of each page; an ended one grouped once, into the store.
    for (const ended of [false, true, true])
      for (const limit of [1, 3, 7, 500]) {
        const { rows, pages } = await all(store, 'r1', {}, limit, ended);
        expect(rows, `pages of ${limit}${ended ? ', ended' : ''}`).to.deep.equal(expected);
        expect(pages).to.equal(Math.max(1, Math.ceil(expected.length / limit)));
      }
    await store.durable();
    // Of the ended run, only the entries every device of which was replaced are kept: the misses of 10-14 (all
    // retried) and the suspend's accepted devices (all confirmed); no row per device.
    expect(
      await b.query(store, 'SELECT CAST(count(*) AS INTEGER) AS n FROM ledger_superseded'),
    ).to.deep.equal([{ n: 2 }]);
    expect(await b.query(store, 'SELECT CAST(count(*) AS INTEGER) AS n FROM ledger_latest')).to.deep.equal([
      { n: 0 },
    ]);
  });

  it('filters by step, outcome, error type and part of a device id, in the store', async () => {
    expect((await all(store, 'r1', { errorType: MISS }, 2)).rows).to.deep.equal(
      imeis(13, 15).map((id) => `report/${id}/failed/${MISS}`),
    );
    expect((await all(store, 'r1', { step: 'suspend', outcome: 'succeeded' }, 2)).rows).to.have.length(3);
    expect(
      (await all(store, 'r1', { outcome: 'accepted' }, 2)).rows,
      'accepted, then confirmed',
    ).to.deep.equal([]);
    const part = imei(11).slice(-4);
    expect((await all(store, 'r1', { device: part }, 5)).rows).to.deep.equal([
      `report/${imei(11)}/succeeded`,
    ]);
    expect((await all(store, 'r1', { device: 'no such device' }, 5)).rows).to.deep.equal([]);
  });

  it('passes over an ended run’s entries whose every device has a later result, without looking them up', async () => {
    // The run's grouping is kept (as the daemon does when a large run ends); the pages then count what they ask.
    await store.latestAmong('r1', []);
    const asked: string[] = [];
    const latest = latestOf(store, 'r1', true);
    const counting = (keys: readonly string[]) => {
      asked.push(...keys.map((k) => k.replace('\0', '/')));
      return latest(keys);
    };
    const page = await devicePage(store, 'r1', counting, { errorType: MISS }, undefined, 50);
    expect(page.rows.map((r) => r.deviceId)).to.deep.equal(imeis(13, 15));
    // The first attempt's entry of 10-14 (each retried since) is not read; the retry's entry is.
    expect(asked).to.deep.equal(imeis(13, 15).map((id) => `report/${id}`));
    // The suspend's accepted entry (each device confirmed since) neither.
    asked.length = 0;
    const suspend = await devicePage(store, 'r1', counting, { step: 'suspend' }, undefined, 50);
    expect(suspend.rows.map((r) => `${r.deviceId}/${r.outcome}`)).to.deep.equal(
      imeis(0, 3).map((id) => `${id}/succeeded`),
    );
    expect(asked).to.deep.equal(imeis(0, 3).map((id) => `suspend/${id}`));
  });

  it('goes through many devices with a later result in a few lookups, however few rows the page still needs', async () => {
    // A running suspend of 2,000 devices, accepted then confirmed: the page's first row is in the second entry.
    store.createRun(run('r3'));
    store.recordDevices(
      'r3',
      'suspend',
      [group(imeis(0, 2000), { outcome: 'accepted', requestId: 'q' })],
      AT,
    );
    store.recordDevices('r3', 'suspend', [group(imeis(0, 2000), { requestId: 'q' })], AT);
    await store.durable();
    // Four at a time, it took 501 lookups. Chunks of 4, 8, ... 1,024 go through the accepted 2,000: ten lookups
    // with the one of the confirmed entry.
    expect(await firstRow(store, 'r3')).to.deep.equal({ rows: [`${imei(0)}/succeeded`], lookups: 10 });
  });

  it('looks up the devices of several entries together when each has a later result', async () => {
    // A running suspend of 20 requests of 10 devices, each accepted, then all confirmed in one entry: the page's
    // first row is in the 21st entry. A chunk of devices stopped at its entry's end: 22 lookups. Now a chunk goes
    // on into the next entries (read 1, 2, 4, 8, then 8 at a time), and grows as each falls short: 7.
    store.createRun(run('r4'));
    for (let r = 0; r < 20; r++)
      store.recordDevices(
        'r4',
        'suspend',
        [group(imeis(r * 10, r * 10 + 10), { outcome: 'accepted', requestId: `q${r}` })],
        AT,
      );
    store.recordDevices('r4', 'suspend', [group(imeis(0, 200))], AT);
    await store.durable();
    expect(await firstRow(store, 'r4')).to.deep.equal({ rows: [`${imei(0)}/succeeded`], lookups: 7 });
  });

  it('gives each row what its step returned for the device, the latest result’s, in every page size', async () => {
    // A report of 6 devices: 0-3 located, 4-5 missed, then located on a retry; a suspend of 0-1 returns nothing.
    const at = (n: number) => ({ latitude: 25 + n, longitude: -121, radius: 100 + n, cached: n % 2 === 0 });
    store.createRun(run('r5'));
    store.recordDevices(
      'r5',
      'report',
      [
        group(imeis(0, 4), { data: imeis(0, 4).map((_, n) => at(n)) }),
        group(imeis(4, 6), { outcome: 'failed', errorType: MISS, errorClass: 'remediable' }),
      ],
      AT,
    );
    store.recordDevices('r5', 'report', [group(imeis(4, 6), { attempts: 2, data: [at(4), at(5)] })], AT);
    store.recordDevices('r5', 'suspend', [group(imeis(0, 2), { requestId: 'req-5' })], AT);
    await store.durable();
    const expected = [
      ...imeis(0, 6).map((id, n) => ['report', id, at(n)]),
      ...imeis(0, 2).map((id) => ['suspend', id, undefined]),
    ];
    for (const ended of [false, true])
      for (const limit of [1, 3, 500]) {
        const latest = latestOf(store, 'r5', ended);
        const rows: unknown[] = [];
        let after;
        do {
          const page = await devicePage(store, 'r5', latest, {}, after, limit);
          rows.push(...page.rows.map((r) => [r.step, r.deviceId, r.data]));
          after = page.next;
        } while (after);
        expect(rows, `pages of ${limit}${ended ? ', ended' : ''}`).to.deep.equal(expected);
      }
    // Filtered too: the retried devices' locations are their retry's.
    const retried = await devicePage(
      store,
      'r5',
      latestOf(store, 'r5', true),
      { device: imei(5) },
      undefined,
      5,
    );
    expect(retried.rows.map((r) => [r.attempts, r.data])).to.deep.equal([[2, at(5)]]);
  });

  it('reads the data of devices by entry and place, null for none, in the order asked', async () => {
    store.createRun(run('r6'));
    store.recordDevices('r6', 'report', [group(imeis(0, 3), { data: [{ n: 0 }, undefined, { n: 2 }] })], AT);
    store.recordDevices('r6', 'suspend', [group(imeis(0, 3))], AT);
    await store.durable();
    const [report, suspend] = await b.query<{ seq: number }>(
      store,
      "SELECT CAST(seq AS INTEGER) AS seq FROM ledger WHERE run_id = 'r6' ORDER BY seq",
    );
    const seq = (report as { seq: number }).seq;
    expect(
      await store.ledgerData('r6', [
        { seq, index: 2 },
        { seq, index: 0 },
        { seq, index: 1 },
        { seq: (suspend as { seq: number }).seq, index: 0 },
        { seq, index: 3 },
      ]),
      'the third, the first, one without, one of an entry without, one past the entry',
    ).to.deep.equal([{ n: 2 }, { n: 0 }, null, null, null]);
    expect(await store.ledgerData('r1', [{ seq, index: 0 }]), 'another run’s entry').to.deep.equal([null]);
    expect(await store.ledgerData('r6', [])).to.deep.equal([]);
  });

  it("lists every result of a device, newest first, with its run's playbook and status", async () => {
    const history = await store.deviceHistory(imei(1), 50);
    expect(history.map((h) => [h.runId, h.playbook, h.step, h.outcome, h.errorType ?? ''])).to.deep.equal([
      ['r2', 'other', 'locate', 'failed', 'ABSENT SUBSCRIBER'],
      ['r1', 'pb', 'suspend', 'succeeded', ''],
      ['r1', 'pb', 'suspend', 'accepted', ''],
      ['r1', 'pb', 'report', 'succeeded', ''],
    ]);
    expect(history[0]).to.include({ runStatus: 'running', runStartedAt: '2026-11-24T10:00:00.000Z' });
    // An id that is a part of another is not that one.
    expect(await store.deviceHistory(imei(1).slice(0, 10), 50)).to.deep.equal([]);
  });

  it('rejects a cursor it did not write', () => {
    expect(decodeCursor('bm9wZQ')).to.equal(undefined);
    expect(decodeCursor('%%%')).to.equal(undefined);
  });
});
