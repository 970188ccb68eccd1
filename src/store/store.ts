/**
 * The store: runs, their steps, the per-device ledger, the callback inbox, schedules, owners and device locks.
 * An interface split by concern, with two implementations passing one suite (test/store/): the embedded
 * SQLite file, and PostgreSQL for several replicas (product.md section 10). Every piece of state a second
 * replica would need lives here, not only in memory.
 *
 * Writes and reads differ on purpose:
 * - A write whose answer nobody needs (a checkpoint, a ledger entry, a run's status) returns nothing. It joins
 *   the open turn: every such write of one turn of the event loop is committed together, at its end, and
 *   `durable()` resolves once they are. Whatever lets something leave the process (a request to the service,
 *   an answer to a client) waits for `durable()` first.
 * - A read, and a write whose answer decides what happens next (a claim, a lock, a fire), returns a promise.
 *   It sees every write made before it, committed or still in the open turn.
 */

import type { ShareBoard } from '../rate/shares.js';
import type { LoginCounts } from '../api/login-count.js';
import type { EntryRow } from './rows.js';
import type { LateCounts, LateMove, LateResult, RunUpdate } from './late.js';
import type { Ownership } from './ownership.js';

export type { Owner, OwnerHoldings, OwnerInfo, Ownership } from './ownership.js';

export const RUN_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
/** What starts a run (its trigger's `type`). */
export const RUN_TRIGGERS = ['callback', 'schedule', 'manual'] as const;

/**
 * The statuses a run ends with. A run's stored items (listing pages, lists of devices sent again) are read only
 * by its own steps, and no step of an ended run runs again: the store drops them as the run ends, whoever ends
 * it (its runner, `runs cancel`, a daemon failing a run whose playbook is gone).
 */
export const ENDED: ReadonlySet<RunStatus> = new Set(['succeeded', 'failed', 'cancelled']);
/**
 * `unreached`: a step of the run's playbook version that the run never entered (it ended first, failed or
 * cancelled; a forEach had no items; no error called an onError). Never recorded: added when a run is shown
 * (store/run-views.ts), apart from `skipped`, a step entered and left undone (its `if` was false, no devices).
 * Of a run under way, as it is shown (store/checkpoint-steps.ts): `running`, the step it is in (and the steps
 * inside a loop under way), and `pending`, a step it may still reach.
 */
/** Which checkpoints Store.stepMarks reads: at most `limit`, or those of `keys`. */
export type MarksQuery = { limit: number } | { keys: readonly string[] };

export const STEP_STATUSES = [
  'running',
  'pending',
  'succeeded',
  'failed',
  'skipped',
  'planned',
  'cancelled',
  'unreached',
] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];
/**
 * What happened to a device (product.md 5a): `accepted` (the service took the request, its outcome is still to
 * come), `succeeded` and `failed` (confirmed), `skipped` (not sent), `unconfirmed` (accepted, and no
 * confirmation came within the step's confirmation time).
 */
export type DeviceOutcome = 'accepted' | 'succeeded' | 'failed' | 'skipped' | 'unconfirmed';
export const DEVICE_OUTCOMES: readonly DeviceOutcome[] = [
  'accepted',
  'succeeded',
  'failed',
  'skipped',
  'unconfirmed',
];

export interface DeviceCounts {
  total: number;
  accepted: number;
  succeeded: number;
  failed: number;
  skipped: number;
  unconfirmed: number;
  byError: Record<string, number>;
}

/** Adds the counts `c` to `into`; a member `c` lacks (a checkpoint of an older version) adds nothing. */
export function addCounts(into: DeviceCounts, c: Partial<DeviceCounts>): void {
  into.total += c.total ?? 0;
  into.accepted += c.accepted ?? 0;
  into.succeeded += c.succeeded ?? 0;
  into.failed += c.failed ?? 0;
  into.skipped += c.skipped ?? 0;
  into.unconfirmed += c.unconfirmed ?? 0;
  for (const [k, n] of Object.entries(c.byError ?? {})) into.byError[k] = (into.byError[k] ?? 0) + n;
}

