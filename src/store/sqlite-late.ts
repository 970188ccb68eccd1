/**
 * Results that came after their step, on SQLite (Store.recordLate; what to write is store/late.ts): read and
 * written in the store's open turn, whose transaction holds the file's write lock from its first statement.
 * The run's later entries, which can name a million devices, are read first, a slice at a time between turns of
 * the event loop (laterEntries); the write reads only those written since.
 */
import type Database from 'better-sqlite3';
import {
  LATE_RUN_COLUMNS,
  lateDevices,
  lateSeqs,
  lateWrites,
  type LateCounts,
  type LateReads,
  type LateResult,
  type LateRun,
} from './late.js';
import type { EntryRow } from './rows.js';
import { BY_RUN } from './retention.js';
import type { DeviceGroup } from './store.js';

type Sql = (text: string) => Database.Statement;

/** The grouping of a run (latestAmong): dropped when a result comes after it, and made again at the next read. */
const GROUPING = BY_RUN.filter((t) => t.startsWith('ledger_'));

/** `lateEntries` (store.ts), by the partial index of the entries a late message may settle (ledger_late). */
export function lateEntries(sql: Sql, since: string, afterSeq: number, limit: number): EntryRow[] {
  return sql(
    `SELECT l.* FROM ledger l JOIN runs r ON r.id = l.run_id
     WHERE l.request_id IS NOT NULL AND (l.outcome = 'unconfirmed' OR l.by_state_read = 1)
       AND l.seq > ? AND l.at >= ? AND (r.ended_at IS NOT NULL OR l.by_state_read = 1)
     ORDER BY l.seq LIMIT ?`,
  ).all(afterSeq, since, limit) as EntryRow[];
}

/** Entries of a run read at a time: in one step, in seq order, by the index of the run's entries. */
const SLICE = 100;

/** The last seq naming each device, by step, among the run's entries read so far; and the last seq of the file then. */
export interface LaterEntries {
  latest: LateReads['latest'];
  upTo: number;
}

/**
 * The last entry naming each device of `results` in each step of the run, from the first entry `results` name
 * on, up to the last entry of the file when called: a slice of the run's entries at a time, each read in a turn
 * of the event loop of its own, so that a run of a million devices does not hold the loop for its whole ledger.
 */
export async function laterEntries(
  sql: Sql,
  runId: string,
  results: readonly LateResult[],
): Promise<LaterEntries> {
  const upTo = sql('SELECT coalesce(max(seq), 0) FROM ledger').pluck().get() as number;
  const from = Math.min(...lateSeqs(results));
  const devices = JSON.stringify(lateDevices(results));
  const nextStep = sql('SELECT min(step) FROM ledger WHERE run_id = ? AND step > ?').pluck();
  const end = sql(
    `SELECT seq FROM ledger WHERE run_id = ? AND step = ? AND seq > ? AND seq <= ?
     ORDER BY seq LIMIT 1 OFFSET ${SLICE - 1}`,
  ).pluck();
  const slice = sql(
    `SELECT l.step, j.value AS id, max(l.seq) AS seq FROM ledger l, json_each(l.device_ids) j
     WHERE l.run_id = ? AND l.step = ? AND l.seq > ? AND l.seq <= ? AND j.value IN (SELECT value FROM json_each(?))
     GROUP BY j.value`,
  );
  const latest: { step: string; id: string; seq: number }[] = [];
  for (
    let step = nextStep.get(runId, '') as string | null;
    step !== null;
    step = nextStep.get(runId, step) as string | null
  ) {
    for (let after = from - 1; ;) {
      const last = end.get(runId, step, after, upTo) as number | undefined;
      for (const r of slice.all(runId, step, after, last ?? upTo, devices) as typeof latest) latest.push(r);
      if (last === undefined) break;
      after = last;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  return { latest, upTo };
}

/**
 * `recordLate` (store.ts), with what `laterEntries` read before: `insert` writes each step's entries. In the turn's
 * transaction, after the writes the runs of this process made before it (a step's results, a run's end): it reads
 * the run as they left it, and they write after it.
 */
export function recordLate(
  sql: Sql,
  runId: string,
  results: readonly LateResult[],
  read: LaterEntries,
  insert: (step: string, groups: DeviceGroup[]) => void,
): LateCounts {
  const none = { succeeded: 0, failed: 0 };
  const run = sql(`SELECT ${LATE_RUN_COLUMNS} FROM runs WHERE id = ?`).get(runId) as LateRun | undefined;
  if (!run || !results.length) return none;
  const entries = sql(
    `SELECT * FROM ledger WHERE run_id = ? AND (outcome = 'unconfirmed' OR by_state_read = 1)
       AND seq IN (SELECT value FROM json_each(?))`,
  ).all(runId, JSON.stringify(lateSeqs(results))) as EntryRow[];
  if (!entries.length) return none;
  // The entries written since `laterEntries` read, by seq (`+run_id`: not by the index of the run's entries).
  const since = sql(
    `SELECT l.step, j.value AS id, max(l.seq) AS seq FROM ledger l, json_each(l.device_ids) j
     WHERE l.seq > ? AND +l.run_id = ? AND j.value IN (SELECT value FROM json_each(?))
     GROUP BY l.step, j.value`,
  ).all(read.upTo, runId, JSON.stringify(lateDevices(results))) as LateReads['latest'];
  // In seq order within each step: the last of a device's in a step is its latest.
  const latest = [...read.latest, ...since];
  const underWay = run.ended_at
    ? []
    : (sql('SELECT step_key FROM step_calls WHERE run_id = ?').all(runId) as { step_key: string }[]).map(
        (r) => r.step_key,
      );
  const w = lateWrites({ run, underWay, entries, latest }, results);
  if (!w.any) return none;
  for (const [step, groups] of w.steps) insert(step, groups);
  if (w.summary)
    sql('UPDATE runs SET summary_json = ?, late_moves_json = NULL WHERE id = ?').run(
      JSON.stringify(w.summary),
      runId,
    );
  if (w.moves) sql('UPDATE runs SET late_moves_json = ? WHERE id = ?').run(JSON.stringify(w.moves), runId);
  for (const table of GROUPING) sql(`DELETE FROM ${table} WHERE run_id = ?`).run(runId);
  return w.recorded;
}
