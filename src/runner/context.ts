/**
 * What a run's interpreter and its action strategies share: the run's services, its step summaries and
 * progress, the counted API call, the step-level retry, and the ledger. One per run.
 */
import { ownType } from '../api/device-errors.js';
import { isoTime, systemClock, type Clock } from '../clock.js';
import { ApiError, FleetbookError, InputError, NetworkError } from '../errors.js';
import { silentLogger, type Logger } from '../log.js';
import { backoffDelay, retrying } from '../retry.js';
import {
  addCounts,
  emptyCounts,
  type Confirmation,
  type DeviceCounts,
  type DeviceGroup,
  type DeviceResult,
  type StepSummary,
} from '../store/store.js';
import { CATALOG, isAction, type Operation } from '../api/catalog.js';
import type { CallOptions } from '../api/client-options.js';
import { resultsOf } from './devices.js';
import { logStepFailure } from './held-webhooks.js';
import type { Step } from '../playbook/schema.js';
import type { Plan, RetryPolicy, StepPlan } from './plan.js';
import {
  StepError,
  type Checkpoint,
  type Json,
  type Progress,
  type RunOptions,
  type StepState,
} from './types.js';

/**
 * One execution of a step (one iteration of a fan-out, several of which may run at once): the requests it sent
 * and the attempts it made, which its checkpoint keeps, each counted in its step's summary too.
 */
export class StepCount {
  calls = 0;
  attempts = 0;
  /**
   * The devices this execution recorded as it failed (recordFailing, countFailing): those of the step's state and
   * failed checkpoint, as the summary counts them.
   */
  readonly failing: DeviceCounts = emptyCounts();
  /**
   * How this execution confirmed its devices (a device-state step), which its checkpoint keeps: a run resumed
   * after a crash counts the means of the executions it restores, not only of those it runs again.
   */
  confirmation?: Confirmation;
  /** When this execution began the step, when it marked its start (StepMarks.started): its checkpoints keep it. */
  startedAt?: string;

  constructor(
    readonly stepId: string,
    /** The step's key in this run (`each[3]/note` inside a loop), under which its counts are kept. */
    readonly key: string,
    private readonly sum: StepSummary,
  ) {}

  /**
   * Continues the execution a crash stopped, from the counts the store kept of it (`cp`: its under-way checkpoint,
   * or the mark of its start, with the counts of its requests: store/step-calls.ts): the calls and attempts it had
   * made count here and in the step's summary.
   */
  resume(cp: Pick<Checkpoint, 'calls' | 'attempts'> | undefined): void {
    if (!cp) return;
    this.calls += cp.calls ?? 0;
    this.sum.calls += cp.calls ?? 0;
    this.attempts += cp.attempts ?? 0;
    this.sum.attempts += cp.attempts ?? 0;
  }

  /** Devices confirmed, by each means: counted here and in the step's summary. */
  confirmed(tally: Confirmation): void {
    if (!tally.callback && !tally.requestStatus && !tally.stateRead) return;
    addConfirmation((this.confirmation ??= { callback: 0, requestStatus: 0, stateRead: 0 }), tally);
    countConfirmation(this.sum, tally);
  }

  call(): void {
    this.calls++;
    this.sum.calls++;
  }

  attempt(): void {
    this.attempts++;
    this.sum.attempts++;
  }

  /** The attempt just counted had its input refused before anything left (FB_INPUT): it was none. */
  refused(): void {
    this.attempts--;
    this.sum.attempts--;
  }
}

export class RunContext {
  readonly clock: Clock;
  readonly log: Logger;
  readonly random: () => number;
  readonly summaries = new Map<string, StepSummary>();
  readonly planned = new Map<string, { step: string; action: string; calls: number; devices: number }>();
  readonly progress: Progress = { devicesDone: 0, devicesTotal: 0, calls: 0, errors: 0, step: '' };
  /** Checkpoints of an earlier execution of this run (a resumed run), by step key. */
  checkpoints = new Map<string, Checkpoint>();
  /** A dry run's lookups of the webhook hosts it plans to send to: each host resolved once a run. */
  readonly hostLookups = new Map<string, Promise<unknown>>();
  /** The counts of the steps an earlier execution began and did not finish, nor checkpoint under way (begunCounts). */
  begun = new Map<string, Pick<Checkpoint, 'calls' | 'attempts'>>();
  /** The playbooks a ledger query of this run found no run of: each warned of once (strategies/engine.ts). */
  readonly ledgerNeverRan = new Set<string>();

  constructor(
    readonly id: string,
    readonly plan: Plan,
    readonly o: RunOptions,
  ) {
    this.clock = o.clock ?? systemClock;
    this.random = o.random ?? Math.random;
    this.log = (o.logger ?? silentLogger).child({ runId: id, playbook: plan.playbook.name });
  }

