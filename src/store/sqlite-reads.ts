/**
 * Reads of the SQLite store outside the ledger and the inbox: the runs by any filter, by hour and by id prefix,
 * and a step's stored items.
 */
import type Database from 'better-sqlite3';
import { itemRuns } from './item-runs.js';
import { toRun, type RunRow } from './rows.js';
import type { ItemRuns, RunListQuery, RunRecord, RunStatus } from './store.js';

/** `listRuns` (store.ts): newest first, by start then id, the `before` cursor in that order. */
export function listRuns(sql: (text: string) => Database.Statement, q: RunListQuery): RunRecord[] {
  const where: string[] = [];
  const args: unknown[] = [];
  const cond = (clause: string, ...values: unknown[]) => {
    where.push(clause);
    args.push(...values);
  };
  if (q.playbook !== undefined) cond('playbook = ?', q.playbook);
  if (q.status !== undefined) cond('status = ?', q.status);
  if (q.trigger !== undefined) cond(`json_extract(trigger_json, '$.type') = ?`, q.trigger);
  if (q.dryRun !== undefined) cond('dry_run = ?', q.dryRun ? 1 : 0);
  if (q.from !== undefined) cond('started_at >= ?', q.from);
  if (q.to !== undefined) cond('started_at < ?', q.to);
  if (q.before !== undefined) cond('(started_at, id) < (?, ?)', q.before.startedAt, q.before.id);
  const rows = sql(
    `SELECT * FROM runs ${where.length ? `WHERE ${where.join(' AND ')} ` : ''}ORDER BY started_at DESC, id DESC LIMIT ?`,
  ).all(...args, q.limit ?? 50) as RunRow[];
  return rows.map(toRun);
}

/** `runsByHour` (store.ts). */
export function runsByHour(
  sql: (text: string) => Database.Statement,
  from: string,
): { hour: string; status: RunStatus; n: number }[] {
  return sql(
    `SELECT substr(started_at, 1, 13) AS hour, status, count(*) AS n FROM runs WHERE started_at >= ?
     GROUP BY hour, status ORDER BY hour`,
  ).all(from) as { hour: string; status: RunStatus; n: number }[];
}

/** `runIdsStartingWith` (store.ts). */
export function runIdsStartingWith(
  sql: (text: string) => Database.Statement,
  prefix: string,
  limit: number,
): string[] {
  // A range of the primary key: every id that starts with the prefix sorts from it to it followed by the
  // highest code point. LIKE would need its wildcards escaped, and would read every row.
  const rows = sql('SELECT id FROM runs WHERE id >= ? AND id < ? ORDER BY id LIMIT ?').all(
    prefix,
    `${prefix}\u{10FFFF}`,
    limit,
  ) as { id: string }[];
  return rows.map((r) => r.id);
}

/** `itemChunks` (store.ts): a step's stored items after `afterSeq`, a listing page a row. */
export function itemChunks(
  sql: (text: string) => Database.Statement,
  runId: string,
  key: string,
  afterSeq: number,
  limit: number,
): { seq: number; runs: ItemRuns }[] {
  const rows = sql(
    `SELECT seq, runs_json, errors_json FROM step_items WHERE run_id = ? AND step_key = ? AND seq > ?
     ORDER BY seq LIMIT ?`,
  ).all(runId, key, afterSeq, limit) as { seq: number; runs_json: string; errors_json: string | null }[];
  return rows.map((r) => ({ seq: r.seq, runs: itemRuns(r.runs_json, r.errors_json) }));
}
