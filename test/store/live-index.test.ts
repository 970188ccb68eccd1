/**
 * The pages of a running run learn which devices have several results in a step from an index of the run
 * (LiveIndexes), made at its first lookup and brought up to date at each from the entries written since: a page
 * costs a lookup of its devices, not a pass over every entry of the run (1.1 s for the first page of a running
 * suspend of a million devices, 145 ms for each next one, before).
 */
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../src/store/sqlite.js';
import { LIVE_RUNS, LiveIndexes } from '../../src/store/sqlite-live.js';
import type { DeviceGroup } from '../../src/store/store.js';
import { imei, run } from './fixtures.js';

const AT = '2026-11-23T10:00:30.000Z';
const group = (outcome: DeviceGroup['outcome'], from: number, to: number): DeviceGroup => ({
  kind: 'imei',
  outcome,
  attempts: 1,
  ids: Array.from({ length: to - from }, (_, i) => imei(from + i)),
});
const key = (step: string, n: number) => `${step}\0${imei(n)}`;

/** The seq of each entry of the run, in order. */
const seqs = (store: SqliteStore, runId: string) =>
  store.db.prepare('SELECT seq FROM ledger WHERE run_id = ? ORDER BY seq').pluck().all(runId) as number[];

for (const where of ['file', 'memory'] as const) {
  describe(`SQLite store (${where}): devices with several results in a running run`, () => {
    let dir: string;
    let store: SqliteStore;

    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), 'fleetbook-live-'));
      store = new SqliteStore(where === 'file' ? join(dir, 'state.db') : ':memory:');
      store.createRun(run('r'));
      // Devices 0-99 accepted, then 0-49 confirmed; device 0 of another step once.
      store.recordDevices('r', 'suspend', [group('accepted', 0, 100)], AT);
      store.recordDevices('r', 'suspend', [group('succeeded', 0, 50)], AT);
      store.recordDevices('r', 'notify', [group('succeeded', 0, 1)], AT);
      await store.durable();
    });

    afterEach(async () => {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    });

    it('follows the entries written between lookups', async () => {
      const [, confirmed] = seqs(store, 'r');
      const asked = [key('suspend', 0), key('suspend', 49), key('suspend', 50), key('notify', 0)];
      expect([...(await store.repeatedAmong('r', asked))]).to.deep.equal([
        [key('suspend', 0), confirmed],
        [key('suspend', 49), confirmed],
      ]);
      // Device 50 confirmed now, device 0 retried and failed: both in the next lookup, with the entry that counts.
      store.recordDevices('r', 'suspend', [group('succeeded', 50, 51)], AT);
      store.recordDevices('r', 'suspend', [group('failed', 0, 1)], AT);
      store.recordDevices('r', 'notify', [group('succeeded', 0, 1)], AT);
      await store.durable();
      const [, , , late50, retried0, notified] = seqs(store, 'r');
      expect(new Map(await store.repeatedAmong('r', asked))).to.deep.equal(
        new Map([
          [key('suspend', 0), retried0],
          [key('suspend', 49), confirmed],
          [key('suspend', 50), late50],
          [key('notify', 0), notified],
        ]),
      );
    });

    it('reads only the entries written since the last lookup, not the run again', async () => {
      const [accepted, confirmed] = seqs(store, 'r');
      expect((await store.repeatedAmong('r', [key('suspend', 0)])).get(key('suspend', 0))).to.equal(
        confirmed,
      );
      // The run's first entries gone from the file: a lookup that passed over the run again would no longer
      // find device 0 twice. The index has them already.
      store.db.prepare('DELETE FROM ledger WHERE seq IN (?, ?)').run(accepted, confirmed);
      store.recordDevices('r', 'suspend', [group('succeeded', 99, 100)], AT);
      await store.durable();
      const later = seqs(store, 'r').at(-1);
      const found = await store.repeatedAmong('r', [key('suspend', 0), key('suspend', 99)]);
      expect(new Map(found)).to.deep.equal(
        new Map([
          [key('suspend', 0), confirmed],
          [key('suspend', 99), later],
        ]),
      );
    });
  });
}

describe('SQLite store: the indexes of running runs', () => {
  it(`keeps ${LIVE_RUNS} runs indexed at most, and makes again the index of a run it dropped`, async () => {
    const store = new SqliteStore(':memory:');
    const live = new LiveIndexes(store.db);
    const tables = () =>
      store.db.prepare("SELECT count(*) FROM temp.sqlite_master WHERE type = 'table'").pluck().get();
    const runs = Array.from({ length: LIVE_RUNS + 2 }, (_, i) => `r${i}`);
    for (const [i, id] of runs.entries()) {
      store.createRun(run(id));
      // Run i has devices 0..i twice.
      store.recordDevices(id, 's', [group('accepted', 0, 10), group('succeeded', 0, i + 1)], AT);
    }
    await store.durable();
    const asked = Array.from({ length: 10 }, (_, n) => key('s', n));
    for (const [i, id] of runs.entries()) expect(live.repeated(id, asked)).to.have.length(i + 1);
    expect(tables(), 'indexes kept').to.equal(LIVE_RUNS);
    // The first runs were dropped: asked again, they are indexed again, with what they have now.
    store.recordDevices('r0', 's', [group('failed', 5, 6)], AT);
    await store.durable();
    expect(live.repeated('r0', asked).map(([, device]) => device)).to.deep.equal([imei(0), imei(5)]);
    expect(tables(), 'indexes kept').to.equal(LIVE_RUNS);
    await store.close();
  });
});
