/** What the parts of the SQLite store share: rows and the records they hold, and prepared statements. */
import type Database from 'better-sqlite3';
import type { RunRecord } from './store.js';

/** A statement per SQL text on `db`, prepared on first use and kept. */
export function preparer(db: Database.Database): (text: string) => Database.Statement {
  const prepared = new Map<string, Database.Statement>();
  return (text) => {
    let st = prepared.get(text);
    if (!st) {
      st = db.prepare(text);
      prepared.set(text, st);
    }
    return st;
  };
}

export interface RunRow {
  id: string;
  playbook: string;
  status: string;
  trigger_json: string | null;
  inputs_json: string | null;
  started_at: string;
  ended_at: string | null;
  summary_json: string | null;
  error: string | null;
  event_json: string | null;
  owner: string | null;
}

export function toRun(r: RunRow): RunRecord {
  return {
    id: r.id,
    playbook: r.playbook,
    status: r.status as RunRecord['status'],
    trigger: parse(r.trigger_json),
    inputs: parse(r.inputs_json),
    startedAt: r.started_at,
    ...(r.ended_at !== null ? { endedAt: r.ended_at } : {}),
    ...(r.summary_json !== null ? { summary: parse(r.summary_json) as RunRecord['summary'] } : {}),
    ...(r.error !== null ? { error: r.error } : {}),
    ...(r.event_json !== null ? { event: parse(r.event_json) } : {}),
    ...(r.owner !== null ? { owner: r.owner } : {}),
  };
}

export function json(v: unknown): string | null {
  return v === undefined ? null : JSON.stringify(v);
}

export function parse(s: string | null): unknown {
  return s === null ? undefined : (JSON.parse(s) as unknown);
}

/** As SQLite's BINARY collation orders ASCII text. */
export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
