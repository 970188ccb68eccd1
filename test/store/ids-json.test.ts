/**
 * The JSON of a batch's ids, made once for its claim, its `accepted` entries and their results (ids-json.ts): always
 * that of the ids given, whatever became of an array written before; and, on the SQLite store, the ledger and the
 * claims hold each batch's own ids when one array is written, changed in place, and written again.
 */
import { expect } from 'chai';
import { IdsJson } from '../../src/store/ids-json.js';
import { idRange } from '../../src/store/id-range.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { storedJson } from '../../src/store/text.js';
import { run } from './fixtures.js';

describe('the JSON of the ids of a batch', () => {
  it("is JSON.stringify's, and as the ledger keeps it with its range, for the ids given each time", () => {
    const made = new IdsJson();
    const ids = ['356758880000000', '356758880000007', '356758880000014'];
    const expectFor = (list: string[]) => {
      expect(made.json(list)).to.equal(JSON.stringify(list));
      const stored = storedJson(JSON.stringify(list));
      expect(made.stored(list)).to.deep.equal({
        json: stored,
        range: idRange(JSON.parse(stored) as string[]),
      });
    };
    expectFor(ids);
    // The same ids in another array, then the array itself changed in place: its middle, its order, its length.
    expectFor([...ids]);
    ids[1] = '356758880000008';
    expectFor(ids);
    ids.reverse();
    expectFor(ids);
    ids.push('1');
    expectFor(ids);
    ids.length = 0;
    expectFor(ids);
    // A lone surrogate, kept as U+FFFD, and a range left open; a list longer than those kept; a NUL.
    expectFor(['a\ud800', 'b']);
    expectFor(['a\u{1F600}', 'a\uE000']);
    expectFor(Array.from({ length: 5000 }, (_, i) => String(i)));
    expectFor(['x\0']);
    // More lists than are kept, and the first again.
    const many = Array.from({ length: 20 }, (_, i) => [String(i), String(i + 100)]);
    for (const list of many) expectFor(list);
    for (const list of many) expectFor(list);
  });

  it('writes, on the SQLite store, the claim and the entries of the ids an array holds at each write', async () => {
    const store = new SqliteStore(':memory:');
    try {
      store.createRun(run('r1'));
      const ids = ['356758880000000', '356758880000007'];
      const at = '2026-11-20T00:01:00.000Z';
      const entry = { kind: 'imei', outcome: 'accepted' as const, attempts: 1, requestId: 'q-1' };
      expect(await store.lockDevices('o', 'o/1', ids, Date.now())).to.equal(undefined);
      store.recordDevices('r1', 'suspend', [{ ...entry, ids }], at);
      // The same array, changed in place, then written again: its new ids are written, not those of before.
      ids[1] = '356758880000014';
      store.recordDevices('r1', 'suspend', [{ ...entry, ids, outcome: 'succeeded' }], at);
      expect(await store.lockDevices('o', 'o/2', ids, Date.now())).to.equal(undefined);
      await store.durable();
      const rows = (await store.deviceResults('r1')).map((r) => [r.deviceId, r.outcome]);
      expect(rows).to.deep.equal([
        ['356758880000000', 'succeeded'],
        ['356758880000007', 'accepted'],
        ['356758880000014', 'succeeded'],
      ]);
      const db = (store as unknown as { db: { prepare(s: string): { all(): unknown[] } } }).db;
      expect(
        db.prepare('SELECT holder, device_ids AS ids FROM device_claims ORDER BY holder').all(),
      ).to.deep.equal([
        { holder: 'o/1', ids: '["356758880000000","356758880000007"]' },
        { holder: 'o/2', ids: '["356758880000000","356758880000014"]' },
      ]);
      expect(
        db.prepare('SELECT device_ids AS ids, min_id AS min, max_id AS max FROM ledger ORDER BY seq').all(),
      ).to.deep.equal([
        { ids: '["356758880000000","356758880000007"]', min: '356758880000000', max: '356758880000007' },
        { ids: '["356758880000000","356758880000014"]', min: '356758880000000', max: '356758880000014' },
      ]);
    } finally {
      await store.close();
    }
  });
});
