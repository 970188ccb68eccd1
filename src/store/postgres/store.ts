/**
 * The store on PostgreSQL, for several `fleetbook serve` replicas on one database (product.md section 10): the
 * same tables and meaning as the SQLite store, with PostgreSQL coordinating the replicas (claims that skip
 * locked rows, a row per device lock, fires claimed by a conditional upsert). Each concern has a file of its own;
 * this class puts them together behind the Store interface.
 */
import type pg from 'pg';
import { LeaseLostError } from '../../errors.js';
import type { EntryRow } from '../rows.js';
import type { LateCounts, LateResult, RunUpdate } from '../late.js';
import type {
  DeviceGroup,
  DeviceHistoryRow,
  EntryFilter,
  InboxEvent,
  InboxMessage,
  ItemRuns,
  LedgerQuery,
  LedgerRow,
  MarksQuery,
  Owner,
  OwnerHoldings,
  OwnerInfo,
  Pruned,
  RunListQuery,
  RunRecord,
  RunStatus,
  Store,
} from '../store.js';
import { InboxFeed } from './feed.js';
import { PostgresInbox } from './inbox.js';
import { insertEntries, PostgresLedger } from './ledger.js';
import { cannotOpen, migrate } from './migrations.js';
import { PostgresOwnership } from './ownership.js';
import { clientConfig, describeUrl, openPool, type PostgresOptions, type Statement } from './pool.js';
import { PostgresRates } from './rates.js';
import { PostgresLogins } from './logins.js';
import { pruneEnded, recordLoaded } from './retention.js';
import { insertRuns, PostgresRuns, removedCalls, updateRuns, upsertCalls, upsertSteps } from './runs.js';
import { PostgresSchedules } from './schedules.js';
import { Turns, type TurnWrites } from './turn.js';

export type { PostgresOptions };
export { migratePostgres } from './migrations.js';

/**
 * Opens the store on the database at `url` (`postgres://` or `postgresql://`), applying the migrations it lacks
 * first; a ConfigError names the database (never its password) when it cannot be reached or is newer than this
 * fleetbook.
 */
export async function openPostgresStore(url: string, options: PostgresOptions = {}): Promise<PostgresStore> {
  let config: pg.ClientConfig;
  let pool: pg.Pool;
  try {
    // The URL checked, and the files of libpq's variables found, once: every pool of the store opens so.
    config = clientConfig(url, options.applicationName ?? 'fleetbook', options.origin);
    pool = openPool(config, options);
  } catch (e) {
    throw cannotOpen(url, e, options.origin);
  }
  try {
    await migrate(pool, describeUrl(url, options.origin));
  } catch (e) {
    await pool.end();
    throw cannotOpen(url, e, options.origin);
  }
  return new PostgresStore(pool, config, describeUrl(url, options.origin));
}

/**
 * A turn's writes as statements: runs first (the others may update them), their updates, checkpoints, then
 * ledger entries. Only writes of one kind depend on each other's order, and each kind keeps it.
 */
function turnStatements(t: TurnWrites): Statement[] {
  const out: Statement[] = [];
  if (t.runs.length) out.push(insertRuns(t.runs));
  if (t.runUpdates.size) out.push(updateRuns(t.runUpdates));
  out.push(...t.statements);
  if (t.unlocks.length)
    out.push({ text: 'DELETE FROM device_locks WHERE holder = ANY($1::text[])', values: [t.unlocks] });
  if (t.steps.size) out.push(upsertSteps(t.steps));
  if (t.calls.size) out.push(upsertCalls(t.calls));
  out.push(...removedCalls(t));
  if (t.entries.length) out.push(insertEntries(t.entries));
  return out;
}

export class PostgresStore implements Store {
  readonly replicas = true;
  private readonly turns: Turns;
  private readonly runs: PostgresRuns;
  private readonly ledger: PostgresLedger;
  private readonly inbox: PostgresInbox;
  private readonly schedules: PostgresSchedules;
  private readonly ownership: PostgresOwnership;
  private readonly feeds = new Set<InboxFeed>();

  readonly rates: PostgresRates;
  readonly logins: PostgresLogins;
  /** The rate exchanges' own connection: they never queue behind the store's busy pool. */
  private readonly ratesPool: pg.Pool;