export const emptyCounts = (): DeviceCounts => ({
  total: 0,
  accepted: 0,
  succeeded: 0,
  failed: 0,
  skipped: 0,
  unconfirmed: 0,
  byError: {},
});

/** How a step's device outcomes were confirmed: devices per means (product.md 5a). */
export interface Confirmation {
  callback: number;
  requestStatus: number;
  stateRead: number;
  /** By a callback that came after the step: its run left the device unconfirmed, or read its state (recordLate). */
  afterRun?: number;
}

export interface StepSummary {
  id: string;
  /** The step (forEach, parallel, onError) it is in, by id; none for a step of `steps` or `finally`. */
  within?: string;
  status: StepStatus;
  /** When this run first entered the step, and when it last left it (the console's timeline). */
  startedAt?: string;
  endedAt?: string;
  attempts: number;
  calls: number;
  devices: DeviceCounts;
  /** A step whose devices' outcomes are confirmed after the service accepted them: by which means. */
  confirmation?: Confirmation;
  error?: string;
  /** Why a `skipped` step did nothing: `if` was false, or it was given no devices or no items. */
  reason?: string;
  /**
   * What the step made, in a few words: `report.write`'s file and its rows (`wrote reports/x.csv, 44 rows`); of a
   * `ledger.query`, that its playbook has no run in the store.
   */
  note?: string;
}

/** The run summary of product.md section 7 (`fleetbook run --json`, `GET /runs/{id}`). */
export interface RunSummary {
  runId: string;
  playbook: string;
  /** The version of the playbook the run executed (playbook/version.ts): the one it was created with. */
  version?: string;
  status: RunStatus;
  startedAt: string;
  endedAt?: string;
  dryRun?: boolean;
  error?: string;
  steps: StepSummary[];
  devices: DeviceCounts;
  /** Dry run: the mutating calls that would have been made, with their device counts. */
  planned?: { step: string; action: string; calls: number; devices: number }[];
}

export interface RunRecord {
  id: string;
  /** Of a run not ended: the results recorded late meanwhile, which the steps it shows count (store/late.ts). */
  lateMoves?: LateMove[];
  /** The owner (a process, see Owner) that executes the run; another resumes it only once that lease expired. */
  owner?: string;
  playbook: string;
  /** The version of the playbook it was created with (playbook/version.ts), whose definition the store keeps. */
  version?: string;
  status: RunStatus;
  trigger: unknown;
  inputs: unknown;
  /** The event that started the run (a callback's payload), kept so that a resumed run sees it again. */
  event?: unknown;
  startedAt: string;
  endedAt?: string;
  summary?: RunSummary;
  error?: string;
  /** A dry run (`fleetbook run --dry-run`): whoever takes it up after its process stopped goes on with a dry run. */
  dryRun?: boolean;
  /**
   * Why a cancel was asked of the process that holds the run (Ownership.requestCancel), while the run has not
   * ended: that process cancels it at its next lease renewal.
   */
  cancelRequested?: string;
}

/** One device's outcome in one step of one run: a row of the ledger. */
export interface DeviceResult {
  deviceId: string;
  kind: string;
  outcome: DeviceOutcome;
  /** A 7.3 type, an API error code, or a network error. */
  errorType?: string;
  errorClass?: string;
  attempts: number;
  /** The service's request id of an asynchronous request (a device-state action) that named the device. */
  requestId?: string;
  /** What the step returned for the device (a location: latitude, longitude, radius, time, cached). */
  data?: Record<string, unknown>;
  /**
   * A device-state action's device confirmed by a read of the devices' state (confirm.ts), not by the service's
   * word: a guess, which a CarrierService message for the device that comes after its step supersedes, the run
   * ended or still going (Store.recordLate). Kept in the ledger, not shown.
   */
  byStateRead?: true;
}

/**
 * Devices that got the same result in the same step, in order: how a step hands its results to the ledger, which
 * keeps each group as one entry. A device may appear again, in this group or a later one: the last counts.
 */
