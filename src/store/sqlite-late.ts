/**
 * Results that came after a run ended, on SQLite (Store.recordLate; what to write is store/late.ts): read and
 * written in the store's open turn, whose transaction holds the file's write lock from its first statement.
 */
import type Database from 'better-sqlite3';
import {
  lateDevices,
  lateSeqs,
  lateWrites,
  type LateCounts,
  type LateReads,
  type LateResult,
} from './late.js';
import type { EntryRow } from './rows.js';
import { BY_RUN } from './retention.js';
import type { DeviceGroup } from './store.js';

type Sql = (text: string) => Database.Statement;

/** The grouping of a run (latestAmong): dropped when a result comes after it, and made again at the next read. */
const GROUPING = BY_RUN.filter((t) => t.startsWith('ledger_'));

/** `unconfirmedEntries` (store.ts), by the partial index of `unconfirmed` entries. */
export function unconfirmedEntries(sql: Sql, since: string, afterSeq: number, limit: number): EntryRow[] {
  return sql(
    `SELECT l.* FROM ledger l JOIN runs r ON r.id = l.run_id
     WHERE l.outcome = 'unconfirmed' AND l.request_id IS NOT NULL AND l.seq > ? AND l.at >= ?
       AND r.ended_at IS NOT NULL
     ORDER BY l.seq LIMIT ?`,
  ).all(afterSeq, since, limit) as EntryRow[];
}

/** `recordLate` (store.ts): `insert` writes each step's entries. */
export function recordLate(
  sql: Sql,
  runId: string,
  results: readonly LateResult[],
  insert: (step: string, groups: DeviceGroup[]) => void,
): LateCounts {
  const none = { succeeded: 0, failed: 0 };
  const run = sql('SELECT summary_json, ended_at FROM runs WHERE id = ?').get(runId) as
    { summary_json: string | null; ended_at: string | null } | undefined;
  if (!run?.ended_at || !results.length) return none;
  const entries = sql(
    `SELECT * FROM ledger WHERE run_id = ? AND outcome = 'unconfirmed' AND seq IN (SELECT value FROM json_each(?))`,
  ).all(runId, JSON.stringify(lateSeqs(results))) as EntryRow[];
  if (!entries.length) return none;
  const latest = sql(
    `SELECT l.step, j.value AS id, max(l.seq) AS seq FROM ledger l, json_each(l.device_ids) j
     WHERE l.run_id = ? AND l.seq >= ? AND j.value IN (SELECT value FROM json_each(?))
     GROUP BY l.step, j.value`,
  ).all(
    runId,
    Math.min(...entries.map((e) => e.seq)),
    JSON.stringify(lateDevices(results)),
  ) as LateReads['latest'];
  const w = lateWrites({ summaryJson: run.summary_json, entries, latest }, results);
  if (!w.any) return none;
  for (const [step, groups] of w.steps) insert(step, groups);
  if (w.summary) sql('UPDATE runs SET summary_json = ? WHERE id = ?').run(JSON.stringify(w.summary), runId);
  for (const table of GROUPING) sql(`DELETE FROM ${table} WHERE run_id = ?`).run(runId);
  return w.recorded;
}