  now(): string {
    return isoTime(this.clock.now());
  }

  /** Logs a step that failed: a webhook held back, once for each playbook (held-webhooks.ts). */
  stepFailed(step: string, e: unknown, error: string): void {
    logStepFailure(this.log, this.o.engine?.webhooks, this.plan.playbook.name, step, e, error);
  }

  stepSummary(id: string): StepSummary {
    let s = this.summaries.get(id);
    if (!s) {
      const within = this.plan.within.get(id);
      s = {
        id,
        ...(within ? { within } : {}),
        status: 'running',
        attempts: 0,
        calls: 0,
        devices: emptyCounts(),
      };
      this.summaries.set(id, s);
    }
    return s;
  }

  /** A new execution of step `stepId` under `key`, counted apart from its other executions (StepCount). */
  countOf(stepId: string, key: string): StepCount {
    return new StepCount(stepId, key, this.stepSummary(stepId));
  }

  /** Whether any expression reads `steps.<id>.<member>`: a large output no one reads is not kept. */
  keeps(stepId: string, member: 'output' | 'items' | 'stream'): boolean {
    const m = this.plan.referenced.get(stepId);
    return Boolean(m && (m.has('*') || m.has(member)));
  }

  /**
   * The options of a step's requests: each request the client sends for it (a page, a batch of a report; not a
   * retry) counts in the step's `calls` and on the progress line, and none that was never sent does. A repeat that
   * found what the call removes gone says so in the step's log.
   */
  requestsOf(count: StepCount, signal?: AbortSignal): CallOptions {
    const onRequest = () => {
      count.call();
      // Kept as it leaves, a few bytes apart from the step's checkpoint (however large): a run resumed after a
      // crash counts the calls made before it, of a listing, a read, a step under way alike (StepCount.resume).
      this.o.store.saveCalls(this.id, count.key, count.calls, count.attempts);
      this.progress.calls++;
      this.report();
    };
    const onGone = (message: string, meta: Record<string, unknown>) =>
      this.log.info(message, { step: count.stepId, ...meta });
    return signal ? { signal, onRequest, onGone } : { onRequest, onGone };
  }

  /**
   * The checkpoint `state` of a step under way (`sending`, `confirming`, `reporting`, `waiting`), with the calls
   * and attempts of its execution `count` so far; each later request writes its counts alone (requestsOf). A run
   * resumed after a crash continues the count from them (StepCount.resume).
   */
  saveUnderWay(
    count: StepCount,
    key: string,
    state: Checkpoint,
    devices?: { step: string; groups: DeviceGroup[]; at: string },
  ): void {
    this.o.store.saveStep(this.id, key, withCounts(state, count), devices);
  }

  /**
   * One API call of a step: its requests counted (requestsOf). `repeat`: an earlier call of it may have reached the
   * service (CallOptions.repeat).
   */
  async call(
    count: StepCount,
    action: string,
    input: Json,
    signal?: AbortSignal,
    repeat?: boolean,
  ): Promise<unknown> {
    // A request that may change something leaves the process only once the checkpoint that says it is being
    // sent is committed. A read changes nothing: it is simply asked again after a crash.
    if (!isAction(action) || CATALOG[action].mutating) await this.o.store.durable();
    const o = this.requestsOf(count, signal);
    return this.o.client.callByName(action, input, repeat ? { ...o, repeat } : o);
  }

  /**
   * Step-level retry of a whole call, for errors its `retry.on` selects. Every attempt counts in the summary; one
   * whose input the client refused (FB_INPUT) tried nothing and reached nothing: it does not count.
   */
  retrying<T>(
    count: StepCount,
    policy: RetryPolicy,
    op: Pick<Operation, 'retrySafe'>,
    signal: AbortSignal,
    fn: () => Promise<T>,
  ): Promise<{ value: T; attempts: number }> {
    // Counted as it begins, so that its requests' counts row (requestsOf) holds it while it is in flight.
    const counted = async () => {
      count.attempt();
      try {
        return await fn();
      } catch (e) {
        if (e instanceof InputError) count.refused();
        throw e;
      }
    };
    return retrying(counted, {
      maxAttempts: policy.maxAttempts,
      // A call that may have acted is never repeated blindly (the device-state strategy reconciles instead).
      retryable: (e) => !(unknownOutcome(e) && !op.retrySafe) && selects(policy.on, e),
      delay: (attempt) => this.delay(policy, attempt),
      sleep: (ms) => this.clock.sleep(ms, signal),
    });
  }

  delay(policy: RetryPolicy, attempt: number): number {
    return backoffDelay(attempt, policy.backoff, this.random);
  }