  /**
   * `config`: how each of its connections opens (clientConfig, checked as the store opened): `pool`'s, the rate
   * exchanges' and the inbox feeds'. `describe`: `the database postgres://user@host:port/db (FLEETBOOK_STATE)`,
   * or `(--state)`.
   */
  constructor(
    private readonly pool: pg.Pool,
    private readonly config: pg.ClientConfig,
    readonly describe: string,
  ) {
    this.ratesPool = openPool(config, { maxConnections: 2, applicationName: 'fleetbook-rates' });
    this.rates = new PostgresRates(this.ratesPool);
    this.logins = new PostgresLogins(pool);
    this.turns = new Turns(pool, turnStatements);
    this.runs = new PostgresRuns(this.turns);
    this.ledger = new PostgresLedger(this.turns);
    this.inbox = new PostgresInbox(pool, this.turns);
    this.schedules = new PostgresSchedules(this.turns);
    this.ownership = new PostgresOwnership(this.turns);
  }

  durable(): Promise<void> {
    return this.turns.durable();
  }

  async close(): Promise<void> {
    for (const feed of this.feeds) feed.stop();
    this.feeds.clear();
    try {
      // A lease lost: its last writes were refused on purpose, and whoever waited on them was told.
      await this.turns.durable().catch((e: unknown) => {
        if (!(e instanceof LeaseLostError)) throw e;
      });
    } finally {
      await Promise.all([this.pool.end(), this.ratesPool.end()]);
    }
  }

  pruneEnded(before: string, limit: number, loadedSince?: string): Promise<Pruned> {
    return pruneEnded(this.turns, before, limit, loadedSince);
  }
  recordLoaded(keys: readonly string[], at: string): Promise<void> {
    return recordLoaded(this.turns, keys, at);
  }

  // ── runs, checkpoints and items ──
  savePlaybookVersion(version: string, definition: string): Promise<void> {
    return this.runs.savePlaybookVersion(version, definition);
  }

  playbookVersion(version: string): Promise<string | undefined> {
    return this.runs.playbookVersion(version);
  }

  createRun(run: RunRecord): void {
    this.runs.createRun(run);
  }
  updateRun(id: string, patch: RunUpdate): void {
    this.runs.updateRun(id, patch);
  }
  getRun(id: string): Promise<RunRecord | undefined> {
    return this.runs.getRun(id);
  }
  listRuns(q?: RunListQuery): Promise<RunRecord[]> {
    return this.runs.listRuns(q);
  }
  runsByHour(from: string): Promise<{ hour: string; status: RunStatus; n: number }[]> {
    return this.runs.runsByHour(from);
  }
  runIdsStartingWith(prefix: string, limit: number): Promise<string[]> {
    return this.runs.runIdsStartingWith(prefix, limit);
  }
  saveStep(
    runId: string,
    key: string,
    state: unknown,
    devices?: { step: string; groups: DeviceGroup[]; at: string },
  ): void {
    this.runs.saveStep(runId, key, state, devices);
  }
  saveCalls(runId: string, key: string, calls: number, attempts: number): void {
    this.runs.saveCalls(runId, key, calls, attempts);
  }
  loadSteps(runId: string): Promise<Map<string, unknown>> {
    return this.runs.loadSteps(runId);
  }
  stepMarks(runId: string, only?: MarksQuery): Promise<Map<string, unknown>> {
    return this.runs.stepMarks(runId, only);
  }
  appendItems(runId: string, key: string, seq: number, runs: ItemRuns): void {
    this.runs.appendItems(runId, key, seq, runs);
  }
  itemChunks(
    runId: string,
    key: string,
    afterSeq: number,
    limit: number,
  ): Promise<{ seq: number; runs: ItemRuns }[]> {
    return this.runs.itemChunks(runId, key, afterSeq, limit);
  }
  clearItems(runId: string, key: string): void {
    this.runs.clearItems(runId, key);
  }
  // ── the ledger ──
  recordDevices(runId: string, step: string, groups: DeviceGroup[], at: string): void {
    this.ledger.recordDevices(runId, step, groups, at);
  }
  queryLedger(q: LedgerQuery): Promise<LedgerRow[]> {
    return this.ledger.queryLedger(q);
  }
  deviceResults(runId: string, step?: string): Promise<LedgerRow[]> {
    return this.ledger.deviceResults(runId, step);
  }

  resultsUnder(
    runId: string,
    step: string,
    requestIds: readonly string[],
    orNone = false,
  ): Promise<DeviceGroup[]> {
    return this.ledger.resultsUnder(runId, step, requestIds, orNone);
  }
  eachDeviceResult(runId: string, step?: string): AsyncIterable<LedgerRow[]> {
    return this.ledger.eachDeviceResult(runId, step);
  }
  repeatedAmong(runId: string, keys: readonly string[]): Promise<Map<string, number>> {
    return this.ledger.repeatedAmong(runId, keys);
  }
  latestAmong(runId: string, keys: readonly string[]): Promise<Map<string, number>> {
    return this.ledger.latestAmong(runId, keys);
  }
  ledgerEntries(
    runId: string,
    q: EntryFilter,
    after: { step: string; seq: number } | undefined,
    limit: number,
  ): Promise<EntryRow[]> {
    return this.ledger.ledgerEntries(runId, q, after, limit);
  }
  ledgerData(...args: Parameters<Store['ledgerData']>): Promise<(Record<string, unknown> | null)[]> {
    return this.ledger.ledgerData(...args);
  }

