/**
 * Reading the ledger: a run's a page at a time (each device's latest result, without holding the connection), and
 * the entries a query reads.
 */
import type Database from 'better-sqlite3';
import { bracketing, deviceIdsOf, type EntryRange } from './id-range.js';
import { byStepThenDevice, entryGroup, historyRows, type EntryRow, type HistoryEntryRow } from './rows.js';
import type { DeviceGroup, DeviceHistoryRow, EntryFilter, LedgerQuery, LedgerRow } from './store.js';
import { storedText } from './text.js';

export const LATEST_MIGRATION = `CREATE TABLE ledger_latest (
     run_id TEXT NOT NULL,
     step TEXT NOT NULL,
     device_id TEXT NOT NULL,
     seq INTEGER NOT NULL,
     PRIMARY KEY (run_id, step, device_id)
   ) WITHOUT ROWID;
   CREATE TABLE ledger_latest_runs (run_id TEXT PRIMARY KEY) WITHOUT ROWID;`;

/**
 * The entries of a kept run whose every device has a later result in its step: a page passes over them without
 * looking their devices up. Runs kept before it are grouped again.
 */
export const SUPERSEDED_MIGRATION = `CREATE TABLE ledger_superseded (
     run_id TEXT NOT NULL,
     seq INTEGER NOT NULL,
     PRIMARY KEY (run_id, seq)
   ) WITHOUT ROWID;
   DELETE FROM ledger_latest;
   DELETE FROM ledger_latest_runs;`;

/** `ledgerEntries` (store.ts): a run's entries after `after` that match `q`, in (step, seq) order. */
export function ledgerEntries(
  sql: (text: string) => Database.Statement,
  runId: string,
  q: EntryFilter,
  after: { step: string; seq: number } | undefined,
  limit: number,
): EntryRow[] {
  // Without each device's data (a location): the table does not show it, and it is most of an entry's bytes.
  return sql(
    `SELECT seq, run_id, step, kind, outcome, error_type, error_class, attempts, at, device_ids, request_id,
       NULL AS data_json
     FROM ledger
     WHERE run_id = @runId AND (step, seq) > (@afterStep, @afterSeq)
       AND (@step IS NULL OR step = @step) AND (@outcome IS NULL OR outcome = @outcome)
       AND (@errorType IS NULL OR error_type = @errorType)
       AND (@device IS NULL OR instr(device_ids, @device) > 0)
       AND NOT EXISTS (SELECT 1 FROM ledger_superseded s WHERE s.run_id = @runId AND s.seq = ledger.seq)
     ORDER BY step, seq LIMIT @limit`,
  ).all({
    runId,
    afterStep: after?.step ?? '',
    afterSeq: after?.seq ?? -1,
    step: q.step ?? null,
    outcome: q.outcome ?? null,
    errorType: q.errorType ?? null,
    device: q.device ?? null,
    limit,
  }) as EntryRow[];
}

/**
 * `ledgerData` (store.ts): each entry's data read and parsed once, its devices' taken from it. (SQLite's `->` on
 * the entry's text for each device parses the text again for each: a page of 50 rows of an entry of 10,000
 * located devices took 250 ms.)
 */
export function ledgerData(
  sql: (text: string) => Database.Statement,
  runId: string,
  at: readonly { seq: number; index: number }[],
): (Record<string, unknown> | null)[] {
  const read = sql('SELECT data_json FROM ledger WHERE seq = ? AND run_id = ?').pluck();
  const entries = new Map<number, (Record<string, unknown> | null)[] | undefined>();
  return at.map(({ seq, index }) => {
    if (!entries.has(seq)) {
      const text = read.get(seq, runId) as string | null | undefined;
      entries.set(
        seq,
        typeof text === 'string' ? (JSON.parse(text) as (Record<string, unknown> | null)[]) : undefined,
      );
    }
    return entries.get(seq)?.[index] ?? null;
  });
}

/** `hasErrorType` (store.ts): by ledger_by_error, the index of the types. */
export function hasErrorType(
  sql: (text: string) => Database.Statement,
  runId: string,
  errorType: string,
): boolean {
  const row = sql('SELECT 1 AS found FROM ledger WHERE error_type = ? AND run_id = ? LIMIT 1').get(
    storedText(errorType),
    storedText(runId),
  );
  return row !== undefined;
}

/**
 * `deviceHistory` (store.ts): the device's result in every entry naming it, newest first. The entries whose ids
 * bracket the device are found by their range (id-range.ts) in the index of the ranges, and only those are read:
 * a few per step of each run, whatever the size of the ledger. Off the event loop, in the grouping worker
 * (sqlite-grouping.ts).
 */
