/**
 * What the console reads of the SQLite store that nothing else reads: the runs by any filter and by hour, and the
 * latest callbacks.
 */
import type Database from 'better-sqlite3';
import { inboxEvent, toRun, type InboxRow, type RunRow } from './rows.js';
import type { InboxEvent, RunListQuery, RunRecord, RunStatus } from './store.js';

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

/** `recentInbox` (store.ts). */
export function recentInbox(
  sql: (text: string) => Database.Statement,
  limit: number,
): (InboxEvent & { processed: boolean })[] {
  const rows = sql('SELECT * FROM inbox ORDER BY id DESC LIMIT ?').all(limit) as (InboxRow & {
    processed_at: string | null;
  })[];
  return rows.map((r) => ({ ...inboxEvent(r), processed: r.processed_at !== null }));
}