  /** A step's device results: counted, shown to expressions when they read the items, and kept for the ledger. */
  finishDevices(stepId: string, output: unknown, groups: DeviceGroup[]): StepState {
    const counts = countDevices(groups);
    this.countProgress(counts);
    const items = this.keeps(stepId, 'items') ? resultsOf(groups).map(item) : [];
    return { status: 'succeeded', output, items, devices: counts, ledger: groups };
  }

  /** Devices done, for the progress line. */
  countProgress(counts: DeviceCounts): void {
    this.progress.devicesDone += counts.total;
    this.progress.devicesTotal = Math.max(this.progress.devicesTotal, this.progress.devicesDone);
    this.progress.errors += counts.failed + counts.unconfirmed;
    this.report();
  }

  /** A step's items read from the ledger: each device's latest result in it, as `steps.<id>.items` gives it. */
  async ledgerItems(stepId: string): Promise<Json[]> {
    return (await this.o.store.deviceResults(this.id, stepId)).map(item);
  }

  recordLedger(stepId: string, groups: DeviceGroup[]): void {
    if (groups.length) this.o.store.recordDevices(this.id, stepId, groups, this.now());
  }

  /** Devices of a step about to fail: recorded, and counted (countFailing). */
  recordFailing(count: StepCount, groups: DeviceGroup[]): void {
    this.recordLedger(count.stepId, groups);
    this.countFailing(count, groups);
  }

  /**
   * Devices, already recorded, of a step about to fail: counted in its summary now, and in its execution's count,
   * which its failed state and checkpoint take (no StepState of the strategy will count them).
   */
  countFailing(count: StepCount, groups: DeviceGroup[]): void {
    this.addFailing(count, countDevices(groups));
  }

  /** As countFailing, of devices already counted (a streamed step counts its results as they come). */
  addFailing(count: StepCount, c: DeviceCounts): void {
    addCounts(this.stepSummary(count.stepId).devices, c);
    addCounts(count.failing, c);
  }

  report(): void {
    this.o.onProgress?.({ ...this.progress });
  }
}

export function countDevices(groups: DeviceGroup[]): DeviceCounts {
  const c = emptyCounts();
  for (const g of groups) {
    const n = g.ids.length;
    c.total += n;
    c[g.outcome] += n;
    if (g.errorType && g.outcome !== 'succeeded') c.byError[g.errorType] = (c.byError[g.errorType] ?? 0) + n;
  }
  return c;
}

/**
 * What `toleratedFailurePercent` says of `failed` out of `of`: undefined within it, else why the step fails,
 * e.g. `2 of 10 iterations failed (20.0 %, tolerated 10 %)`. A forEach counts its iterations, a step its devices.
 */
export function overTolerance(
  failed: number,
  of: number,
  what: string,
  tolerated: number,
): string | undefined {
  const percent = of ? (failed / of) * 100 : 0;
  if (percent <= tolerated) return undefined;
  return `${failed} of ${of} ${what} (${percent.toFixed(1)} %, tolerated ${tolerated} %)`;
}

/**
 * Why a step fails on the share of its devices that failed or stayed unconfirmed (`devices.toleratedFailurePercent`),
 * or undefined: within the tolerance, or none set.
 */
export function devicesOverTolerance(plan: StepPlan, d: DeviceCounts): string | undefined {
  if (plan.toleratedFailurePercent === undefined) return undefined;
  const what = d.unconfirmed ? 'devices failed or stayed unconfirmed' : 'devices failed';
  return overTolerance(d.failed + d.unconfirmed, d.total, what, plan.toleratedFailurePercent);
}

export function done(output: unknown): StepState {
  return { status: 'succeeded', output, items: [], devices: emptyCounts() };
}

/**
 * A step that did nothing, and why (its `if` was false, it was given no devices, no items): the summary, the
 * checkpoint, the log line and `steps.<id>.reason` say so. Its output is null, but a forEach's (no iteration).
 */
export function skipped(reason: string, output: unknown = null): StepState {
  return { status: 'skipped', output, items: [], devices: emptyCounts(), reason };
}

/** The reason of a step the run never reached, as a `finally` step reads it. */
export const NEVER_REACHED = 'the run never reached it';

/**
 * Whether a step's items are what it found (a device listing, a ledger query), not the results of the devices
 * it acted on: items it did not finish finding are not known, and an empty list would say it found none.
 */
export function findsItems(step: Step): boolean {
  if (!('uses' in step)) return false;
  if (step.uses === 'ledger.query') return true;
  return isAction(step.uses) && (CATALOG[step.uses] as Operation).strategy === 'listing';
}

/**
 * `state`, of a step that finds items (findsItems) and did not finish finding them (it failed, was cancelled, or
 * the run never reached it), with items that are not known: reading `steps.<id>.items` fails, naming the step
 * and `why` (`failed (its error)`), rather than giving an empty list, which would say it found nothing. Its
 * other members read as they are; the items are left out of the step written whole (not enumerable).
 */