export interface DeviceGroup extends Omit<DeviceResult, 'deviceId' | 'data'> {
  ids: string[];
  /** Each device's data, in the order of `ids`, when the step returned data per device. */
  data?: (Record<string, unknown> | undefined)[];
}

/**
 * Devices as runs of one kind: `[kind, ids]` pairs, in order. In a list of devices sent again (a streamed
 * report's `devices.retry`), each run also says the error its devices were sent again for.
 */
export type ItemRuns = [kind: string, ids: string[], error?: string][];

export interface LedgerQuery {
  playbook?: string;
  step?: string;
  outcome?: DeviceOutcome;
  errorTypes?: string[];
  /** Only the last N finished runs of the playbook. */
  lastRuns?: number;
  /** Only runs started at or after this time (ISO). */
  since?: string;
}

export interface LedgerRow extends DeviceResult {
  runId: string;
  step: string;
  at: string;
}

/** A callback message as the listener received it. */
export interface InboxMessage {
  service: string;
  /** What the message reports (e.g. `alertServiceResponse`); with requestId, the deduplication key. */
  kind: string;
  requestId: string;
  /**
   * The device a message reports on (`kind:id` of its first identifier), when it names devices: the service
   * sends one message per device of a request, under the request's id. Part of the deduplication key.
   */
  device?: string;
  payload: unknown;
  receivedAt: string;
}

/** The inbox's transaction was written, and could not be synced to disk: its messages are not acknowledged. */
export class InboxSyncError extends Error {
  override readonly name = 'InboxSyncError';
}

export interface InboxEvent extends InboxMessage {
  /** Increasing: the order of arrival. */
  id: number;
}

/** Which runs `listRuns` lists: every filter given must hold. */
export interface RunListQuery {
  playbook?: string;
  status?: RunStatus;
  /** The trigger's `type`: callback, schedule or manual. */
  trigger?: string;
  /** Only dry runs (true), or only real runs (false): RunRecord.dryRun. Unset, both. */
  dryRun?: boolean;
  /** Started at or after (ISO). */
  from?: string;
  /** Started before (ISO). */
  to?: string;
  /** Only runs after this one in the listing's order (newest first): the last run of the page before. */
  before?: { startedAt: string; id: string };
  /** @default 50 */
  limit?: number;
}

/** Runs, and each step's checkpoint and items. */
export interface RunStore {
  /**
   * Keeps the definition of a playbook's version (JSON), once: before a run of that version is created. Saved again
   * an hour or more later, its time moves, so that retention leaves it (retention.ts, VERSION_REFRESH_MS).
   */
  savePlaybookVersion(version: string, definition: string): Promise<void>;
  /** The definition of a version kept, or undefined. */
  playbookVersion(version: string): Promise<string | undefined>;
  createRun(run: RunRecord): void;
  updateRun(id: string, patch: RunUpdate): void;
  getRun(id: string): Promise<RunRecord | undefined>;
  /** Newest first (by start, then id): at most `limit` of the runs that match the query. */
  listRuns(opts?: RunListQuery): Promise<RunRecord[]>;
  /** How many runs started in each hour from `from` (ISO) on, by status: `hour` is `YYYY-MM-DDTHH`. */
  runsByHour(from: string): Promise<{ hour: string; status: RunStatus; n: number }[]>;
  /** The ids that start with `prefix`, in order, at most `limit`. */
  runIdsStartingWith(prefix: string, limit: number): Promise<string[]>;
  /**
   * Checkpoint of one step, written after each step and each batch of a fan-out, with the device results it
   * produced in the same transaction: a checkpoint never exists without its ledger rows, nor they without it.
   */
  saveStep(
    runId: string,
    key: string,
    state: unknown,
    devices?: { step: string; groups: DeviceGroup[]; at: string },
  ): void;
  /**
   * The calls and attempts the execution of a step under `key` has made so far, written as each of its requests
   * leaves: a small row of its own (step-calls.ts), not its checkpoint again. loadSteps and stepMarks give them in
   * the checkpoint of a step under way or begun; loadSteps gives those of a key without a checkpoint as a
   * `running` mark.
   */
  saveCalls(runId: string, key: string, calls: number, attempts: number): void;
  loadSteps(runId: string): Promise<Map<string, unknown>>;
  /**
   * The run's checkpoints without what they hold of a step's output and items (`output`, `items`, `itemRuns`,
   * `accepted`, `reports`): what a run shows of its steps (store/checkpoint-steps.ts), a few fields a step. All of
   * them; at most `limit` (in the order of their keys); or those of `keys`.
   */
  stepMarks(runId: string, only?: MarksQuery): Promise<Map<string, unknown>>;
  /**
   * Appends one chunk (a listing's page) of a step's items as runs of one kind (and, of a list of devices sent
   * again, the error of each run). `seq` orders a step's chunks: 0 first, then 1, 2... A step that lists again
   * clears its items first.
   */
  appendItems(runId: string, key: string, seq: number, runs: ItemRuns): void;
  /** The chunks of a step's items after `afterSeq`, in order, at most `limit`. */
  itemChunks(
    runId: string,
    key: string,
    afterSeq: number,
    limit: number,
  ): Promise<{ seq: number; runs: ItemRuns }[]>;
  clearItems(runId: string, key: string): void;
}

