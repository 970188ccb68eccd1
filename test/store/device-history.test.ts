/**
 * A device's history (Store.deviceHistory, the console's device page): its result in every entry of every run
 * that names it, newest first. The entries are found by the range of their ids (rows.ts idRange), not by reading
 * every entry of the store: at ten runs of a million devices the read of every entry took 370 ms on SQLite, on
 * the daemon's event loop, for each device page. Entries written before the range existed get theirs when the
 * store is upgraded; on PostgreSQL, so do those a replica of the version before writes meanwhile.
 */
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { idRange } from '../../src/store/id-range.js';
import { MIGRATIONS as PG_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { MIGRATIONS, SqliteStore } from '../../src/store/sqlite.js';
import type { Store } from '../../src/store/store.js';
import { postgresAtVersion } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';
import { forEachBackend } from './backends.js';
import { group, imei, imeis, MISS, run } from './fixtures.js';

const AT = '2026-11-29T10:00:00.000Z';
const located = (n: number) => ({ latitude: n, longitude: -n });
/** What a history says, a line per result. */
const lines = async (store: Store, id: string, limit = 50) =>
  (await store.deviceHistory(id, limit)).map(
    (h) => `${h.runId}/${h.step}/${h.outcome}${h.errorType ? `/${h.errorType}` : ''}`,
  );
/** How many migrations there were before the one that gave entries their range. */
const before = (migrations: readonly string[]) =>
  migrations.findIndex((m) => m.includes('ledger_by_device_range'));
/** Ids whose order differs between UTF-16 (JavaScript) and UTF-8 (the stores): above U+E000, beyond the BMP. */
const ODD = ['dev-\u{1F600}', 'dev-\uE000', 'dev-a'];

forEachBackend("a device's history", (b) => {
  let store: Store;

  beforeEach(async () => {
    store = await b.open();
    store.createRun(run('r1', { startedAt: '2026-11-20T00:00:00.000Z' }));
    store.createRun(run('r2', { playbook: 'other', startedAt: '2026-11-21T00:00:00.000Z' }));
    store.createRun(run('r3', { startedAt: '2026-11-22T00:00:00.000Z' }));
    // A report of 0-999 in listing order, each with its location; 5, 500 and 900 missed, retried in one batch
    // out of order, and missed again.
    store.recordDevices(
      'r1',
      'report',
      [group(imeis(0, 1000), { data: imeis(0, 1000).map((_, i) => located(i)) })],
      AT,
    );
    store.recordDevices(
      'r1',
      'report',
      [group([imei(900), imei(5), imei(500)], { outcome: 'failed', errorType: MISS, attempts: 2 })],
      AT,
    );
    store.recordDevices('r2', 'suspend', [group([imei(500)], { outcome: 'accepted', requestId: 'q' })], AT);
    store.recordDevices('r2', 'suspend', [group([imei(500)], { requestId: 'q' })], AT);
    // Devices on either side of 1500, not 1500.
    store.recordDevices('r3', 'suspend', [group([imei(1499), imei(1501)])], AT);
    store.recordDevices('r3', 'odd', [group(ODD)], AT);
    await store.durable();
  });

  it('lists the device in every entry that names it, newest first, with its own data', async () => {
    expect(await lines(store, imei(500))).to.deep.equal([
      'r2/suspend/succeeded',
      'r2/suspend/accepted',
      'r1/report/failed/SVC CACHE UNAVAILABLE',
      'r1/report/succeeded',
    ]);
    const history = await store.deviceHistory(imei(500), 50);
    expect(history[3]).to.deep.include({ data: located(500), attempts: 1, playbook: 'pb' });
    expect(history[0]).to.deep.include({ playbook: 'other', runStartedAt: '2026-11-21T00:00:00.000Z' });
    expect(history[0]).to.not.have.property('data');
    expect(await lines(store, imei(5))).to.deep.equal([
      'r1/report/failed/SVC CACHE UNAVAILABLE',
      'r1/report/succeeded',
    ]);
    expect(await lines(store, imei(500), 2)).to.deep.equal(['r2/suspend/succeeded', 'r2/suspend/accepted']);
    // Neither a device the entries bracket, nor a part of an id, nor one no entry names.
    expect(await lines(store, imei(1500))).to.deep.equal([]);
    expect(await lines(store, imei(500).slice(0, 10))).to.deep.equal([]);
    expect(await lines(store, 'nowhere')).to.deep.equal([]);
  });

  it('finds ids whose order differs between UTF-16 and the stores', async () => {
    for (const id of ODD)
      expect(await lines(store, id), JSON.stringify(id)).to.deep.equal(['r3/odd/succeeded']);
    expect(idRange(ODD)).to.deep.equal({ min: '', max: null });
    expect(idRange([imei(7), imei(3), imei(9)])).to.deep.equal({ min: imei(3), max: imei(9) });
  });

  it("reads only the entries whose ids' range holds the device", async () => {
    // An entry whose range says it cannot hold 500 is not read, though it names it: nothing reads every entry.
    await b.query(store, `UPDATE ledger SET min_id = '0', max_id = '1' WHERE run_id = 'r2' RETURNING seq`);
    expect(await lines(store, imei(500))).to.deep.equal([
      'r1/report/failed/SVC CACHE UNAVAILABLE',
      'r1/report/succeeded',
    ]);
  });

  it("answers off the event loop's turn: what the process has to do meanwhile runs", async () => {
    let ran = false;
    // A SQLite store's worker, started already, can answer before the loop's next turn comes: it is held first by
    // a grouping that waits for the write lock another connection gives back only in that turn. The worker
    // answers in turn, so the history comes after.
    const holder = store instanceof SqliteStore ? new Database(store.db.name) : undefined;
    holder?.exec('BEGIN IMMEDIATE');
    const held = holder ? store.latestAmong('r2', [`suspend\0${imei(500)}`]) : undefined;
    setImmediate(() => {
      ran = true;
      holder?.exec('COMMIT');
    });
    try {
      await store.deviceHistory(imei(500), 50);
      expect(ran).to.equal(true);
      if (held) expect((await held).size).to.equal(1);
    } finally {
      holder?.close();
    }
  });
});

describe("a device's history in a state file of the version before", () => {
  it('finds the entries written before, once the file is upgraded', async () => {
    const file = `${tempDir('fleetbook-history-')}/state.db`;
    const old = new Database(file);
    for (const [i, sql] of MIGRATIONS.slice(0, before(MIGRATIONS)).entries()) {
      old.exec(sql);
      old.pragma(`user_version = ${i + 1}`);
    }
    old
      .prepare(`INSERT INTO runs (id, playbook, status, started_at) VALUES ('r1', 'pb', 'succeeded', ?)`)
      .run(AT);
    const insert = old.prepare(
      `INSERT INTO ledger (run_id, step, kind, outcome, attempts, at, device_ids) VALUES ('r1', 'suspend', 'imei', ?, 1, ?, ?)`,
    );
    insert.run('accepted', AT, JSON.stringify([imei(2), imei(1), imei(3)]));
    insert.run('succeeded', AT, JSON.stringify([imei(1)]));
    old.close();
    const store = new SqliteStore(file);
    try {
      expect(await lines(store, imei(1))).to.deep.equal(['r1/suspend/succeeded', 'r1/suspend/accepted']);
      expect(store.db.prepare('SELECT min_id, max_id FROM ledger ORDER BY seq').all()).to.deep.equal([
        { min_id: imei(1), max_id: imei(3) },
        { min_id: imei(1), max_id: imei(1) },
      ]);
    } finally {
      await store.close();
    }
  });
});

describe("a device's history in a PostgreSQL database of the version before", function () {
  this.timeout(60_000);

  it('finds the entries written before, and those a replica of that version writes during the upgrade', async () => {
    const { url, db } = await postgresAtVersion(PG_MIGRATIONS, before(PG_MIGRATIONS));
    try {
      await db.query(
        `INSERT INTO runs (id, playbook, status, started_at) VALUES ('r1', 'pb', 'succeeded', $1)`,
        [AT],
      );
      // How a replica of the version before writes an entry (shortened): without the range.
      const insert = (outcome: string, ids: string[]) =>
        db.query(
          `INSERT INTO ledger (run_id, step, kind, outcome, attempts, at, device_ids)
           VALUES ('r1', 'suspend', 'imei', $1, 1, $2, $3::json)`,
          [outcome, AT, JSON.stringify(ids)],
        );
      await insert('accepted', [imei(2), imei(1), imei(3)]);
      await insert('accepted', ['dev-\u0000-x']);
      const store = await openPostgresStore(url);
      try {
        await insert('succeeded', [imei(1)]);
        expect(await lines(store, imei(1))).to.deep.equal(['r1/suspend/succeeded', 'r1/suspend/accepted']);
        expect(await lines(store, 'dev-\u0000-x')).to.deep.equal(['r1/suspend/accepted']);
        const { rows } = await db.query('SELECT min_id, max_id FROM ledger ORDER BY seq');
        expect(rows).to.deep.equal([
          { min_id: imei(1), max_id: imei(3) },
          { min_id: '', max_id: null },
          { min_id: imei(1), max_id: imei(1) },
        ]);
      } finally {
        await store.close();
      }
    } finally {
      await db.end();
    }
  });
});
