/** What the parts of the SQLite store share: rows and the records they hold, and prepared statements. */
import type Database from 'better-sqlite3';
import type { InboxEvent, LedgerRow, RunRecord } from './store.js';

type Json = Record<string, unknown>;

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

export interface InboxRow {
  id: number;
  service: string;
  kind: string;
  request_id: string;
  device: string;
  payload_json: string;
  received_at: string;
}

export function inboxEvent(r: InboxRow): InboxEvent {
  return {
    id: r.id,
    service: r.service,
    kind: r.kind,
    requestId: r.request_id,
    ...(r.device ? { device: r.device } : {}),
    payload: JSON.parse(r.payload_json) as unknown,
    receivedAt: r.received_at,
  };
}

/** The columns of a result, in the `ledger` table and the `device_results` view alike. */
export interface ResultColumns {
  run_id: string;
  step: string;
  kind: string;
  outcome: string;
  error_type: string | null;
  error_class: string | null;
  attempts: number;
  at: string;
  request_id: string | null;
  /** The entry's data (a JSON array, in the `ledger` table) or the device's (JSON, in the view). */
  data_json: string | null;
}

/** A row of the `ledger` table: the devices that got one result in one write. */
export interface EntryRow extends ResultColumns {
  seq: number;
  /** JSON array of device ids. */
  device_ids: string;
}

export function ledgerRow(deviceId: string, r: ResultColumns, data?: Json | null): LedgerRow {
  // Member by member, in the order the spread form had: a million rows of a report are made here.
  const row = { deviceId, runId: r.run_id, step: r.step, kind: r.kind } as LedgerRow;
  row.outcome = r.outcome as LedgerRow['outcome'];
  if (r.error_type !== null) row.errorType = r.error_type;
  if (r.error_class !== null) row.errorClass = r.error_class;
  row.attempts = r.attempts;
  if (r.request_id !== null) row.requestId = r.request_id;
  if (data) row.data = data;
  row.at = r.at;
  return row;
}
