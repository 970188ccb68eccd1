/**
 * The embedded store on SQLite (better-sqlite3, WAL). Migrations are numbered and recorded in
 * `PRAGMA user_version`; each runs once, in a transaction.
 */
import type Database from 'better-sqlite3';
import { MIGRATIONS } from './sqlite-migrations.js';
import { CHECKPOINT_PAGES, openSqliteFile, type SqliteOptions } from './sqlite-file.js';
import {
  deviceResults,
  hasErrorType,
  ledgerData,
  resultsUnder,
  ledgerEntries,
  matchingSteps,
} from './sqlite-ledger-read.js';
import { Grouping } from './sqlite-grouping.js';
import type { ReadPlan } from './sqlite-latest-read.js';
import { SqliteInbox, inboxAfter, inboxByRequest, inboxPosition, recentInbox } from './sqlite-inbox.js';
import { itemChunks, listRuns, runIdsStartingWith, runsByHour } from './sqlite-reads.js';
import { insertRun, playbookVersion, savePlaybookVersion, updateRun } from './sqlite-runs.js';
import { SqliteOwnership } from './sqlite-ownership.js';
import { SqliteRates } from './sqlite-rates.js';
import { sqliteLogins } from './sqlite-logins.js';
import type { LoginCounts } from '../api/login-count.js';
import { SqliteTurn } from './sqlite-turn.js';
import { pruneEnded, recordLoaded } from './sqlite-retention.js';
import { lateEntries, laterEntries, recordLate } from './sqlite-late.js';
import type { LateCounts, LateResult, RunUpdate } from './late.js';
import { itemColumns } from './item-runs.js';
import { LedgerWrites, type StepDevices } from './sqlite-ledger-write.js';
import { IdsJson } from './ids-json.js';
import { storedText, storedTexts } from './text.js';
import { ENTRY_COLUMNS, latestMatching, latestRows, type ReadEntry } from './rows.js';
import { preparer, toRun, type EntryRow, type RunRow } from './sqlite-rows.js';
import { MARKS, withoutNulls } from './checkpoint-steps.js';
import { endsCalls, withStepCalls, type StepCallsRow } from './step-calls.js';
import {
  ENDED,
  type MarksQuery,
  type DeviceGroup,
  type DeviceHistoryRow,
  type InboxEvent,
  type InboxMessage,
  type ItemRuns,
  type LedgerQuery,
  type LedgerRow,
  type Owner,
  type OwnerHoldings,
  type OwnerInfo,
  type Pruned,
  type RunListQuery,
  type RunRecord,
  type RunStatus,
  type Store,
} from './store.js';

export { MIGRATIONS };
export type { SqliteOptions };

export class SqliteStore implements Store {
  readonly db: Database.Database;
  readonly describe: string;
  readonly replicas = false;
  readonly rates: SqliteRates;
  readonly logins: LoginCounts;
  /** The callback inbox: its fsync'd appends, what it holds, and the marks of what is processed. */
  private readonly inbox: SqliteInbox;
  private readonly file: string;
  /** Every other statement, prepared on first use: on the main connection, and on the fsync'd inbox one. */
  private readonly sql: (text: string) => Database.Statement;
  private readonly ownership: SqliteOwnership;
  private readonly grouping: Grouping;
  /** Checkpoints and ledger entries. */
  private readonly ledger: LedgerWrites;
  /** The transaction of this turn's writes. */
  private readonly turn: SqliteTurn;

  /** Opens (creating when needed, unless told not to) the store at `file`; `:memory:` for a throwaway one. */
  constructor(file: string, options: SqliteOptions = {}) {
    this.db = openSqliteFile(file, options);
    this.sql = preparer(this.db);
    this.file = file;
    this.grouping = new Grouping(file, this.db, file === ':memory:');
    this.describe = `the state file ${file} (${options.origin ?? 'FLEETBOOK_STATE'})`;
    this.inbox = new SqliteInbox(this.db, this.sql, file, CHECKPOINT_PAGES);
    const ids = new IdsJson();
    this.ownership = new SqliteOwnership(this.db, ids);
    this.turn = new SqliteTurn(this.db, file, (now) => this.ownership.checkFence(now));
    this.rates = new SqliteRates(this.db);
    this.logins = sqliteLogins(
      this.sql,
      () => this.write(),
      () => this.durable(),
    );
    this.ledger = new LedgerWrites(this.db, ids);
  }