export function deviceHistory(db: Database.Database, deviceId: string, limit: number): DeviceHistoryRow[] {
  const rows = db
    .prepare(
      `SELECT l.run_id, l.step, l.kind, l.outcome, l.error_type, l.error_class, l.attempts, l.at, l.request_id,
         CASE WHEN l.data_json IS NOT NULL THEN l.data_json -> ('$[' || d.key || ']') END AS data_json,
         r.playbook AS playbook, r.started_at AS run_started_at, r.status AS run_status, r.dry_run AS run_dry_run
       FROM ledger l INDEXED BY ledger_by_run
         JOIN json_each(l.device_ids) d ON d.value = @id
         JOIN runs r ON r.id = l.run_id
       WHERE l.min_id <= @id AND (l.max_id >= @id OR l.max_id IS NULL) AND instr(l.device_ids, @needle) > 0
       ORDER BY l.seq DESC LIMIT @limit`,
    )
    .all({ id: deviceId, needle: JSON.stringify(deviceId), limit }) as HistoryEntryRow[];
  return historyRows(rows, deviceId);
}

/**
 * `repeatedAmong` and `latestAmong` (store.ts): of the devices `keys` (`step\0device`), those with more than one
 * result in their step, with the seq of the entry that counts. Read from the entries whose range holds one of
 * them (id-range.ts): a page of a run of a million devices reads a few entries, not the run. In the grouping
 * worker (sqlite-grouping.ts), off the event loop.
 */
export function repeatedAmong(db: Database.Database, runId: string, keys: readonly string[]): Repeated {
  const ranges = db
    .prepare('SELECT seq, step, min_id, max_id FROM ledger INDEXED BY ledger_by_run WHERE run_id = ?')
    .all(runId) as EntryRange[];
  const asked = new Set(keys);
  const rows = db
    .prepare(
      `SELECT l.step, j.value, max(l.seq) FROM ledger l, json_each(l.device_ids) j
       WHERE l.seq IN (SELECT value FROM json_each(?)) AND j.value IN (SELECT value FROM json_each(?))
       GROUP BY l.step, j.value HAVING count(*) > 1`,
    )
    .raw()
    .all(JSON.stringify(bracketing(ranges, keys)), JSON.stringify(deviceIdsOf(keys))) as Repeated;
  return rows.filter(([step, device]) => asked.has(`${step}\0${device}`));
}

/** `step`, device, seq of the entry that counts: the devices with more than one result in a step. */
export type Repeated = [step: string, device: string, seq: number][];

/** `queryLedger`'s steps: those (of runs) with an entry matching `q` (each device's latest must then match too). */
export function matchingSteps(
  sql: (text: string) => Database.Statement,
  q: LedgerQuery,
): { runId: string; step: string }[] {
  // A dry run's entries are devices it planned, not outcomes: never read, and a dry run is never a last run.
  const where: string[] = ['r.dry_run = 0'];
  const args: unknown[] = [];
  const cond = (clause: string, ...values: unknown[]) => {
    where.push(clause);
    args.push(...values);
  };
  if (q.playbook !== undefined) {
    if (q.lastRuns !== undefined) {
      where.push(
        `l.run_id IN (SELECT id FROM runs WHERE playbook = ? AND status IN ('succeeded', 'failed') AND dry_run = 0 ORDER BY started_at DESC, id DESC LIMIT ?)`,
      );
      args.push(q.playbook, q.lastRuns);
    } else {
      where.push('r.playbook = ?');
      args.push(q.playbook);
    }
  }
  if (q.step !== undefined) cond('l.step = ?', q.step);
  if (q.outcome !== undefined) cond('l.outcome = ?', q.outcome);
  const types = q.errorTypes?.length ? new Set(q.errorTypes) : undefined;
  if (types) {
    where.push(`l.error_type IN (${[...types].map(() => '?').join(', ')})`);
    args.push(...types);
  }
  if (q.since !== undefined) cond('r.started_at >= ?', q.since);
  return sql(
    `SELECT DISTINCT l.run_id AS runId, l.step FROM ledger l JOIN runs r ON r.id = l.run_id
     WHERE ${where.join(' AND ')} ORDER BY 1, 2`,
  ).all(...args) as { runId: string; step: string }[];
}

/** `deviceResults` (store.ts): every device's latest result in the run, or in one step, sorted. */
export function deviceResults(
  sql: (text: string) => Database.Statement,
  runId: string,
  step: string | undefined,
): LedgerRow[] {
  const query = 'SELECT * FROM ledger WHERE run_id = @runId AND (@step IS NULL OR step = @step) ORDER BY seq';
  return byStepThenDevice(sql(query).all({ runId, step: step ?? null }) as EntryRow[]);
}

/** `resultsUnder` (store.ts): a step's entries under request ids (and, `orNone`, under none), as groups. */
export function resultsUnder(
  sql: (text: string) => Database.Statement,
  runId: string,
  step: string,
  requestIds: readonly string[],
  orNone: boolean,
): DeviceGroup[] {
  const entries = sql(
    `SELECT * FROM ledger WHERE run_id = ? AND step = ?
       AND (request_id IN (SELECT value FROM json_each(?)) OR (? AND request_id IS NULL))
       ORDER BY seq`,
  ).all(runId, step, JSON.stringify(requestIds), orNone ? 1 : 0) as EntryRow[];
  return entries.map(entryGroup);
}
