/**
 * A list of devices sent again (a streamed report's `devices.retry`, stored-retries.ts) keeps the error each run
 * of its devices was sent again for in a column of its own, step_items.errors_json, beside the runs' own kinds:
 * before, the error was written inside each run's kind (`["imei","SVC CACHE UNAVAILABLE"]`), a kind no device
 * has. A row of that form, left by the version before in a store it upgraded (or written by a replica of it
 * meanwhile), is never read (the step that wrote it makes its lists again: test/runner/stored-retry-lists.test.ts),
 * and goes with the other items of its run as the run ends. On every backend, and on the databases of the version
 * before of each.
 */
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { MIGRATIONS as PG_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { MIGRATIONS, SqliteStore } from '../../src/store/sqlite.js';
import type { ItemRuns, Store } from '../../src/store/store.js';
import { postgresAtVersion } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';
import { forEachBackend } from './backends.js';
import { imei, MISS, run } from './fixtures.js';

const FAILURE = 'SYSTEM FAILURE';
const LIST = 'report#retry 1.2';
/** A chunk of a list of devices sent again: of two kinds, for two errors. */
const SENT_AGAIN: ItemRuns = [
  ['imei', [imei(1), imei(2)], MISS],
  ['iccid', ['89148000000000000001'], MISS],
  ['imei', [imei(3)], FAILURE],
];
/** How the version before wrote that chunk: the error in each run's kind, no errors_json. */
const OLD_FORM = JSON.stringify(SENT_AGAIN.map(([kind, ids, error]) => [JSON.stringify([kind, error]), ids]));
const oldRow = (seq: number) =>
  `INSERT INTO step_items (run_id, step_key, seq, runs_json) VALUES ('r1', '${LIST}', ${seq}, '${OLD_FORM}')`;

forEachBackend('the lists of devices sent again', (b) => {
  let store: Store;
  beforeEach(async () => {
    store = await b.open();
    store.createRun(run('r1'));
  });

  it("keeps each run's error in errors_json, its kind the device's own; a listing's chunk has none", async () => {
    store.appendItems('r1', LIST, 0, SENT_AGAIN);
    store.appendItems('r1', 'devices', 0, [['imei', [imei(1)]]]);
    await store.durable();
    expect(await store.itemChunks('r1', LIST, -1, 10)).to.deep.equal([{ seq: 0, runs: SENT_AGAIN }]);
    expect(await store.itemChunks('r1', 'devices', -1, 10)).to.deep.equal([
      { seq: 0, runs: [['imei', [imei(1)]]] },
    ]);
    const rows = await b.query<{ step_key: string; runs_json: string; errors_json: string | null }>(
      store,
      `SELECT step_key, runs_json, errors_json FROM step_items WHERE run_id = 'r1' ORDER BY step_key`,
    );
    expect(
      rows.map((r) => [r.step_key, JSON.parse(r.runs_json), r.errors_json && JSON.parse(r.errors_json)]),
    ).to.deep.equal([
      ['devices', [['imei', [imei(1)]]], null],
      [
        LIST,
        [
          ['imei', [imei(1), imei(2)]],
          ['iccid', ['89148000000000000001']],
          ['imei', [imei(3)]],
        ],
        [MISS, MISS, FAILURE],
      ],
    ]);
  });

  it("drops the items of a run as it ends, whoever ends it, and no other run's", async () => {
    store.createRun(run('r2'));
    for (const [runId, key] of [
      ['r1', LIST],
      ['r1', 'loop[2]/report#retry 2.3'],
      ['r1', 'devices'],
      ['r2', LIST],
    ] as const)
      store.appendItems(runId, key, 0, SENT_AGAIN);
    await store.durable();
    const kept = async () =>
      (
        await b.query<{ run_id: string; step_key: string }>(
          store,
          'SELECT run_id, step_key FROM step_items ORDER BY run_id, step_key',
        )
      ).map((r) => `${r.run_id} ${r.step_key}`);
    // Still running: an update that does not end it keeps them.
    store.updateRun('r1', { status: 'running' });
    await store.durable();
    expect(await kept()).to.have.length(4);
    store.updateRun('r1', { status: 'cancelled', endedAt: '2026-01-05T00:00:00.000Z' });
    await store.durable();
    expect(await kept()).to.deep.equal([`r2 ${LIST}`]);
  });
});

/** When run r1 ends, its items with it. */
const ENDED_AT = '2026-11-29T11:00:00.000Z';

describe('the lists of devices sent again in a state file of the version before', () => {
  it('writes the error apart once the file is upgraded, and drops what it kept as the run ends', async () => {
    const file = `${tempDir('fleetbook-item-errors-')}/state.db`;
    const old = new Database(file);
    for (const [i, sql] of MIGRATIONS.slice(0, -1).entries()) {
      old.exec(sql);
      old.pragma(`user_version = ${i + 1}`);
    }
    old
      .prepare(`INSERT INTO runs (id, playbook, status, started_at) VALUES ('r1', 'pb', 'running', ?)`)
      .run('2026-11-29T10:00:00.000Z');
    old.exec(oldRow(0));
    old.close();
    const store = new SqliteStore(file);
    try {
      expect(store.db.pragma('user_version', { simple: true })).to.equal(MIGRATIONS.length);
      store.appendItems('r1', LIST, 1, SENT_AGAIN);
      expect(await store.itemChunks('r1', LIST, 0, 10)).to.deep.equal([{ seq: 1, runs: SENT_AGAIN }]);
      const errors = () => store.db.prepare('SELECT errors_json FROM step_items ORDER BY seq').pluck().all();
      expect(errors()).to.deep.equal([null, JSON.stringify([MISS, MISS, FAILURE])]);
      store.updateRun('r1', { status: 'succeeded', endedAt: ENDED_AT });
      await store.durable();
      expect(errors()).to.deep.equal([]);
    } finally {
      await store.close();
    }
  });
});

describe('the lists of devices sent again in a PostgreSQL database of the version before', function () {
  this.timeout(60_000);

  it('writes the error apart beside what a replica of that version writes, and drops both as the run ends', async () => {
    const { url, db } = await postgresAtVersion(PG_MIGRATIONS, PG_MIGRATIONS.length - 1);
    try {
      await db.query(
        `INSERT INTO runs (id, playbook, status, started_at) VALUES ('r1', 'pb', 'running', $1)`,
        ['2026-11-29T10:00:00.000Z'],
      );
      await db.query(oldRow(0));
      const store = await openPostgresStore(url);
      try {
        // A replica of the version before, still running, writes as it did.
        await db.query(oldRow(1));
        store.appendItems('r1', LIST, 2, SENT_AGAIN);
        expect(await store.itemChunks('r1', LIST, 1, 10)).to.deep.equal([{ seq: 2, runs: SENT_AGAIN }]);
        const errors = async () =>
          (await db.query('SELECT errors_json FROM step_items ORDER BY seq')).rows.map(
            (r: { errors_json: string | null }) => r.errors_json,
          );
        expect(await errors()).to.deep.equal([null, null, JSON.stringify([MISS, MISS, FAILURE])]);
        store.updateRun('r1', { status: 'succeeded', endedAt: ENDED_AT });
        await store.durable();
        expect(await errors()).to.deep.equal([]);
      } finally {
        await store.close();
      }
    } finally {
      await db.end();
    }
  });
});