  async savePlaybookVersion(version: string, definition: string): Promise<void> {
    this.write();
    savePlaybookVersion(this.sql, version, definition);
    await this.durable();
  }

  async playbookVersion(version: string): Promise<string | undefined> {
    return playbookVersion(this.sql, version);
  }

  createRun(r: RunRecord): void {
    this.write();
    insertRun(this.sql, r);
  }

  updateRun(id: string, p: RunUpdate): void {
    this.write();
    updateRun(this.sql, id, p);
    if (p.status && ENDED.has(p.status)) {
      this.sql('DELETE FROM step_items WHERE run_id = ?').run(id);
      // The counts of the steps that never ended (step-calls.ts): the run's summary has them now.
      this.sql('DELETE FROM step_calls WHERE run_id = ?').run(id);
    }
  }

  async getRun(id: string): Promise<RunRecord | undefined> {
    const row = this.sql('SELECT * FROM runs WHERE id = ?').get(id) as RunRow | undefined;
    return row && toRun(row);
  }

  async listRuns(q: RunListQuery = {}): Promise<RunRecord[]> {
    return listRuns(this.sql, q);
  }

  async runsByHour(from: string): Promise<{ hour: string; status: RunStatus; n: number }[]> {
    return runsByHour(this.sql, from);
  }

  async runIdsStartingWith(prefix: string, limit: number): Promise<string[]> {
    return runIdsStartingWith(this.sql, prefix, limit);
  }

  saveStep(runId: string, key: string, state: unknown, devices?: StepDevices): void {
    this.write();
    this.ledger.saveStep(runId, key, JSON.stringify(state), devices, endsCalls(state));
  }

  saveCalls(runId: string, key: string, calls: number, attempts: number): void {
    this.write();
    this.ledger.saveCalls(runId, key, calls, attempts);
  }

  async loadSteps(runId: string): Promise<Map<string, unknown>> {
    const rows = this.sql('SELECT step_key, state_json FROM run_steps WHERE run_id = ?').all(runId) as {
      step_key: string;
      state_json: string;
    }[];
    const cps = new Map(rows.map((r) => [r.step_key, JSON.parse(r.state_json) as unknown]));
    const calls = this.sql('SELECT step_key, calls, attempts FROM step_calls WHERE run_id = ?').all(runId);
    return withStepCalls(cps, calls as StepCallsRow[], true);
  }

  async stepMarks(runId: string, only?: MarksQuery): Promise<Map<string, unknown>> {
    const marks = `SELECT step_key, json_object(${MARKS.map((m) => `'${m}', state_json -> '$.${m}'`).join(', ')})
         AS state_json FROM run_steps WHERE run_id = ?`;
    const rows = (
      only === undefined
        ? this.sql(marks).all(runId)
        : 'limit' in only
          ? this.sql(`${marks} ORDER BY step_key LIMIT ?`).all(runId, only.limit)
          : this.sql(`${marks} AND step_key IN (SELECT value FROM json_each(?))`).all(
              runId,
              JSON.stringify(only.keys),
            )
    ) as { step_key: string; state_json: string }[];
    const found = new Map(rows.map((r) => [r.step_key, withoutNulls(JSON.parse(r.state_json) as object)]));
    // Only the steps under way have a row; withStepCalls reads those of the marks read.
    const calls = this.sql('SELECT step_key, calls, attempts FROM step_calls WHERE run_id = ?').all(runId);
    return withStepCalls(found, calls as StepCallsRow[], false);
  }

  recordDevices(runId: string, step: string, groups: DeviceGroup[], at: string): void {
    this.write();
    this.ledger.recordDevices(runId, step, groups, at);
  }

  async queryLedger(q: LedgerQuery): Promise<LedgerRow[]> {
    return latestMatching(matchingSteps(this.sql, q), (run, step) => this.eachDeviceResult(run, step), q);
  }

  /**
   * A run's results a few entries at a time: which entries, and which of their devices a later entry replaces,
   * is worked out off the event loop and not in memory (LatestRead); the entries are read here.
   */
  async *eachDeviceResult(runId: string, step?: string): AsyncGenerator<LedgerRow[]> {
    const read = this.sql(`SELECT ${ENTRY_COLUMNS} FROM ledger WHERE seq = ?`);
    // An entry read when its rows are made (the plans are in step, then seq order): an entry holds up to a batch
    // of devices with their data, and only the one whose rows are being made is in memory.
    const entries = function* (plans: ReadPlan[]): Generator<ReadEntry> {
      for (const { seq, replaced } of plans) {
        const e = read.get(seq) as ReadEntry | undefined;
        if (e && replaced) e.replaced = replaced;
        if (e) yield e;
      }
    };
    for await (const plans of this.grouped().latest(runId, step)) yield* latestRows(entries(plans));
  }

