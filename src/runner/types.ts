/**
 * What the runner takes (RunOptions and the services a process lends it) and the shapes its interpreter and
 * strategies share: a step's state, its checkpoint, the expression scope, and the errors that end a step.
 */
import type { ApiClient } from '../api/client.js';
import type { EngineSettings } from '../actions/settings.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import type {
  Confirmation,
  DeviceCounts,
  DeviceGroup,
  ItemRuns,
  RunRecord,
  StepStatus,
  Store,
} from '../store/store.js';
import type { StoredItems } from './stored-items.js';
import type { RetryPass } from './strategies/device-retry.js';

export type Json = Record<string, unknown>;

/** Waits for callback events (the daemon provides one; `fleetbook run` has none: there only a wait's poll can end it). */
export interface EventSource {
  /**
   * The first event of `service` that `match` accepts: one stored after position `after` (an event wait resumed
   * after a restart, which must not miss those that came meanwhile), else the next one to come.
   */
  wait(
    service: string,
    match: (event: unknown) => boolean,
    signal: AbortSignal,
    after?: number,
  ): Promise<unknown>;
  /** The position of the latest event stored, when events are stored: where a wait that begins now starts. */
  position?(): Promise<number>;
}

/** One device's result in a CarrierService message: the device as the message names it, and its status. */
export interface CarrierResult {
  /** `kind:id` of the device's first identifier, kind in lower case. */
  device: string;
  /** Every identifier the message names the device by, `kind:id`. */
  ids: string[];
  succeeded: boolean;
  /** The service's reason, for a device it did not change. */
  errorType?: string;
  message?: string;
}

/**
 * CarrierService messages correlated by request id: the daemon's listener provides them. `fleetbook run` has
 * none, and confirms by the request-status operation or by reading the devices' state instead.
 */
export interface ConfirmationSource {
  /** Whether this process receives the CarrierService messages of an account. */
  listening(accountName: string): boolean;
  /**
   * Hands every device result of these requests to `onResult`: those already received (stored in the inbox),
   * then each as it arrives, until the function it returns is called.
   */
  follow(requestIds: string[], onResult: (requestId: string, r: CarrierResult) => void): () => void;
}

/**
 * Per-device locks shared by every run of a process: two runs never mutate the same device at once. A run
 * holds the locks of one step's devices while it sends that step's calls, and takes them all at once, so no
 * two runs can wait on each other.
 */
export interface DeviceLocks {
  /**
   * Takes every lock of `ids` at once, waiting while another holder has one; resolves with the release.
   * `onWait` is told when it has to wait: the holder may have changed the devices meanwhile.
   */
  acquire(ids: readonly string[], signal?: AbortSignal, onWait?: () => void): Promise<() => void>;
}

export interface Progress {
  devicesDone: number;
  devicesTotal: number;
  calls: number;
  errors: number;
  step: string;
}

export interface RunOptions {
  client: ApiClient;
  store: Store;
  clock?: Clock;
  /** Source of jitter for retry delays. @default Math.random */
  random?: () => number;
  logger?: Logger;
  /** Inputs as given (`--input k=v` strings are coerced to the declared types). */
  inputs?: Record<string, unknown>;
  event?: unknown;
  trigger?: Json;
  /** Make the read-only calls, none of the mutating ones, and report what they would have done. */
  dryRun?: boolean;
  /**
   * A dry run's step that would have acted: the devices it would have acted on, each as its items show it
   * (`skipped`, DRY RUN); called for each iteration of a forEach. What `fleetbook test` checks of its items.
   */
  onPlanned?: (step: string, items: Json[]) => void;
  runId?: string;
  secrets?: Record<string, string>;
  env?: Record<string, string>;
  /** Polling interval of report status, request status and poll fallbacks when the step sets none. @default 5000 */
  pollIntervalMs?: number;
  events?: EventSource;
  /** CarrierService messages by request id, when this process listens for them (the daemon). */
  confirmations?: ConfirmationSource;
  onProgress?: (p: Progress) => void;
  /** Cancels the run: its step in flight ends, and `finally` runs (on `stop`). */
  signal?: AbortSignal;
  /**
   * Ends the `finally` of a cancelled run, which runs on this signal rather than on `signal`, so that its steps
   * may still call the API (resume what the run suspended): the process stopping, or the run cancelled again.
   */
  stop?: AbortSignal;
  locks?: DeviceLocks;
  /** The run as stored, when the caller has it (the daemon's pool): saves reading it back. */
  stored?: RunRecord;
  /** The engine actions' reports directory and webhook allowlist. @default engineSettings() (./reports, public only) */
  engine?: EngineSettings;
  /** The owner (a Lease's id) of a run this call creates: no other live process resumes it. */
  owner?: string;
}

/** A failure that ends a step: its message is what the summary shows. */
export class StepError extends Error {
  constructor(
    message: string,
    readonly selector: string[] = [],
  ) {
    super(message);
    this.name = 'StepError';
  }
}

/**
 * The reason of an abort that interrupts a run without ending it (the daemon stopping): the run stays
 * unfinished in the store, `finally` does not run, and the next start resumes it from its checkpoints.
 */
export class Interrupted extends Error {
  constructor(message = 'interrupted: fleetbook is stopping') {
    super(message);
    this.name = 'Interrupted';
  }
}

/** A limit of `limits` would be exceeded: the run stops before the call. */
export class LimitError extends StepError {}

