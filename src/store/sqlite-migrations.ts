/** The SQLite store's schema migrations, recorded in `PRAGMA user_version`; each runs once, in a transaction. */
import type Database from 'better-sqlite3';
import { ConfigError } from '../errors.js';
import { OWNERSHIP_MIGRATION } from './sqlite-ownership.js';
import { SQLITE_RATES_MIGRATION } from './sqlite-rates.js';
import { SQLITE_LOGINS_MIGRATION } from './sqlite-logins.js';
import { LATEST_MIGRATION, SUPERSEDED_MIGRATION } from './sqlite-ledger-read.js';

/** Schema migrations, in order. Never edit one that has shipped: add the next. */
export const MIGRATIONS: string[] = [
  `CREATE TABLE runs (
     id TEXT PRIMARY KEY,
     playbook TEXT NOT NULL,
     status TEXT NOT NULL,
     trigger_json TEXT,
     inputs_json TEXT,
     started_at TEXT NOT NULL,
     ended_at TEXT,
     summary_json TEXT,
     error TEXT
   );
   CREATE INDEX runs_by_playbook ON runs (playbook, started_at);
   CREATE TABLE run_steps (
     run_id TEXT NOT NULL,
     step_key TEXT NOT NULL,
     state_json TEXT NOT NULL,
     PRIMARY KEY (run_id, step_key)
   );
   CREATE TABLE device_results (
     run_id TEXT NOT NULL,
     step TEXT NOT NULL,
     device_id TEXT NOT NULL,
     kind TEXT NOT NULL,
     outcome TEXT NOT NULL,
     error_type TEXT,
     error_class TEXT,
     attempts INTEGER NOT NULL,
     at TEXT NOT NULL,
     PRIMARY KEY (run_id, step, device_id)
   );
   CREATE INDEX device_results_by_device ON device_results (device_id);
   CREATE INDEX device_results_by_error ON device_results (error_type);`,
  `ALTER TABLE runs ADD COLUMN event_json TEXT;
   CREATE INDEX runs_unfinished ON runs (status) WHERE status IN ('queued', 'running');
   CREATE TABLE inbox (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     service TEXT NOT NULL,
     kind TEXT NOT NULL,
     request_id TEXT NOT NULL,
     payload_json TEXT NOT NULL,
     received_at TEXT NOT NULL,
     processed_at TEXT,
     UNIQUE (request_id, kind)
   );
   CREATE INDEX inbox_pending ON inbox (id) WHERE processed_at IS NULL;
   CREATE TABLE schedules (
     name TEXT PRIMARY KEY,
     last_fire_at TEXT NOT NULL
   );`,
  // The ledger in entries: one row per group of devices with the same result in one write (a 500-device
  // batch that succeeded is one row), instead of one row per device. A write cost about 3.5 µs a device,
  // and a 100,000-device report wrote 100,000 rows; now it is a few hundred rows and 15 times less time.
  // A later entry for the same run, step and device replaces an earlier one (seq orders them). The view
  // device_results shows the ledger a row per device, as before, for SQL.
  `CREATE TABLE ledger (
     seq INTEGER PRIMARY KEY,
     run_id TEXT NOT NULL,
     step TEXT NOT NULL,
     kind TEXT NOT NULL,
     outcome TEXT NOT NULL,
     error_type TEXT,
     error_class TEXT,
     attempts INTEGER NOT NULL,
     at TEXT NOT NULL,
     device_ids TEXT NOT NULL
   );
   CREATE INDEX ledger_by_run ON ledger (run_id, step);
   CREATE INDEX ledger_by_error ON ledger (error_type) WHERE error_type IS NOT NULL;
   INSERT INTO ledger (run_id, step, kind, outcome, error_type, error_class, attempts, at, device_ids)
     SELECT run_id, step, kind, outcome, error_type, error_class, attempts, at, json_group_array(device_id)
     FROM device_results GROUP BY run_id, step, kind, outcome, error_type, error_class, attempts, at;
   DROP TABLE device_results;
   CREATE VIEW device_results AS
     SELECT run_id, step, device_id, kind, outcome, error_type, error_class, attempts, at FROM (
       SELECT l.run_id, l.step, j.value AS device_id, l.kind, l.outcome, l.error_type, l.error_class,
         l.attempts, l.at, row_number() OVER (PARTITION BY l.run_id, l.step, j.value ORDER BY l.seq DESC) AS n
       FROM ledger l, json_each(l.device_ids) j)
     WHERE n = 1;`,
  OWNERSHIP_MIGRATION,
  // Confirmed outcomes and step data (product.md 5a): the request id a device-state action's devices were
  // accepted under, and each device's data (a location), a JSON array in the order of device_ids.
  `ALTER TABLE ledger ADD COLUMN request_id TEXT;
   ALTER TABLE ledger ADD COLUMN data_json TEXT;
   DROP VIEW device_results;
   CREATE VIEW device_results AS
     SELECT run_id, step, device_id, kind, outcome, error_type, error_class, attempts, at, request_id, data_json
     FROM (
       SELECT l.run_id, l.step, j.value AS device_id, l.kind, l.outcome, l.error_type, l.error_class,
         l.attempts, l.at, l.request_id,
         CASE WHEN l.data_json IS NULL THEN NULL ELSE json_extract(l.data_json, '$[' || j.key || ']') END
           AS data_json,
         row_number() OVER (PARTITION BY l.run_id, l.step, j.value ORDER BY l.seq DESC) AS n
       FROM ledger l, json_each(l.device_ids) j)
     WHERE n = 1;
   CREATE TABLE inbox_v5 (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     service TEXT NOT NULL,
     kind TEXT NOT NULL,
     request_id TEXT NOT NULL,
     device TEXT NOT NULL DEFAULT '',
     payload_json TEXT NOT NULL,
     received_at TEXT NOT NULL,
     processed_at TEXT,
     UNIQUE (request_id, kind, device)
   );
   INSERT INTO inbox_v5 (id, service, kind, request_id, payload_json, received_at, processed_at)
     SELECT id, service, kind, request_id, payload_json, received_at, processed_at FROM inbox;
   DROP TABLE inbox;
   ALTER TABLE inbox_v5 RENAME TO inbox;
   CREATE INDEX inbox_pending ON inbox (id) WHERE processed_at IS NULL;`,
  // A step's items (a listing's devices) in the store, a page a row, instead of whole in its checkpoint: a
  // listing of a million devices is never one string, nor in memory at once.
  `CREATE TABLE step_items (
     run_id TEXT NOT NULL,
     step_key TEXT NOT NULL,
     seq INTEGER NOT NULL,
     runs_json TEXT NOT NULL,
     PRIMARY KEY (run_id, step_key, seq)
   ) WITHOUT ROWID;`,
  // Each message is held by the owner that stored it, which matches it; an owner that is gone leaves its
  // unprocessed messages to the next one that claims them (product.md section 10).
  `ALTER TABLE inbox ADD COLUMN owner TEXT;
   CREATE INDEX inbox_pending_by_owner ON inbox (owner, id) WHERE processed_at IS NULL;`,
  // Each API area's rate budget, shared by the processes on the file (rate/shares.ts).
  SQLITE_RATES_MIGRATION,
  // The devices of an ended run with more than one result in a step, and the entry whose result counts: written
  // the first time the console pages through the run, so that a page looks its devices up (latestAmong).
  LATEST_MIGRATION,
  // Of those runs, the entries every device of which has a later result: pages pass over them.
  SUPERSEDED_MIGRATION,
  // The version of the playbook each run was created with, and each version's definition (playbook/version.ts):
  // a run resumed after its playbook changed finishes with the steps it started with.
  `ALTER TABLE runs ADD COLUMN version TEXT;
   CREATE TABLE playbook_versions (
     version TEXT PRIMARY KEY,
     definition_json TEXT NOT NULL,
     saved_at TEXT NOT NULL
   ) WITHOUT ROWID;`,
  // Retention (sqlite-retention.ts) finds the runs that ended before a time by this, not a scan of every run.
  `CREATE INDEX runs_by_end ON runs (ended_at) WHERE ended_at IS NOT NULL;`,
  // A cancel asked of the process that holds a run (Ownership.requestCancel), with its reason.
  `ALTER TABLE runs ADD COLUMN cancel_requested TEXT;`,
  // The devices left unconfirmed, whose CarrierService message may come after their run ended (Store.recordLate):
  // few, and looked up often.
  `CREATE INDEX ledger_unconfirmed ON ledger (seq) WHERE outcome = 'unconfirmed' AND request_id IS NOT NULL;`,
  // Retention removes the playbook versions no run names any more (sqlite-retention.ts): found by this.
  `CREATE INDEX runs_by_version ON runs (version) WHERE version IS NOT NULL;`,
  // A device's history (deviceHistory) reads the entries whose least and greatest device ids bracket it, found by
  // this index (id-range.ts), not every entry of the file. The entries written before get theirs here: one
  // pass over the ledger, once.
  `ALTER TABLE ledger ADD COLUMN min_id TEXT;
   ALTER TABLE ledger ADD COLUMN max_id TEXT;
   UPDATE ledger SET min_id = (SELECT min(value) FROM json_each(device_ids)),
     max_id = (SELECT max(value) FROM json_each(device_ids));
   CREATE INDEX ledger_by_device_range ON ledger (min_id, max_id);`,
  // A running run's devices with several results (repeatedAmong) are read from the entries whose range holds
  // them: each entry's step and range, by run, from this index alone (the range comes after the entry's ids in
  // its row, which the table would read through).
  `CREATE INDEX ledger_ranges_by_run ON ledger (run_id, step, min_id, max_id);`,
  // An ended run's grouping keeps only its superseded entries, marked in ledger_superseded_runs: which result of
  // a device counts is read from the entries whose range holds it. The row per device with several results that
  // the grouping kept (a million for a suspend of a million devices, 66 MB of the file) goes.
  `CREATE TABLE ledger_superseded_runs (run_id TEXT PRIMARY KEY) WITHOUT ROWID;
   INSERT INTO ledger_superseded_runs SELECT run_id FROM ledger_latest_runs;
   DELETE FROM ledger_latest;
   DELETE FROM ledger_latest_runs;`,
  // One index of the entries by run, step and seq, with their ranges: it orders a run's pages, gives a running
  // run's ranges without reading the rows (the range comes after the entry's ids in its row), and a device's
  // history reads the ranges from it, the whole index. One index to write with each entry rather than three (a
  // callback-triggered run writes two entries of one device), for a few milliseconds more a device's history.
  `DROP INDEX ledger_by_device_range;
   DROP INDEX ledger_ranges_by_run;
   DROP INDEX ledger_by_run;
   CREATE INDEX ledger_by_run ON ledger (run_id, step, seq, min_id, max_id);`,
  // A list of devices sent again (a streamed report's devices.retry) keeps the error each run of its devices was
  // sent again for in a column of its own (item-runs.ts), not in the run's kind.
  `ALTER TABLE step_items ADD COLUMN errors_json TEXT;`,
  // A dry run is taken up after a crash as a dry run (RunRecord.dryRun), never as a run that acts.
  `ALTER TABLE runs ADD COLUMN dry_run INTEGER NOT NULL DEFAULT 0;`,
  // The session logins that may have failed, counted by every process on the file (api/login-count.ts): five
  // consecutive failed logins lock the user, whichever process sent them.
  SQLITE_LOGINS_MIGRATION,
  // The calls of a step under way, written as each request leaves (step-calls.ts): a few bytes, not its checkpoint.
  `CREATE TABLE step_calls (
     run_id TEXT NOT NULL,
     step_key TEXT NOT NULL,
     calls INTEGER NOT NULL,
     attempts INTEGER NOT NULL,
     PRIMARY KEY (run_id, step_key)
   ) WITHOUT ROWID;`,
  // The last time a prune pass found each schedule loaded (Retention.recordLoaded): the backfills of a schedule
  // no process has loaded for a day are pruned, not those of one a pass missed for a moment.
  `ALTER TABLE schedules ADD COLUMN loaded_at TEXT;`,
  // The devices confirmed by a read of their state, not the service's word (DeviceResult.byStateRead): a
  // CarrierService message that comes after their run ended supersedes the read (Store.recordLate). Looked up
  // with those left unconfirmed, by one index of both.
  `ALTER TABLE ledger ADD COLUMN by_state_read INTEGER;
   CREATE INDEX ledger_late ON ledger (seq)
     WHERE request_id IS NOT NULL AND (outcome = 'unconfirmed' OR by_state_read = 1);
   DROP INDEX ledger_unconfirmed;`,
  // The results a CarrierService message gave while the run went on, for devices its steps settled by a read of
  // their state (Store.recordLate): the run's summary, written as it ends, is read with them (store/late.ts).
  `ALTER TABLE runs ADD COLUMN late_moves_json TEXT;`,
  // Device claims (sqlite-ownership.ts) in a table with rowids: a claim holds the ids of a call's devices (500 of
  // them: 9 KB), and a row that large is written and deleted at several times the cost in a table without rowids,
  // whose rows live in its primary key's b-tree. The claims of processes still running are kept.
  `CREATE TABLE device_claims_rows (
     holder TEXT PRIMARY KEY,
     owner TEXT NOT NULL,
     device_ids TEXT NOT NULL
   );
   INSERT INTO device_claims_rows SELECT holder, owner, device_ids FROM device_claims;
   DROP TABLE device_claims;
   ALTER TABLE device_claims_rows RENAME TO device_claims;
   CREATE INDEX device_claims_by_owner ON device_claims (owner);`,
];

/** Applies the migrations the file lacks, each in a transaction; refuses a file newer than this fleetbook. */
export function migrateSqlite(db: Database.Database, file: string): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version > MIGRATIONS.length) {
    throw new ConfigError(
      `the state file ${file} (FLEETBOOK_STATE) is at schema version ${version}, newer than this fleetbook (${MIGRATIONS.length}); upgrade fleetbook`,
    );
  }
  MIGRATIONS.slice(version).forEach((sql, i) => {
    db.transaction(() => {
      db.exec(sql);
      db.pragma(`user_version = ${version + i + 1}`);
    })();
  });
}