  async repeatedAmong(runId: string, keys: readonly string[]): Promise<Map<string, number>> {
    return this.grouped().repeatedAmong(runId, keys);
  }

  async latestAmong(runId: string, keys: readonly string[]): Promise<Map<string, number>> {
    await this.grouped().keep(runId);
    return this.grouping.repeatedAmong(runId, keys);
  }

  /** The grouping of the ledger, which reads what is committed: the turn open on the file is committed first. */
  private grouped(): Grouping {
    this.commitFile();
    return this.grouping;
  }

  async ledgerEntries(...args: Parameters<Store['ledgerEntries']>): Promise<EntryRow[]> {
    return ledgerEntries(this.sql, ...args);
  }

  async ledgerData(...args: Parameters<Store['ledgerData']>): Promise<(Record<string, unknown> | null)[]> {
    return ledgerData(this.sql, ...args);
  }

  async hasErrorType(runId: string, errorType: string): Promise<boolean> {
    return hasErrorType(this.sql, runId, errorType);
  }

  async deviceHistory(deviceId: string, limit: number): Promise<DeviceHistoryRow[]> {
    return this.grouped().deviceHistory(storedText(deviceId), limit);
  }

  async lateEntries(since: string, afterSeq: number, limit: number): Promise<EntryRow[]> {
    return lateEntries(this.sql, since, afterSeq, limit);
  }

  async recordLate(runId: string, results: readonly LateResult[], at: string): Promise<LateCounts> {
    if (!results.length) return { succeeded: 0, failed: 0 };
    const read = await laterEntries(this.sql, runId, results);
    this.write();
    const n = recordLate(this.sql, runId, results, read, (step, groups) =>
      this.ledger.insertGroups(runId, step, groups, at),
    );
    await this.durable();
    return n;
  }

  appendItems(runId: string, key: string, seq: number, runs: ItemRuns): void {
    this.write();
    const { runsJson, errorsJson } = itemColumns(runs);
    const insert =
      'INSERT INTO step_items (run_id, step_key, seq, runs_json, errors_json) VALUES (?, ?, ?, ?, ?)';
    this.sql(insert).run(runId, key, seq, runsJson, errorsJson);
  }

  async itemChunks(...args: Parameters<Store['itemChunks']>): Promise<{ seq: number; runs: ItemRuns }[]> {
    return itemChunks(this.sql, ...args);
  }

  clearItems(runId: string, key: string): void {
    this.write();
    this.sql('DELETE FROM step_items WHERE run_id = ? AND step_key = ?').run(runId, key);
  }

  async deviceResults(runId: string, step?: string): Promise<LedgerRow[]> {
    return deviceResults(this.sql, runId, step);
  }

  async resultsUnder(
    runId: string,
    step: string,
    requestIds: readonly string[],
    orNone = false,
  ): Promise<DeviceGroup[]> {
    return resultsUnder(this.sql, runId, step, storedTexts(requestIds), orNone);
  }

  appendInbox(owner: string, messages: InboxMessage[]): Promise<(number | 'duplicate')[]> {
    this.commitFile();
    return this.inbox.append(owner, messages);
  }
  async pendingInbox(owner: string, limit: number, afterId = 0): Promise<InboxEvent[]> {
    return this.inbox.pending(owner, limit, afterId);
  }
  async claimInbox(owner: string, now: number): Promise<number> {
    this.write();
    return this.inbox.claim(owner, now);
  }
  async inboxByRequest(requestIds: string[]): Promise<InboxEvent[]> {
    return inboxByRequest(this.sql, storedTexts(requestIds));
  }
  async inboxPosition(): Promise<number> {
    return inboxPosition(this.sql);
  }
  async inboxAfter(service: string, afterId: number, limit: number): Promise<InboxEvent[]> {
    return inboxAfter(this.sql, service, afterId, limit);
  }
  /** One daemon owns a state file: no other process stores callbacks in it. */
  watchInbox(): () => void {
    return () => undefined;
  }
  async recentInbox(limit: number): Promise<(InboxEvent & { processed: boolean })[]> {
    return recentInbox(this.sql, limit);
  }
  inboxBacklog(): number {
    return this.inbox.backlog;
  }
  async completeInbox(processed: { eventId: number; runs: RunRecord[] }[]): Promise<RunRecord[]> {
    this.write();
    return this.inbox.complete(processed, (r) => this.createRun(r));
  }