export function itemsNotKnown(state: StepState, id: string, why: string): StepState {
  return unreadableItems(
    state,
    `\`steps.${id}.items\` cannot be read: step \`${id}\` ${why}, so what it would have found is not known; ` +
      `read them under a condition (\`steps.${id}.status == "succeeded"\`)`,
  );
}

/**
 * `state` with items that reading fails with `message`. Its other members read as they are; the items are left
 * out of the step written whole (not enumerable).
 */
export function unreadableItems(state: StepState, message: string): StepState {
  Object.defineProperty(state, 'items', {
    configurable: true,
    enumerable: false,
    get(): never {
      throw new StepError(message);
    },
  });
  return state;
}

/** The reason of a step whose `if` was false. */
export const IF_FALSE = '`if` was false';

/** The reason of a step given no devices in `member`, the list its action needs at least one device in. */
export const noDevices = (member: string): string =>
  `no devices: \`${member}\` is an empty list, nothing was sent`;

/**
 * A step's summary after one execution of it ended. A step of a fan-out is `skipped`, with why, only while no
 * iteration of it did anything else; a failed iteration's status stays.
 */
export function settle(sum: StepSummary, state: StepState): void {
  if (state.status === 'skipped') {
    if (sum.status !== 'running') return;
    sum.status = 'skipped';
    if (state.reason) sum.reason = state.reason;
  } else if (sum.status !== 'failed') {
    sum.status = state.status;
    delete sum.reason;
  }
  // In a fan-out, the last iteration's.
  if (state.note) sum.note = state.note;
}

/** A device result as `steps.<id>.items` shows it. */
export function item(r: DeviceResult): Json {
  return {
    id: r.deviceId,
    kind: r.kind,
    outcome: r.outcome,
    ...(r.errorType ? { error: r.errorType, errorClass: r.errorClass } : {}),
    attempts: r.attempts,
    ...(r.requestId ? { requestId: r.requestId } : {}),
    ...(r.data ? { data: r.data } : {}),
  };
}

/** A checkpoint with the calls and attempts of `count`. */
function withCounts(state: Checkpoint, count: StepCount): Checkpoint {
  return {
    ...state,
    calls: count.calls,
    attempts: count.attempts,
    ...(count.startedAt ? { startedAt: count.startedAt } : {}),
  };
}

/**
 * The requests the client makes on its own, for the tokens a call needs: when one fails, the call it was made for
 * never left, and a login or a token request acts on no device.
 */
const TOKEN_REQUESTS = new Set(['session.login', 'oauth.token']);

/** Sent, and no answer that says whether the service acted. */
export function unknownOutcome(e: unknown): boolean {
  if (e instanceof NetworkError) return e.sent && !TOKEN_REQUESTS.has(e.action);
  return e instanceof ApiError && e.status >= 500 && e.status !== 503 && !TOKEN_REQUESTS.has(e.action);
}

/** The error type and class a device gets from an error that failed its whole request. */
export function errorOf(e: unknown): Pick<DeviceResult, 'errorType' | 'errorClass'> {
  if (e instanceof ApiError) return { errorType: e.apiCode, errorClass: e.retryClass };
  if (e instanceof NetworkError) return ownType(unknownOutcome(e) ? 'OUTCOME UNKNOWN' : 'NETWORK');
  if (e instanceof FleetbookError) return { errorType: e.code, errorClass: e.retryClass };
  return ownType('ERROR');
}

/** Whether any of `selectors` (retry.on) matches an error. */
export function selects(selectors: string[], e: unknown): boolean {
  return selectors.some((s) => {
    if (s === 'retryable') return e instanceof FleetbookError && e.retryClass === 'retryable';
    if (s === 'network') return e instanceof NetworkError;
    if (s === 'timeout') return e instanceof StepError && e.selector.includes('timeout');
    if (e instanceof ApiError) {
      const m = /^http\.([45])xx$/.exec(s);
      if (m) return Math.floor(e.status / 100) === Number(m[1]);
      if (/^http\.[0-9]{3}$/.test(s)) return e.status === Number(s.slice(5));
      return e.apiCode === s;
    }
    return false;
  });
}

/** Counts in a step's summary the devices `c` counts by each means of confirmation. */
export function countConfirmation(sum: StepSummary, c: Confirmation): void {
  addConfirmation((sum.confirmation ??= { callback: 0, requestStatus: 0, stateRead: 0 }), c);
}

function addConfirmation(into: Confirmation, c: Confirmation): void {
  into.callback += c.callback;
  into.requestStatus += c.requestStatus;
  into.stateRead += c.stateRead;
}