/** The per-device ledger (product.md 5a). */
export interface LedgerStore {
  /** Writes device results. A later result for the same run, step and device replaces it. */
  recordDevices(runId: string, step: string, groups: DeviceGroup[], at: string): void;
  queryLedger(q: LedgerQuery): Promise<LedgerRow[]>;
  /** A run's (or one step's) results, by step then device: for runs small enough to hold in memory. */
  deviceResults(runId: string, step?: string): Promise<LedgerRow[]>;
  /**
   * The entries of a step under `requestIds` (a device-state request's id, a location report's txid), in order,
   * as groups with their outcome, without their data, in one read: for a run resumed after a restart, the devices
   * of the requests it confirms (`accepted`, which its checkpoint does not repeat) and what it recorded already of
   * them, or of the reports it reads again (the others). `orNone`: and the step's entries under no request id, in
   * the same order: of a device-state step, those a read of the devices' state recorded, which a resumed run keeps.
   */
  resultsUnder(
    runId: string,
    step: string,
    requestIds: readonly string[],
    orNone?: boolean,
  ): Promise<DeviceGroup[]>;
  /**
   * A run's (or one step's) results a page of rows at a time, step after step, each step's devices in the order
   * their results came, for runs too large to hold in memory (a million rows cost one await per page, not per
   * row). It gives the run as it was when it began, whatever is written meanwhile, and holds no lock: SQLite
   * reads the entries up to the run's last one then, PostgreSQL a snapshot on a connection held until it ends.
   */
  eachDeviceResult(runId: string, step?: string): AsyncIterable<LedgerRow[]>;
  /**
   * Of the devices `keys` (`step\0device`) of the run, those with more than one result in their step (retried, or
   * confirmed after they were accepted), to the seq of the entry whose result counts: read from the entries whose
   * range of ids holds one of them (id-range.ts), at each call.
   */
  repeatedAmong(runId: string, keys: readonly string[]): Promise<Map<string, number>>;
  /**
   * `repeatedAmong` of an ended run, which is first grouped once (at the first such read): the entries every
   * device of which has a later result in the step are kept, and `ledgerEntries` passes over them.
   */
  latestAmong(runId: string, keys: readonly string[]): Promise<Map<string, number>>;
  /**
   * A run's ledger entries after `after`, in (step, seq) order, at most `limit`, of those that match `q` (a
   * `device` filter keeps the entries that name a device whose id contains it), without the devices' data. Of
   * a run kept by `latestAmong`, the entries every device of which has a later result in the step are left out.
   */
  ledgerEntries(
    runId: string,
    q: EntryFilter,
    after: { step: string; seq: number } | undefined,
    limit: number,
  ): Promise<EntryRow[]>;
  /**
   * What the steps returned for some devices of the run (a location), each named by its entry's `seq` and its
   * place in the entry's devices (`index`, from 0), in the order asked: the rows of `ledgerEntries`, which reads
   * the entries without it. A device its step returned nothing for (or one of no entry of the run) is null. Each
   * entry's data is read once, however many of its devices are asked for.
   */
  ledgerData(
    runId: string,
    at: readonly { seq: number; index: number }[],
  ): Promise<(Record<string, unknown> | null)[]>;
  /**
   * Whether an entry of the run has `errorType` (one a later result replaced too): by the index of the types, so
   * that a type no run recorded costs one lookup, however many devices the run has.
   */
  hasErrorType(runId: string, errorType: string): Promise<boolean>;
  /** Every entry that names the device, newest first, at most `limit`, with its run's playbook, start and status. */
  deviceHistory(deviceId: string, limit: number): Promise<DeviceHistoryRow[]>;
  /**
   * The entries under a request id written at or after `since` (ISO), after seq `afterSeq`, in seq order, at most
   * `limit`, whose devices' CarrierService message may yet say what the service did: those left `unconfirmed` by a
   * run that has ended, and those of any run confirmed by a read of their state (DeviceResult.byStateRead).
   */
  lateEntries(since: string, afterSeq: number, limit: number): Promise<EntryRow[]>;
  /**
   * Records results that came after their step in run `runId` (store/late.ts), in one transaction: of each device
   * whose latest result in its step is still the entry named (lateEntries), a later entry with the outcome (at
   * `at`), and the counts moved (of a run still going, kept: RunRecord.lateMoves); the run is grouped again at its
   * next read (latestAmong). A device with a later result, or not in the entry, is left. How many, by outcome.
   */
  recordLate(runId: string, results: readonly LateResult[], at: string): Promise<LateCounts>;
}