  async pruneEnded(before: string, limit: number, loadedSince?: string): Promise<Pruned> {
    this.write();
    const pruned = this.db.transaction(() => pruneEnded(this.sql, before, limit, loadedSince))();
    await this.durable();
    return pruned;
  }
  async recordLoaded(keys: readonly string[], at: string): Promise<void> {
    this.write();
    recordLoaded(this.sql, keys, at);
    await this.durable();
  }

  async lastFire(schedule: string): Promise<string | undefined> {
    const row = this.sql('SELECT last_fire_at FROM schedules WHERE name = ?').get(schedule) as
      { last_fire_at: string } | undefined;
    return row?.last_fire_at;
  }

  async recordFire(schedule: string, at: string, run?: RunRecord): Promise<boolean> {
    this.write();
    return this.db.transaction(() => {
      // Only a later fire moves the schedule on: a replica that computed the same fire as another gets nothing.
      const claimed = this.sql(
        `INSERT INTO schedules (name, last_fire_at) VALUES (?, ?)
           ON CONFLICT (name) DO UPDATE SET last_fire_at = excluded.last_fire_at
           WHERE excluded.last_fire_at > schedules.last_fire_at`,
      ).run(schedule, at).changes;
      if (claimed && run) this.createRun(run);
      return claimed === 1;
    })();
  }

  async registerOwner(
    owner: OwnerInfo,
    now: number,
    leaseMs: number,
    exclusive: boolean,
  ): Promise<Owner | undefined> {
    this.write();
    return this.ownership.registerOwner(owner, now, leaseMs, exclusive);
  }

  async renewOwner(id: string, now: number, leaseMs: number): Promise<boolean> {
    this.write();
    return this.ownership.renewOwner(id, now, leaseMs);
  }

  async releaseOwner(id: string): Promise<void> {
    this.write();
    this.ownership.releaseOwner(id);
  }

  /**
   * Rewrites the file without the pages that pruning freed (VACUUM), and empties its write-ahead log: SQLite reuses
   * freed pages, but never gives them back to the file system by itself. It takes as much free disk space again
   * as the file, and the file's write lock meanwhile: no other process may be using the file.
   */
  compact(): void {
    this.commitFile();
    this.db.exec('VACUUM');
    this.db.pragma('wal_checkpoint(TRUNCATE)');
  }

  async liveOwners(now: number): Promise<Owner[]> {
    this.turn.commitOther();
    return this.ownership.liveOwners(now);
  }

  async holdings(now: number): Promise<OwnerHoldings[]> {
    this.turn.commitOther();
    return this.ownership.holdings(now);
  }

  async claimRuns(
    owner: string,
    playbooks: readonly string[] | undefined,
    now: number,
    runId?: string,
  ): Promise<RunRecord[]> {
    this.write();
    return this.ownership.claimRuns(owner, playbooks, now, runId);
  }

  async requestCancel(runId: string, reason: string): Promise<boolean> {
    this.write();
    const asked = this.ownership.requestCancel(runId, reason);
    await this.durable();
    return asked;
  }

  async cancelRequests(owner: string): Promise<{ runId: string; reason: string }[]> {
    return this.ownership.cancelRequests(owner);
  }

  async lockDevices(
    owner: string,
    holder: string,
    ids: readonly string[],
    now: number,
  ): Promise<string | undefined> {
    this.write();
    return this.ownership.lockDevices(owner, holder, ids, now);
  }

  unlockDevices(holders: readonly string[]): void {
    this.write();
    this.ownership.unlockDevices(holders);
  }

  fence(owner: string | undefined, onLost?: (e: Error) => void): void {
    this.ownership.fence(owner, onLost);
  }

  /** Joins this turn's transaction, opening it if none is open (sqlite-turn.ts). */
  private write(): void {
    this.turn.write();
  }

  /** Commits the turn open on the file now: this store's, or another's of this process. */
  private commitFile(): void {
    this.turn.commitFile();
  }

  durable(): Promise<void> {
    return this.turn.durable();
  }

  async close(): Promise<void> {
    this.turn.commit();
    await this.grouping.close();
    this.inbox.close();
    this.db.close();
  }
}
