/**
 * A lone surrogate (half of a UTF-16 pair, e.g. "\ud800") in what a service answered and the ledger keeps: a
 * device id, an error type, a request id, a location's data. PostgreSQL's text cannot hold one, and its store
 * kept U+FFFD in its place; the SQLite store kept the lone surrogate in what it holds as JSON (the device ids,
 * the data) and, in a column of its own (an error type, a request id), bytes that are not UTF-8, read back as
 * three U+FFFD; a callback's request id and device were kept so too. The same answer read back differently
 * from each store, and a read by the answer's text found nothing on one of them. Both now keep one U+FFFD for
 * each, and a read by the text finds what was kept of it.
 */
import { expect } from 'chai';
import type { Store } from '../../src/store/store.js';
import { forEachBackend } from './backends.js';
import { group, imei, message, run } from './fixtures.js';

/** A lone surrogate. */
const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const AT = '2026-11-23T10:00:30.000Z';

forEachBackend('a lone surrogate in what a service answered', (b) => {
  let store: Store;
  beforeEach(async () => {
    store = await b.open();
    store.createRun(run('r'));
    await store.durable();
  });

  it('is kept as U+FFFD in the ledger: ids, error type, request id, data', async () => {
    store.recordDevices(
      'r',
      'locate',
      [
        group(['a\ud800b', imei(1)], {
          requestId: 'tx\udc00',
          data: [{ time: 'x\udfff', zone: '\\ud800 \ud83d\ude00' }, undefined],
        }),
        group(['\udbff'], {
          outcome: 'failed',
          errorType: 'SVC\ud800',
          errorClass: 'other',
          requestId: 'tx\udc00',
        }),
      ],
      AT,
    );
    await store.durable();
    const results = await store.deviceResults('r');
    expect(
      results.map((r) => [r.deviceId, r.errorType ?? null, r.requestId ?? null, r.data ?? null]),
    ).to.have.deep.members([
      ['a\ufffdb', null, 'tx\ufffd', { time: 'x\ufffd', zone: '\\ud800 \ud83d\ude00' }],
      [imei(1), null, 'tx\ufffd', null],
      ['\ufffd', 'SVC\ufffd', 'tx\ufffd', null],
    ]);
    // Read by what was kept, or by the answer's text, as a resumed run and a confirmation read them.
    for (const [requestId, id] of [
      ['tx\ufffd', 'a\ufffdb'],
      ['tx\udc00', 'a\ud800b'],
    ]) {
      const under = await store.resultsUnder('r', 'locate', [requestId!]);
      expect(under.flatMap((g) => g.ids).sort()).to.deep.equal([imei(1), 'a\ufffdb', '\ufffd'].sort());
      expect((await store.deviceHistory(id!, 10)).map((h) => h.runId)).to.deep.equal(['r']);
    }
    await keptWell(store, 'r');
  });

  it("is kept as U+FFFD in a callback's request id and device, which are read by it", async () => {
    const [id] = await store.appendInbox('A', [message('req\ud800', 'imei:1\udfff')]);
    expect(id).to.be.a('number');
    for (const requestId of ['req\ufffd', 'req\ud800']) {
      const got = await store.inboxByRequest([requestId]);
      expect(got.map((e) => [e.requestId, e.device])).to.deep.equal([['req\ufffd', 'imei:1\ufffd']]);
    }
    // The same message again is the one stored: its key is what was kept.
    expect(await store.appendInbox('A', [message('req\ud800', 'imei:1\udfff')])).to.deep.equal(['duplicate']);
  });
});

/** Nothing of the run's ledger holds a lone surrogate, nor three U+FFFD in a row. */
async function keptWell(store: Store, runId: string): Promise<void> {
  const odd: string[] = [];
  JSON.stringify(await store.deviceResults(runId), (_, v: unknown) => {
    if (typeof v === 'string' && (/\ufffd{3}/.test(v) || LONE.test(v))) odd.push(v);
    return v;
  });
  expect(odd).to.deep.equal([]);
}