/** Which of a run's ledger entries `ledgerEntries` reads. */
export interface EntryFilter {
  step?: string;
  outcome?: DeviceOutcome;
  errorType?: string;
  /** A part of a device id. */
  device?: string;
}

/** A device's result in one step of one run, with what the history of a device shows of the run. */
export interface DeviceHistoryRow extends LedgerRow {
  playbook: string;
  runStartedAt: string;
  runStatus: RunStatus;
  /** The run was a dry run (RunRecord.dryRun): its entry is a call it planned, `skipped` with DRY RUN, not made. */
  dryRun?: true;
}

/**
 * The callback inbox. Each message is held by the owner that stored it, which matches it; an owner that is gone
 * leaves its unprocessed messages to the next one that claims them (`claimInbox`).
 */
export interface InboxStore {
  /**
   * Appends messages in one transaction, held by `owner`, resolving once it is durable (fsync'd, committed) with
   * the id each message was stored under: the listener acknowledges them then. A message whose requestId, kind
   * and device were already received is a `duplicate` and is not stored again. A transaction that fails rejects
   * (nothing of it is stored); a transaction stored whose sync fails rejects with an InboxSyncError.
   */
  appendInbox(owner: string, messages: InboxMessage[]): Promise<(number | 'duplicate')[]>;
  /** Messages `owner` holds, durable and not yet processed, in order of arrival, after `afterId`. */
  pendingInbox(owner: string, limit: number, afterId?: number): Promise<InboxEvent[]>;
  /**
   * Takes the unprocessed messages that no live owner holds (their owner's lease expired), in one transaction
   * that skips those another claim holds: how many were taken. They are then `pendingInbox` of `owner`.
   */
  claimInbox(owner: string, now: number): Promise<number>;
  /** Every stored message of these requests, processed or not, in order of arrival (confirming a request). */
  inboxByRequest(requestIds: string[]): Promise<InboxEvent[]>;
  /** The id of the latest message stored, 0 when none: an event wait that begins now looks at those after it. */
  inboxPosition(): Promise<number>;
  /**
   * The messages of `service` stored after id `afterId`, processed or not, in order of arrival, at most `limit`:
   * what an event wait resumed after a restart missed meanwhile.
   */
  inboxAfter(service: string, afterId: number, limit: number): Promise<InboxEvent[]>;
  /**
   * Hands `onStored` the messages other processes store, as each of their commits lands (`owner` is this
   * process): how the steps waiting for an event and the runs confirming a request hear of a callback another
   * replica received. Never called on a store that one daemon owns. Returns how to stop.
   */
  watchInbox(owner: string, onStored: (events: InboxEvent[]) => void): () => void;
  /** How many messages this process stored or claimed and has not processed yet (its admission control, `/status`). */
  inboxBacklog(): number;
  /** The latest `limit` messages stored, newest first, each with whether it was processed yet. */
  recentInbox(limit: number): Promise<(InboxEvent & { processed: boolean })[]>;
  /**
   * Marks messages processed and stores the runs they start (queued), in one transaction: a message is processed
   * exactly once, across crashes and replicas. Returns the runs stored (none for a message already processed).
   */
  completeInbox(processed: { eventId: number; runs: RunRecord[] }[]): Promise<RunRecord[]>;
}

