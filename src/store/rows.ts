/**
 * What both stores share: the rows of their tables, the records they hold, and how the ledger's entries become a
 * row per device (the latest entry of each counts). The SQLite and the PostgreSQL store read rows of the same
 * shape (JSON as text, numbers as numbers), so that one mapping serves both.
 */
import { withMoves, type LateMove } from './late.js';
import type {
  DeviceGroup,
  DeviceHistoryRow,
  InboxEvent,
  LedgerQuery,
  LedgerRow,
  Owner,
  RunRecord,
  RunStatus,
  RunSummary,
} from './store.js';

type Json = Record<string, unknown>;

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
  version: string | null;
  /** 1 (true on PostgreSQL) for a dry run. */
  dry_run?: number | boolean | null;
  /** Absent on rows a query selects without it (a claim's RETURNING); null when no cancel was asked. */
  cancel_requested?: string | null;
  /** The results recorded late while the run went on, its summary not counting them yet (store/late.ts). */
  late_moves_json?: string | null;
}

export function toRun(r: RunRow): RunRecord {
  const moves = r.late_moves_json ? (JSON.parse(r.late_moves_json) as LateMove[]) : undefined;
  const summary = r.summary_json !== null ? (parse(r.summary_json) as RunSummary) : undefined;
  return {
    id: r.id,
    playbook: r.playbook,
    status: r.status as RunRecord['status'],
    trigger: parse(r.trigger_json),
    inputs: parse(r.inputs_json),
    startedAt: r.started_at,
    ...(r.ended_at !== null ? { endedAt: r.ended_at } : {}),
    // Its summary as the run wrote it, with the results recorded late while it went on.
    ...(summary ? { summary: moves ? withMoves(summary, moves) : summary } : {}),
    ...(moves && r.ended_at === null ? { lateMoves: moves } : {}),
    ...(r.error !== null ? { error: r.error } : {}),
    ...(r.event_json !== null ? { event: parse(r.event_json) } : {}),
    ...(r.owner !== null ? { owner: r.owner } : {}),
    ...(r.version !== null && r.version !== undefined ? { version: r.version } : {}),
    ...(r.dry_run ? { dryRun: true } : {}),
    // Kept in the row once the run has ended; said only while it may still be acted on.
    ...(r.cancel_requested && !r.ended_at ? { cancelRequested: r.cancel_requested } : {}),
  };
}

export function json(v: unknown): string | null {
  return v === undefined ? null : JSON.stringify(v);
}

export function parse(s: string | null): unknown {
  return s === null ? undefined : (JSON.parse(s) as unknown);
}

/** As SQLite's BINARY collation (and PostgreSQL's "C") orders ASCII text. */
export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Runs oldest first, as claims return them. */
export function byStart(a: RunRecord, b: RunRecord): number {
  return compare(a.startedAt, b.startedAt) || compare(a.id, b.id);
}

/** The columns of `inbox` that make an InboxEvent (inboxEvent), the same on both stores. */
export const EVENT_COLUMNS = 'id, service, kind, request_id, device, payload_json, received_at';

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

export interface OwnerRow {
  id: string;
  role: string;
  pid: number;
  host: string;
  boot: string;
  started_at: string;
  lease_until: number;
}