  hasErrorType(runId: string, errorType: string): Promise<boolean> {
    return this.ledger.hasErrorType(runId, errorType);
  }
  deviceHistory(deviceId: string, limit: number): Promise<DeviceHistoryRow[]> {
    return this.ledger.deviceHistory(deviceId, limit);
  }

  lateEntries(since: string, afterSeq: number, limit: number): Promise<EntryRow[]> {
    return this.ledger.lateEntries(since, afterSeq, limit);
  }

  recordLate(runId: string, results: readonly LateResult[], at: string): Promise<LateCounts> {
    return this.ledger.recordLate(runId, results, at);
  }

  // ── the callback inbox ──
  appendInbox(owner: string, messages: InboxMessage[]): Promise<(number | 'duplicate')[]> {
    return this.inbox.appendInbox(owner, messages);
  }
  pendingInbox(owner: string, limit: number, afterId?: number): Promise<InboxEvent[]> {
    return this.inbox.pendingInbox(owner, limit, afterId);
  }
  claimInbox(owner: string, now: number): Promise<number> {
    return this.inbox.claimInbox(owner, now);
  }
  inboxByRequest(requestIds: string[]): Promise<InboxEvent[]> {
    return this.inbox.inboxByRequest(requestIds);
  }
  inboxPosition(): Promise<number> {
    return this.inbox.inboxPosition();
  }
  inboxAfter(service: string, afterId: number, limit: number): Promise<InboxEvent[]> {
    return this.inbox.inboxAfter(service, afterId, limit);
  }
  watchInbox(owner: string, onStored: (events: InboxEvent[]) => void): () => void {
    const feed = new InboxFeed(
      { ...this.config, application_name: 'fleetbook-feed' },
      this.pool,
      owner,
      onStored,
    );
    this.feeds.add(feed);
    return () => {
      feed.stop();
      this.feeds.delete(feed);
    };
  }
  inboxBacklog(): number {
    return this.inbox.inboxBacklog();
  }
  recentInbox(limit: number): Promise<(InboxEvent & { processed: boolean })[]> {
    return this.inbox.recentInbox(limit);
  }
  completeInbox(processed: { eventId: number; runs: RunRecord[] }[]): Promise<RunRecord[]> {
    return this.inbox.completeInbox(processed);
  }

  // ── schedules ──
  lastFire(schedule: string): Promise<string | undefined> {
    return this.schedules.lastFire(schedule);
  }
  recordFire(schedule: string, at: string, run?: RunRecord): Promise<boolean> {
    return this.schedules.recordFire(schedule, at, run);
  }

  // ── owners, claims and device locks ──
  registerOwner(
    owner: OwnerInfo,
    now: number,
    leaseMs: number,
    exclusive: boolean,
  ): Promise<Owner | undefined> {
    return this.ownership.registerOwner(owner, now, leaseMs, exclusive);
  }
  renewOwner(id: string, now: number, leaseMs: number): Promise<boolean> {
    return this.ownership.renewOwner(id, now, leaseMs);
  }
  releaseOwner(id: string): Promise<void> {
    return this.ownership.releaseOwner(id);
  }
  liveOwners(now: number): Promise<Owner[]> {
    return this.ownership.liveOwners(now);
  }
  holdings(now: number): Promise<OwnerHoldings[]> {
    return this.ownership.holdings(now);
  }
  claimRuns(
    owner: string,
    playbooks: readonly string[] | undefined,
    now: number,
    runId?: string,
  ): Promise<RunRecord[]> {
    return this.ownership.claimRuns(owner, playbooks, now, runId);
  }
  requestCancel(runId: string, reason: string): Promise<boolean> {
    return this.ownership.requestCancel(runId, reason);
  }
  cancelRequests(owner: string): Promise<{ runId: string; reason: string }[]> {
    return this.ownership.cancelRequests(owner);
  }
  lockDevices(
    owner: string,
    holder: string,
    ids: readonly string[],
    now: number,
  ): Promise<string | undefined> {
    return this.ownership.lockDevices(owner, holder, ids, now);
  }
  unlockDevices(holders: readonly string[]): void {
    this.ownership.unlockDevices(holders);
  }
  fence(owner: string | undefined, onLost?: (e: Error) => void): void {
    this.ownership.fence(owner, onLost);
  }
}