/** Schedules: the fires of each, claimed once across every process on the store. */
export interface ScheduleStore {
  /** When a schedule last fired (ISO), if ever. */
  lastFire(schedule: string): Promise<string | undefined>;
  /**
   * Claims the fire of `schedule` at `at` and stores the run it starts (queued), in one transaction: true when
   * this call claimed it, false when the schedule already fired at `at` or later (another replica got it first).
   */
  recordFire(schedule: string, at: string, run?: RunRecord): Promise<boolean>;
}

/** What one `pruneEnded` removed. */
export interface Pruned {
  runs: number;
  /** Ledger entries of those runs (an entry is a group of devices with one result). */
  ledgerEntries: number;
  /** Callbacks processed before the time. */
  callbacks: number;
  /** Playbook versions saved before the time that no run kept names any more. */
  versions: number;
}

/** How long the store keeps what is done (`fleetbook store prune`, FLEETBOOK_RETENTION). */
export interface Retention {
  /**
   * Removes, in one transaction, at most `limit` runs that ended before `before` (ISO), oldest first, with their
   * checkpoints, items and ledger entries, and at most `limit` callbacks processed and received before it. A run
   * not ended, and a callback not processed, are never removed. Called again until it removes nothing.
   *
   * A backfill of a fire its schedule has not passed yet is kept, however long ago it ended; given
   * `loadedSince` (ISO), only while its schedule was recorded loaded (recordLoaded) at or after that time: one
   * that no process has loaded since (its cron or time zone edited, its playbook removed) will never pass that
   * fire. A schedule never recorded loaded is kept.
   */
  pruneEnded(before: string, limit: number, loadedSince?: string): Promise<Pruned>;
  /**
   * Records that a process on the store has the schedules of `keys` loaded at `at` (ISO): a prune pass that knows
   * them. A schedule no pass recorded yet (fired before this was recorded, or by an older fleetbook only) is
   * recorded at `at` too, so that the time its backfills are kept for starts then.
   */
  recordLoaded(keys: readonly string[], at: string): Promise<void>;
}

export interface Store extends RunStore, LedgerStore, InboxStore, ScheduleStore, Ownership, Retention {
  /** Where the processes on the store share each API area's rate budget (rate/shares.ts). */
  readonly rates: ShareBoard;
  /** The session logins that may have failed, by service and user, counted by every process on the store. */
  readonly logins: LoginCounts;
  /** Where the store is, for messages: `the state file ./x.db (FLEETBOOK_STATE)`, a URL without its password. */
  readonly describe: string;
  /** One daemon per store (SQLite), or several replicas (PostgreSQL). */
  readonly replicas: boolean;
  /**
   * Resolves once every write made so far is committed. The writes of one turn of the event loop are committed
   * together, at its end; whatever lets something leave the process (a request to the service, an answer to a
   * client) waits for this first, so that nothing outside ever learns of a write a crash could still undo.
   */
  durable(): Promise<void>;
  /** Commits what is written, and closes. */
  close(): Promise<void>;
}