export function toOwner(r: OwnerRow): Owner {
  return {
    id: r.id,
    role: r.role as Owner['role'],
    pid: r.pid,
    host: r.host,
    boot: r.boot,
    startedAt: r.started_at,
    leaseUntil: r.lease_until,
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

/** The columns of `ledger` an EntryRow reads. */
export const ENTRY_COLUMNS =
  'seq, run_id, step, kind, outcome, error_type, error_class, attempts, at, device_ids, request_id, data_json';

/** A row of the `ledger` table: the devices that got one result in one write. */
export interface EntryRow extends ResultColumns {
  seq: number;
  /** JSON array of device ids. */
  device_ids: string;
  /** 1 (true on PostgreSQL) for devices confirmed by a read of their state (DeviceResult.byStateRead). */
  by_state_read?: number | boolean | null;
}

/** The `by_state_read` a group's entry is written with: only a confirmed outcome is a state read's. */
export function byStateRead(g: DeviceGroup): boolean {
  return g.byStateRead === true && (g.outcome === 'succeeded' || g.outcome === 'failed');
}

/** An entry as the group it was written from, without its data. */
export function entryGroup(e: EntryRow): DeviceGroup {
  const g: DeviceGroup = {
    kind: e.kind,
    ids: JSON.parse(e.device_ids) as string[],
    outcome: e.outcome as DeviceGroup['outcome'],
    attempts: e.attempts,
  };
  if (e.error_type !== null) g.errorType = e.error_type;
  if (e.error_class !== null) g.errorClass = e.error_class;
  if (e.request_id !== null) g.requestId = e.request_id;
  return g;
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

/** A device's result in a ledger entry (`data_json` is the device's own), with what its history shows of the run. */
export interface HistoryEntryRow extends ResultColumns {
  playbook: string;
  run_started_at: string;
  run_status: string;
  /** The run's dry_run: 1 or true for a dry run. */
  run_dry_run: number | boolean;
}

/** `deviceHistory`: the device's result in each entry that names it, newest first. */
export function historyRows(entries: readonly HistoryEntryRow[], deviceId: string): DeviceHistoryRow[] {
  return entries.map((e) => ({
    ...ledgerRow(deviceId, e, parse(e.data_json) as Json | null),
    playbook: e.playbook,
    runStartedAt: e.run_started_at,
    runStatus: e.run_status as RunStatus,
    ...(e.run_dry_run ? { dryRun: true as const } : {}),
  }));
}

/** Entries (in `seq` order) as ledger rows, a row per device and step: the latest entry of each counts. */
export function ledgerRows(entries: readonly EntryRow[]): LedgerRow[] {
  const latest = new Map<string, LedgerRow>();
  for (const e of entries) {
    const data = e.data_json === null ? undefined : (JSON.parse(e.data_json) as (Json | null)[]);
    (JSON.parse(e.device_ids) as string[]).forEach((deviceId, i) =>
      latest.set(`${e.run_id}\0${e.step}\0${deviceId}`, ledgerRow(deviceId, e, data?.[i])),
    );
  }
  return [...latest.values()];
}

/**
 * Rows in a page of `eachDeviceResult`, at most: an entry holds up to a batch of devices (10,000 for a location
 * report), so a few dozen entries could otherwise make a page of hundreds of thousands of rows, held three times
 * over while a report writes them (rows, values, lines).
 */
export const ROWS_PER_PAGE = 1000;

/** An entry of a run's read, and when a later entry of its step replaces some of its devices (not all), those. */
export interface ReadEntry extends EntryRow {
  replaced?: string[];
}

/**
 * Entries (in step, then seq order, none that a later entry replaces whole) as pages of at most ROWS_PER_PAGE
 * ledger rows, leaving out each entry's `replaced` devices.
 */
export function* latestRows(entries: Iterable<ReadEntry>): Generator<LedgerRow[]> {
  let page: LedgerRow[] = [];
  for (const e of entries) {
    const data = e.data_json === null ? undefined : (JSON.parse(e.data_json) as (Json | null)[]);
    const ids = JSON.parse(e.device_ids) as string[];
    const replaced = e.replaced?.length ? new Set(e.replaced) : undefined;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i] as string;
      if (replaced?.has(id)) continue;
      page.push(ledgerRow(id, e, data?.[i]));
      if (page.length === ROWS_PER_PAGE) {
        yield page;
        page = [];
      }
    }
  }
  if (page.length) yield page;
}

/** `deviceResults`: a run's rows by step, then device. */
export function byStepThenDevice(entries: readonly EntryRow[]): LedgerRow[] {
  return ledgerRows(entries).sort((a, b) => compare(a.step, b.step) || compare(a.deviceId, b.deviceId));
}

/**
 * `queryLedger`: of the steps (of runs) that have an entry matching `q`, each device's latest row, kept when it
 * matches too, by time then device. The steps' devices are read as eachDeviceResult gives them, a page at a
 * time: only the rows that match are held.
 */
export async function latestMatching(
  steps: readonly { runId: string; step: string }[],
  each: (runId: string, step: string) => AsyncIterable<LedgerRow[]>,
  q: LedgerQuery,
): Promise<LedgerRow[]> {
  const types = q.errorTypes?.length ? new Set(q.errorTypes) : undefined;
  const out: LedgerRow[] = [];
  for (const { runId, step } of steps)
    for await (const page of each(runId, step))
      for (const d of page)
        if (
          (q.outcome === undefined || d.outcome === q.outcome) &&
          (!types || (d.errorType !== undefined && types.has(d.errorType)))
        )
          out.push(d);
  return out.sort((a, b) => compare(a.at, b.at) || compare(a.deviceId, b.deviceId));
}