export interface StepState {
  status: StepStatus;
  output: unknown;
  items: unknown[];
  devices: DeviceCounts;
  error?: string;
  /** Why a `skipped` step did nothing: its `if` was false, it was given no devices or no items. */
  reason?: string;
  /**
   * What a step that did its work made, in a few words: `report.write`'s file and rows; a `ledger.query`'s playbook
   * with no run in the store (StepSummary.note).
   */
  note?: string;
  /** Device results to write with the step's checkpoint. */
  ledger?: DeviceGroup[];
  /** What a dry run's step that would act plans (planOnly), which its checkpoint keeps (Checkpoint.planned). */
  planned?: PlannedCalls;
  /** A listing's items in the store, when an expression or a streaming step reads them. */
  stored?: StoredItems;
}

export type { ItemRuns };

/** The calls a dry run's step would have made (RunSummary.planned, without the step). */
export interface PlannedCalls {
  action: string;
  calls: number;
  devices: number;
}

/** A request the service accepted and whose devices' outcomes are still to be confirmed. */
export interface AcceptedRequest {
  requestId: string;
  accountName: string;
  /** The devices, as runs of one kind. */
  devices: ItemRuns;
  /** How many times it was sent (the step's `retry:`). An earlier version's checkpoint: the devices.retry pass. */
  attempts: number;
  /**
   * The sends each device had before this request's devices.retry pass (strategies/sends.ts): a device's attempts
   * are those and this request's. Not kept in the checkpoint: a resumed run rebuilds them from the devices'
   * results before the pass, in the ledger.
   */
  before?: ReadonlyMap<string, number>;
  /** When it was accepted (ms): the confirmation time counts from here, across a restart too. */
  at: number;
  /**
   * The devices.retry pass that sent it, when not the first: a resumed run goes on from the pass of the last one.
   * Absent from a checkpoint of an earlier version, whose resumed run counts its passes from the first again.
   */
  pass?: RetryPass;
}

/**
 * An accepted request as a `confirming` checkpoint keeps it: without its devices, which the ledger holds (its
 * `accepted` entries under the request id, written with the checkpoint). A checkpoint of an earlier version has them.
 */
export type KeptRequest = Omit<AcceptedRequest, 'devices' | 'before'> & { devices?: ItemRuns };

/** The statuses of a step under way, which a resumed run takes up where its checkpoint says (Checkpoint). */
export const UNFINISHED = ['sending', 'confirming', 'waiting', 'reporting'] as const;
export type UnfinishedStatus = (typeof UNFINISHED)[number];

export function unfinished(cp: Checkpoint | undefined): boolean {
  return (UNFINISHED as readonly string[]).includes(cp?.status ?? '');
}

/**
 * What a step's checkpoint holds. `running`: a mark that the step began, and nothing it did yet (a run resumed
 * runs it again, as one with no checkpoint). `sending`: a mutating call was sent and its answer is not yet recorded.
 * `confirming`: the service accepted the step's requests (`accepted`), and their devices' outcomes are not
 * all confirmed yet. `reporting`: a location report step's reports were created (`reports`), and are not all
 * read yet. `waiting`: a wait until `until`.
 */
export interface Checkpoint {
  status: StepStatus | UnfinishedStatus;
  output?: unknown;
  /**
   * How many items a listing keeps in the store (StoredItems under the step's key): a resumed run must go over
   * the same list, not an empty one nor a fresh listing that the run itself has changed.
   */
  storedItems?: number;
  /** The items as checkpoints of earlier versions kept them, whole or as runs of one kind: read on resume. */
  items?: unknown[];
  itemRuns?: ItemRuns;
  devices?: DeviceCounts;
  accepted?: KeptRequest[];
  error?: string;
  /** Why a `skipped` step did nothing (StepState.reason). */
  reason?: string;
  /** StepState.note. */
  note?: string;
  calls?: number;
  attempts?: number;
  /** How the step's devices were confirmed (StepCount.confirmation): a resumed run counts them again. */
  confirmation?: Confirmation;
  /**
   * A dry run's `planned` step: the action it would call, the calls it would make and to how many devices. What a
   * dry run in progress shows of its planned calls (store/run-views.ts liveView), and what a resumed one counts
   * again in its summary's `planned`.
   */
  planned?: PlannedCalls;
  /** A `waiting` wait's deadline, on the run's clock (ms). */
  until?: number;
  /** When a `sending` call left, on the run's clock (ms): an unknown outcome is watched from then. */
  since?: number;
  /**
   * A `confirming` step's devices.retry pass after the first whose request is being sent, and since when (ms, on the
   * run's clock): saved before it leaves and gone once it is accepted, as `sending` is for the first pass. A resumed
   * run that finds it reads that pass's devices' state before it sends the pass again. Absent from a checkpoint of an
   * earlier version, which resumes as that version did (the pass sent again); an earlier version ignores it.
   */
  sendingPass?: RetryPass & { since: number };
  /** A `waiting` event wait's start: the position of the latest event stored then (EventSource.position). */
  after?: number;
  /** A location report's batches whose reports the service created (`reporting`): read, not created again. */
  reports?: CreatedReports[];
  /**
   * When the execution that wrote it began the step, and, once it ended outside any loop, when it ended (ISO): what
   * a run under way shows of its times. Inside a loop, only that of the first iteration that began the step.
   */
  startedAt?: string;
  endedAt?: string;
}

/** The reports the service created for one batch of a location report step (its key: which pass, which devices). */
export interface CreatedReports {
  batch: string;
  /** When they were asked for, on the run's clock (ms). */
  sentAt: number;
  reports: Json[];
}

export interface Scope {
  ctx: Json & { steps: Record<string, StepState>; vars: Json };
  inLoop: boolean;
  key: string;
  /**
   * What stops the steps of this scope: that of the `forEach` or `parallel` step they are in, which its timeout
   * also aborts; the run's when absent.
   */
  signal?: AbortSignal;
}
