/**
 * The runner: walks a playbook's steps for one run, with their control flow, retries and per-device policy,
 * records every device outcome in the ledger, and checkpoints after each step and each fan-out batch.
 * See src/runner/ARCHITECTURE.md.
 */
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { CATALOG, isAction, type ActionName, type Operation } from '../api/catalog.js';
import type { ApiClient } from '../api/client.js';
import { MAX_REPORT_DEVICES } from '../api/limits.js';
import { systemClock, type Clock } from '../clock.js';
import { ApiError, FleetbookError, NetworkError } from '../errors.js';
import { render, selectsEvent, truthy } from '../expressions/template.js';
import { silentLogger, type Logger } from '../log.js';
import { parseDuration } from '../playbook/duration.js';
import type { Playbook, Step } from '../playbook/schema.js';
import { fullJitter } from '../rate/backoff.js';
import type {
  DeviceCounts,
  DeviceGroup,
  DeviceResult,
  RunRecord,
  RunSummary,
  StepStatus,
  StepSummary,
  Store,
} from '../store/store.js';
import { emptyCounts } from '../store/store.js';
import { readAhead } from '../util/read-ahead.js';
import { hasEffect } from '../actions/engine.js';
import { runEngineAction } from '../actions/executors.js';
import type { EngineSettings } from '../actions/settings.js';
import {
  appliedFilter,
  devicesOf,
  groupResults,
  identifiersOf,
  idsOf,
  locationResult,
  refsOf,
  resultsOf,
  subset,
  withDevices,
  withResult,
  type DeviceSet,
} from './devices.js';

type Json = Record<string, unknown>;

/** Waits for callback events (the daemon provides one; `fleetbook run` has none, so waits fall back to polling). */
export interface EventSource {
  wait(service: string, match: (event: unknown) => boolean, signal: AbortSignal): Promise<unknown>;
}

/**
 * Per-device locks shared by every run of a process: two runs never mutate the same device at once. A run
 * holds the locks of one step's devices while it sends that step's calls, and takes them all at once, so no
 * two runs can wait on each other.
 */
export interface DeviceLocks {
  acquire(ids: readonly string[], signal?: AbortSignal): Promise<() => void>;
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
  logger?: Logger;
  /** Inputs as given (`--input k=v` strings are coerced to the declared types). */
  inputs?: Record<string, unknown>;
  event?: unknown;
  trigger?: Json;
  /** Make the read-only calls, none of the mutating ones, and report what they would have done. */
  dryRun?: boolean;
  runId?: string;
  secrets?: Record<string, string>;
  env?: Record<string, string>;
  /** Polling interval of report status and poll fallbacks when the step does not set one. @default 5000 */
  pollIntervalMs?: number;
  events?: EventSource;
  onProgress?: (p: Progress) => void;
  signal?: AbortSignal;
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

interface StepState {
  status: StepStatus;
  output: unknown;
  items: unknown[];
  devices: DeviceCounts;
  error?: string;
  /** Device results to write with the step's checkpoint. */
  ledger?: DeviceGroup[];
  /** A listing's `items` as its checkpoint keeps them, built page by page as they came. */
  itemRuns?: ItemRuns;
}

type ItemRuns = [kind: string, ids: string[]][];

/** What a step's checkpoint holds. `sending`: a mutating call was sent and its answer is not yet recorded. */
interface Checkpoint {
  status: StepStatus | 'sending';
  output?: unknown;
  /**
   * The items of a step that writes no ledger rows (a `devices.list`), when an expression reads them: a resumed
   * run must fan out over the same list, not an empty one nor a fresh listing that the run itself has changed.
   */
  items?: unknown[];
  /** A listing's items (each a `{ id, kind }`) as runs of one kind: half the size, and faster to write. */
  itemRuns?: ItemRuns;
  devices?: DeviceCounts;
  error?: string;
  calls?: number;
  attempts?: number;
}

interface Scope {
  ctx: Json & { steps: Record<string, StepState>; vars: Json };
  inLoop: boolean;
  key: string;
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

function addCounts(into: DeviceCounts, c: DeviceCounts): void {
  into.total += c.total;
  into.succeeded += c.succeeded;
  into.failed += c.failed;
  into.skipped += c.skipped;
  for (const [k, v] of Object.entries(c.byError)) into.byError[k] = (into.byError[k] ?? 0) + v;
}

/** Turns `--input k=v` strings into the declared types, applies defaults, and refuses unknown or missing inputs. */
export function coerceInputs(pb: Playbook, given: Record<string, unknown>): Json {
  const decls = pb.inputs ?? {};
  const out: Json = {};
  for (const k of Object.keys(given)) {
    if (!(k in decls))
      throw new StepError(`unknown input \`${k}\` (declared: ${Object.keys(decls).join(', ') || 'none'})`);
  }
  for (const [name, decl] of Object.entries(decls)) {
    let v = given[name];
    if (v === undefined) {
      if (decl.default !== undefined) v = decl.default;
      else if (decl.required) throw new StepError(`input \`${name}\` is required`);
      else continue;
    }
    if (typeof v === 'string' && decl.type !== 'string') {
      try {
        if (decl.type === 'integer' || decl.type === 'number') {
          const n = v.trim() === '' ? NaN : Number(v);
          if (!Number.isFinite(n)) throw new Error('not a number');
          v = n;
        } else v = JSON.parse(v);
      } catch {
        throw new StepError(`input \`${name}\` is not valid ${decl.type}: ${JSON.stringify(v)}`);
      }
    }
    const ok =
      (decl.type === 'string' && typeof v === 'string') ||
      (decl.type === 'integer' && Number.isInteger(v)) ||
      (decl.type === 'number' && typeof v === 'number' && Number.isFinite(v)) ||
      (decl.type === 'boolean' && typeof v === 'boolean') ||
      (decl.type === 'array' && Array.isArray(v)) ||
      (decl.type === 'object' && v !== null && typeof v === 'object' && !Array.isArray(v));
    if (!ok) throw new StepError(`input \`${name}\` must be of type ${decl.type}, got ${JSON.stringify(v)}`);
    if (decl.enum && !decl.enum.some((e) => JSON.stringify(e) === JSON.stringify(v))) {
      throw new StepError(
        `input \`${name}\` must be one of ${decl.enum.map((e) => JSON.stringify(e)).join(', ')}`,
      );
    }
    out[name] = v;
  }
  return out;
}

export async function runPlaybook(pb: Playbook, o: RunOptions): Promise<RunSummary> {
  return new Run(pb, o).execute();
}

class Run {
  private readonly id: string;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly summaries = new Map<string, StepSummary>();
  private readonly planned = new Map<
    string,
    { step: string; action: string; calls: number; devices: number }
  >();
  private readonly mutated = new Set<string>();
  private readonly fleet = new Map<string, number>();
  private readonly progress: Progress = { devicesDone: 0, devicesTotal: 0, calls: 0, errors: 0, step: '' };
  private startedAt = '';
  /** Checkpoints of an earlier execution of this run (a resumed run), by step key. */
  private checkpoints = new Map<string, Checkpoint>();
  /** What expressions read of each step: `output`, `items`, or `*` for anything. */
  private readonly referenced: Map<string, Set<string>>;
  /**
   * The signal of every step without a timeout: the run's own (or one that never aborts), made once, not once
   * per step of a fan-out. Every request of a step listens to it, and a fan-out has many in flight.
   */
  private readonly runSignal: AbortSignal;

  constructor(
    private readonly pb: Playbook,
    private readonly o: RunOptions,
  ) {
    this.id = o.runId ?? randomUUID();
    this.clock = o.clock ?? systemClock;
    this.log = (o.logger ?? silentLogger).child({ runId: this.id, playbook: pb.name });
    this.referenced = referencedMembers(pb);
    this.runSignal = withListeners(o.signal ? AbortSignal.any([o.signal]) : new AbortController().signal);
  }

  /** Whether any expression reads `steps.<id>.<member>`: a large output no one reads is not kept. */
  private keeps(stepId: string, member: 'output' | 'items'): boolean {
    const m = this.referenced.get(stepId);
    return Boolean(m && (m.has('*') || m.has(member)));
  }

  async execute(): Promise<RunSummary> {
    this.startedAt = new Date(this.clock.now()).toISOString();
    const { store } = this.o;
    let inputs: Json = {};
    let error: string | undefined;
    try {
      inputs = coerceInputs(this.pb, this.o.inputs ?? {});
    } catch (e) {
      error = (e as Error).message;
    }
    const stored = this.o.stored ?? (this.o.runId ? store.getRun(this.o.runId) : undefined);
    if (stored) {
      // Queued by the daemon, or interrupted (a crash): what earlier executions checkpointed is not done again.
      // A run still queued never executed, so it has no checkpoints.
      this.startedAt = stored.startedAt;
      if (stored.status !== 'queued') this.checkpoints = store.loadSteps(this.id) as Map<string, Checkpoint>;
      store.updateRun(this.id, { status: 'running' });
    } else {
      store.createRun({
        id: this.id,
        playbook: this.pb.name,
        status: 'running',
        trigger: this.o.trigger ?? { type: 'manual' },
        inputs,
        startedAt: this.startedAt,
        ...(this.o.event !== undefined ? { event: this.o.event } : {}),
        ...(this.o.owner !== undefined ? { owner: this.o.owner } : {}),
      });
    }
    this.log.info(this.checkpoints.size ? 'run resumed' : 'run started', {
      dryRun: Boolean(this.o.dryRun),
      ...(this.checkpoints.size ? { checkpoints: this.checkpoints.size } : {}),
    });
    // A dry run makes no mutating call: their checks are not needed.
    this.o.client.warm(
      actionsOf(this.pb).filter((a) => !this.o.dryRun || !(CATALOG[a] as Operation).mutating),
    );
    const scope: Scope = {
      ctx: {
        event: this.o.event ?? {},
        inputs,
        vars: {},
        steps: {},
        run: {
          id: this.id,
          playbook: this.pb.name,
          startedAt: this.startedAt,
          date: this.startedAt.slice(0, 10),
          dryRun: Boolean(this.o.dryRun),
        },
        secrets: this.o.secrets ?? {},
        env: this.o.env ?? {},
      },
      inLoop: false,
      key: '',
    };
    let cancelled = false;
    if (error === undefined) {
      try {
        scope.ctx.vars = render(this.pb.vars ?? {}, scope.ctx) as Json;
        await this.steps(this.pb.steps, scope);
      } catch (e) {
        error = (e as Error).message;
        cancelled = Boolean(this.o.signal?.aborted);
      }
      const reason: unknown = this.o.signal?.reason;
      if (cancelled && reason instanceof Interrupted) {
        this.log.info('run interrupted; it resumes at the next start');
        throw reason;
      }
      if (this.pb.finally) {
        try {
          // `finally` runs whatever happened, a cancellation included.
          await this.steps(this.pb.finally, scope, true);
        } catch (e) {
          error ??= (e as Error).message;
        }
      }
    }
    const summary = this.summary(
      error === undefined ? 'succeeded' : cancelled ? 'cancelled' : 'failed',
      error,
    );
    store.updateRun(this.id, {
      status: summary.status,
      endedAt: summary.endedAt as string,
      summary,
      ...(error ? { error } : {}),
    });
    this.log.info('run ended', { status: summary.status, ...(error ? { error } : {}) });
    return summary;
  }

  private summary(status: RunSummary['status'], error?: string): RunSummary {
    const devices = emptyCounts();
    const steps = [...this.summaries.values()];
    for (const s of steps) addCounts(devices, s.devices);
    return {
      runId: this.id,
      playbook: this.pb.name,
      status,
      startedAt: this.startedAt,
      endedAt: new Date(this.clock.now()).toISOString(),
      ...(this.o.dryRun ? { dryRun: true, planned: [...this.planned.values()] } : {}),
      ...(error ? { error } : {}),
      steps,
      devices,
    };
  }

  // ── control flow ──────────────────────────────────────────────────────────────────────────────

  private async steps(list: Step[], scope: Scope, evenIfCancelled = false): Promise<void> {
    for (const step of list) {
      if (!evenIfCancelled) this.o.signal?.throwIfAborted();
      await this.step(step, scope);
    }
  }

  private async step(step: Step, scope: Scope): Promise<void> {
    const key = `${scope.key}${step.id}`;
    const sum = this.stepSummary(step.id);
    if (
      step.if !== undefined &&
      !truthy(step.if === true || step.if === false ? step.if : render(step.if, scope.ctx, scope.inLoop))
    ) {
      scope.ctx.steps[step.id] = { status: 'skipped', output: null, items: [], devices: emptyCounts() };
      if (sum.status === 'running') sum.status = 'skipped';
      return;
    }
    this.progress.step = step.id;
    const before = { calls: sum.calls, attempts: sum.attempts };
    const cp = this.checkpoints.get(key);
    let state: StepState;
    try {
      // A fan-out or parallel step is entered again: each inner step restores itself from its own checkpoint.
      if (cp && cp.status !== 'sending' && !('forEach' in step) && !('parallel' in step)) {
        state = this.restore(step, scope, cp);
      } else {
        this.logStep(scope, 'step started', { step: step.id });
        state = await this.attemptsWithTimeout(step, scope);
      }
    } catch (e) {
      // Interrupted, not failed: no checkpoint, so that the step runs again when the run resumes.
      if (this.o.signal?.aborted && this.o.signal.reason instanceof Interrupted) throw e;
      const message = errorMessage(e);
      const failed: StepState = {
        status: 'failed',
        output: null,
        items: [],
        devices: emptyCounts(),
        error: message,
      };
      scope.ctx.steps[step.id] = failed;
      sum.status = 'failed';
      sum.error = message;
      this.progress.errors++;
      if (!cp || cp.status === 'sending') {
        this.o.store.saveStep(this.id, key, {
          status: 'failed',
          error: message,
          calls: sum.calls - before.calls,
          attempts: sum.attempts - before.attempts,
        } satisfies Checkpoint);
        this.log.warn('step failed', { step: step.id, error: message });
      }
      if (e instanceof LimitError || this.o.signal?.aborted) throw e;
      if (step.onError === 'continue') return;
      if (Array.isArray(step.onError)) {
        await this.steps(step.onError as Step[], scope);
        return;
      }
      throw new StepError(`step \`${step.id}\` failed: ${message}`);
    }
    scope.ctx.steps[step.id] = state;
    if (sum.status !== 'failed') sum.status = state.status;
    if (state.error) sum.error = state.error;
    // A forEach shows its body's devices to expressions; the body's own steps already count them.
    if (!('forEach' in step)) addCounts(sum.devices, state.devices);
    if (cp?.status === state.status) return;
    const at = new Date(this.clock.now()).toISOString();
    this.o.store.saveStep(
      this.id,
      key,
      {
        status: state.status,
        devices: state.devices,
        output: boundedOutput(state.output),
        ...(!state.ledger && state.items.length && this.keeps(step.id, 'items')
          ? state.itemRuns
            ? { itemRuns: state.itemRuns }
            : { items: state.items }
          : {}),
        calls: sum.calls - before.calls,
        attempts: sum.attempts - before.attempts,
      } satisfies Checkpoint,
      state.ledger ? { step: step.id, groups: state.ledger, at } : undefined,
    );
    delete state.ledger;
    this.logStep(scope, 'step ended', { step: step.id, status: state.status, devices: state.devices });
  }

  /**
   * Where a step's start and end are logged: at info, but at debug inside a fan-out, whose thousands of
   * iterations would otherwise log two lines each; the fan-out reports its progress itself (forEach).
   */
  private logStep(scope: Scope, message: string, meta: Json): void {
    if (scope.inLoop) this.log.debug(message, meta);
    else this.log.info(message, meta);
  }

  /**
   * A step an earlier execution of this run finished: its state comes back from the checkpoint (and its
   * items from it or from the ledger), and it is not run again. A failure comes back as the same failure.
   */
  private restore(step: Step, scope: Scope, cp: Checkpoint): StepState {
    const sum = this.stepSummary(step.id);
    sum.calls += cp.calls ?? 0;
    sum.attempts += cp.attempts ?? 0;
    if (cp.status === 'failed') throw new StepError(cp.error ?? 'failed');
    if ('set' in step) {
      // Variables are not checkpointed: a `set` is evaluated again, from the same restored context.
      for (const [k, v] of Object.entries(step.set)) scope.ctx.vars[k] = render(v, scope.ctx, scope.inLoop);
    }
    const items =
      cp.items ??
      cp.itemRuns?.flatMap(([kind, ids]) => ids.map((id) => ({ id, kind }))) ??
      (!scope.inLoop && this.keeps(step.id, 'items')
        ? this.o.store.deviceResults(this.id, step.id).map(item)
        : []);
    return {
      status: cp.status as StepStatus,
      output: cp.output ?? null,
      items,
      devices: cp.devices ?? emptyCounts(),
    };
  }

  private stepSummary(id: string): StepSummary {
    let s = this.summaries.get(id);
    if (!s) {
      s = { id, status: 'running', attempts: 0, calls: 0, devices: emptyCounts() };
      this.summaries.set(id, s);
    }
    return s;
  }

  /**
   * Runs the step with its timeout per attempt: `retry.on: [timeout]` tries it again after a timeout. A
   * mutating action that timed out may have acted, so it is not tried again blindly.
   */
  private async attemptsWithTimeout(step: Step, scope: Scope): Promise<StepState> {
    const policy = retryPolicy(step);
    const mutating = 'uses' in step && isAction(step.uses) && (CATALOG[step.uses] as Operation).mutating;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.withTimeout(step, (signal) => this.run(step, scope, signal));
      } catch (e) {
        const timedOut = e instanceof StepError && e.selector.includes('timeout');
        if (!timedOut || mutating || attempt >= policy.maxAttempts || !selects(policy.on, e)) throw e;
        this.stepSummary(step.id).attempts++;
        await this.clock.sleep(policy.delay(attempt), this.o.signal);
      }
    }
  }

  private async withTimeout<T>(step: Step, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const ms = step.timeout ? parseDuration(step.timeout) : undefined;
    if (ms === undefined) return fn(this.runSignal);
    const timer = new AbortController();
    const t = setTimeout(
      () => timer.abort(new StepError(`timed out after ${step.timeout}`, ['timeout'])),
      ms,
    );
    try {
      return await Promise.race([
        fn(withListeners(AbortSignal.any([this.runSignal, timer.signal]))),
        new Promise<never>((_, reject) =>
          timer.signal.addEventListener('abort', () => reject(timer.signal.reason as Error), { once: true }),
        ),
      ]);
    } finally {
      clearTimeout(t);
    }
  }

  private async run(step: Step, scope: Scope, signal: AbortSignal): Promise<StepState> {
    if ('uses' in step) return this.uses(step, scope, signal);
    if ('forEach' in step) return this.forEach(step, scope);
    if ('parallel' in step) {
      // Every branch settles before the step ends: a failed branch must not end the run under the others.
      const settled = await Promise.allSettled(step.parallel.map((s) => this.step(s as Step, scope)));
      const failed = settled.find((r) => r.status === 'rejected');
      if (failed) throw failed.reason;
      return done(null);
    }
    if ('set' in step) {
      for (const [k, v] of Object.entries(step.set)) scope.ctx.vars[k] = render(v, scope.ctx, scope.inLoop);
      return done(null);
    }
    if ('fail' in step) {
      const msg = typeof step.fail === 'string' ? step.fail : step.fail.message;
      throw new StepError(String(render(msg, scope.ctx, scope.inLoop)));
    }
    if ('wait' in step) return this.wait(step, scope, signal);
    throw new StepError('unknown step kind');
  }

  private async forEach(step: Extract<Step, { forEach: unknown }>, scope: Scope): Promise<StepState> {
    const fe = step.forEach;
    const items = render(fe.items, scope.ctx, scope.inLoop);
    if (!Array.isArray(items)) throw new StepError(`forEach.items must be a list, got ${typeof items}`);
    const units: unknown[] = [];
    if (fe.batchSize)
      for (let i = 0; i < items.length; i += fe.batchSize) units.push(items.slice(i, i + fe.batchSize));
    else units.push(...items);
    const devices = emptyCounts();
    /** Device totals of each inner step over every iteration: after the loop, `steps.<inner>` shows them. */
    const inner = new Map<string, DeviceCounts>();
    let failed = 0;
    let next = 0;
    let finished = 0;
    let reported = 0;
    const worker = async () => {
      while (next < units.length) {
        const index = next++;
        const child: Scope = {
          ctx: { ...scope.ctx, steps: { ...scope.ctx.steps }, item: units[index], index },
          inLoop: true,
          key: `${scope.key}${step.id}[${index}]/`,
        };
        try {
          await this.steps(fe.steps as Step[], child);
        } catch (e) {
          if (e instanceof LimitError || this.o.signal?.aborted) throw e;
          failed++;
        }
        for (const s of fe.steps as Step[]) {
          const st = child.ctx.steps[s.id];
          if (st && st !== scope.ctx.steps[s.id]) {
            addCounts(devices, st.devices);
            const total = inner.get(s.id) ?? emptyCounts();
            addCounts(total, st.devices);
            inner.set(s.id, total);
          }
        }
        // A line at each tenth of the iterations: the progress of a long fan-out, off a terminal too.
        const tenth = Math.floor((++finished * 10) / units.length);
        if (tenth > reported) {
          reported = tenth;
          this.log.info('fan-out progress', {
            step: step.id,
            iterations: finished,
            of: units.length,
            failed,
            devices: devices.total,
          });
        }
      }
    };
    // Each worker starts once the one before has handed its first call on, so that the first request is on its
    // way while the next is prepared, not after every worker has prepared one.
    const workers: Promise<void>[] = [];
    let stopped = false;
    for (let w = 0; w < Math.min(fe.concurrency ?? 1, units.length || 1); w++) {
      if (w) await new Promise(setImmediate);
      // A worker already stopped by a limit or a cancellation: no more are started.
      if (stopped) break;
      const started = worker();
      // Met by Promise.all below; until then, not an unhandled rejection.
      started.catch(() => (stopped = true));
      workers.push(started);
    }
    await Promise.all(workers);
    for (const [id, totals] of inner)
      scope.ctx.steps[id] = { status: 'succeeded', output: null, items: [], devices: totals };
    const percent = units.length ? (failed / units.length) * 100 : 0;
    const output = { iterations: units.length, failed };
    if (percent > (fe.toleratedFailurePercent ?? 0)) {
      throw new StepError(
        `${failed} of ${units.length} iterations failed (${percent.toFixed(1)} %, tolerated ${fe.toleratedFailurePercent ?? 0} %)`,
      );
    }
    // The inner steps' devices are already in their own summaries; the forEach reports them for expressions only.
    return {
      status: 'succeeded',
      output,
      items: [],
      devices: { ...devices, byError: { ...devices.byError } },
      ...(failed ? { error: `${failed} iteration(s) failed` } : {}),
    };
  }

  private async wait(
    step: Extract<Step, { wait: unknown }>,
    scope: Scope,
    signal: AbortSignal,
  ): Promise<StepState> {
    const w = step.wait;
    if (typeof w === 'string') {
      await this.clock.sleep(parseDuration(w) ?? 0, signal);
      return done(null);
    }
    const timeoutMs = parseDuration(w.timeout) ?? 0;
    const deadline = this.clock.now() + timeoutMs;
    const stop = new AbortController();
    const both = AbortSignal.any([signal, stop.signal]);
    const match = (event: unknown) =>
      w.event.match === undefined || selectsEvent(w.event.match, { ...scope.ctx, event }, scope.inLoop);
    const waiters: Promise<unknown>[] = [];
    if (this.o.events) waiters.push(this.o.events.wait(w.event.service, match, both));
    if (w.poll) {
      const poll = w.poll;
      waiters.push(
        (async () => {
          const interval =
            (poll.interval ? parseDuration(poll.interval) : undefined) ?? this.o.pollIntervalMs ?? 5000;
          for (;;) {
            const input = render(poll.with ?? {}, scope.ctx, scope.inLoop) as Json;
            const output = await this.callAction(step.id, poll.uses, input, both);
            scope.ctx.steps[step.id] = { status: 'running', output, items: [], devices: emptyCounts() };
            // In `until`, `event` is the polled call's response.
            if (truthy(render(poll.until, { ...scope.ctx, event: output }, scope.inLoop))) return output;
            if (this.clock.now() + interval > deadline)
              throw new StepError(`timed out after ${w.timeout}`, ['timeout']);
            await this.clock.sleep(interval, both);
          }
        })(),
      );
    }
    waiters.push(
      this.clock.sleep(timeoutMs, both).then(() => {
        throw new StepError(`no ${w.event.service} event within ${w.timeout}`, ['timeout']);
      }),
    );
    try {
      return done(await Promise.race(waiters));
    } finally {
      stop.abort(new StepError('wait ended'));
      await Promise.allSettled(waiters);
    }
  }

  // ── actions ───────────────────────────────────────────────────────────────────────────────────

  /** A dry run's step that would act: counted in the summary's `planned`, its devices `skipped` (DRY RUN). */
  private plan(stepId: string, action: string, calls: number, devices: DeviceSet): StepState {
    const p = this.planned.get(stepId) ?? { step: stepId, action, calls: 0, devices: 0 };
    p.calls += calls;
    p.devices += devices.size;
    this.planned.set(stepId, p);
    const groups = withResult(devices, { outcome: 'skipped', errorType: 'DRY RUN', attempts: 0 });
    return {
      status: 'planned',
      output: null,
      items: resultsOf(groups).map(item),
      devices: { ...countDevices(groups), byError: {} },
    };
  }

  private async uses(
    step: Extract<Step, { uses: unknown }>,
    scope: Scope,
    signal: AbortSignal,
  ): Promise<StepState> {
    const action = step.uses;
    const input = render(step.with ?? {}, scope.ctx, scope.inLoop) as Json;
    if (!isAction(action)) {
      if (this.o.dryRun && hasEffect(action)) return this.plan(step.id, action, 1, { groups: [], size: 0 });
      const engine = { retrySafe: true } as Operation;
      const { value } = await this.retrying(step, engine, signal, () =>
        runEngineAction(action, input, {
          store: this.o.store,
          runId: this.id,
          playbook: this.pb.name,
          logger: this.log,
          clock: this.clock,
          ledger: (stepId) => this.o.store.deviceResults(this.id, stepId),
          signal,
          settings: this.o.engine,
        }),
      );
      return done(value);
    }
    const op: Operation = CATALOG[action];
    const devices = devicesOf(action, input);
    if (op.mutating) {
      await this.checkLimits(step, devices, input);
      if (this.o.dryRun) {
        const calls =
          action === 'location.createReport' ? Math.max(1, Math.ceil(devices.size / MAX_REPORT_DEVICES)) : 1;
        return this.plan(step.id, action, calls, devices);
      }
    }
    const deviceState = Boolean(appliedFilter(action, input) && devices.size);
    let release: (() => void) | undefined;
    let unknown = false;
    if (op.mutating) {
      const key = `${scope.key}${step.id}`;
      unknown = this.checkpoints.get(key)?.status === 'sending';
      if (unknown && !deviceState && !op.retrySafe && action !== 'location.createReport') {
        throw new StepError(
          `${action} was sent before fleetbook stopped and its answer was never recorded; its outcome is unknown, so it is not sent again`,
        );
      }
      if (unknown) this.log.warn('resuming a call whose outcome is unknown', { step: step.id, action });
      if (this.o.locks && devices.size && !op.onlyReadsDevices)
        release = await this.o.locks.acquire(idsOf(devices), signal);
      // Written before the call: a crash before its answer is recorded leaves a known unknown.
      this.o.store.saveStep(this.id, key, { status: 'sending' } satisfies Checkpoint);
    }
    try {
      if (action === 'location.createReport' || action === 'location.locate')
        return await this.locationStep(step, scope, input, devices, signal);
      if (deviceState) return await this.deviceStateStep(step, input, devices, signal, unknown);
      if (action === 'devices.list') return await this.listDevices(step, input, signal);
      const { value, attempts } = await this.retrying(step, op, signal, () =>
        this.callAction(step.id, action, input, signal),
      );
      if (devices.size)
        return this.finishDevices(step.id, value, withResult(devices, { outcome: 'succeeded', attempts }));
      return done(value);
    } finally {
      release?.();
    }
  }

  /**
   * Lists devices page by page into compact items (`{ id, kind }` of the filter's kind, else the first
   * identifier), which location and connectivity steps take as they are. The full records are kept as the
   * output only when an expression reads `steps.<id>.output`: 100,000 of them are large.
   */
  private async listDevices(
    step: Extract<Step, { uses: unknown }>,
    input: Json,
    signal: AbortSignal,
  ): Promise<StepState> {
    const filter = (input.filter ?? {}) as Json;
    const kind = typeof filter.kind === 'string' ? filter.kind.toLowerCase() : undefined;
    const keepOutput = this.keeps(step.id, 'output');
    const records: unknown[] = [];
    const items: Json[] = [];
    // The checkpoint's form of the items, built as they come rather than in one pass at the end.
    const runs: ItemRuns = [];
    const sum = this.stepSummary(step.id);
    // The next page is requested before this one is taken apart.
    for await (const page of readAhead(this.o.client.pages('devices.list', input, { signal }))) {
      sum.calls++;
      this.progress.calls++;
      const devices = ((page as Json).devices as Json[] | undefined) ?? [];
      takePage(devices, kind, items, runs);
      if (keepOutput) records.push(...devices);
    }
    // Counted when it completes, as every other call is; a timed-out attempt is counted by the timeout loop.
    sum.attempts++;
    const output = keepOutput ? { devices: records } : { count: items.length };
    return { status: 'succeeded', output, items, itemRuns: runs, devices: emptyCounts() };
  }

  /** One logical API call, counted for the step and the progress line. */
  private async callAction(
    stepId: string,
    action: string,
    input: Json,
    signal?: AbortSignal,
  ): Promise<unknown> {
    this.stepSummary(stepId).calls++;
    this.progress.calls++;
    this.report();
    return this.o.client.callByName(action, input, signal ? { signal } : {});
  }

  /** Step-level retry of a whole call, for errors its `retry.on` selects. */
  private async retrying<T>(
    step: Step,
    op: Operation,
    signal: AbortSignal,
    fn: () => Promise<T>,
  ): Promise<{ value: T; attempts: number }> {
    const policy = retryPolicy(step);
    const sum = this.stepSummary(step.id);
    for (let attempt = 1; ; attempt++) {
      // Every attempt counts in the step's summary, those of a step that fails in the end too.
      sum.attempts++;
      try {
        return { value: await fn(), attempts: attempt };
      } catch (e) {
        // A call that may have acted is never repeated blindly (see deviceStateStep for reconciliation).
        const unknown = unknownOutcome(e) && !op.retrySafe;
        if (unknown || attempt >= policy.maxAttempts || !selects(policy.on, e)) throw e;
        await this.clock.sleep(policy.delay(attempt), signal);
      }
    }
  }

  /**
   * A device-state action (suspend, restore, activate, deactivate, plan change). An answer lost after the
   * service may have acted is reconciled by reading which devices are already in the target state; only the
   * others are sent again, so no device is changed twice.
   */
  private async deviceStateStep(
    step: Extract<Step, { uses: unknown }>,
    input: Json,
    devices: DeviceSet,
    signal: AbortSignal,
    /** An earlier execution sent this call and stopped before its answer: reconcile before sending. */
    unknown = false,
  ): Promise<StepState> {
    const action = step.uses;
    const policy = retryPolicy(step);
    // `devices` names each device once; `results` gets the devices' results as they are known.
    let remaining = devices;
    const results: DeviceGroup[] = [];
    const succeeded = (ds: DeviceSet, attempts: number) => {
      results.push(...withResult(ds, { outcome: 'succeeded', attempts }));
    };
    /** Moves the devices the service already applied the action to out of `remaining`. */
    const settle = async (attempts: number): Promise<number> => {
      const applied = await this.reconcile(step.id, action, input, new Set(idsOf(remaining)), signal);
      succeeded(subset(remaining, applied, true), attempts);
      remaining = subset(remaining, applied, false);
      return applied.size;
    };
    let output: unknown = null;
    let lastError: unknown;
    if (unknown) {
      const applied = await settle(1);
      this.log.info('reconciled after a restart', {
        step: step.id,
        applied,
        remaining: remaining.size,
      });
    }
    for (let attempt = 1; remaining.size; attempt++) {
      try {
        // The input as it is while every device it names is still to do (the first attempt, usually).
        const sending =
          remaining.size === devices.size ? input : withDevices(input, new Set(idsOf(remaining)));
        output = await this.callAction(step.id, action, sending, signal);
        succeeded(remaining, attempt);
        remaining = { groups: [], size: 0 };
        lastError = undefined;
        break;
      } catch (e) {
        lastError = e;
        if (unknownOutcome(e)) {
          const applied = await settle(attempt);
          this.log.info('reconciled an unknown outcome', {
            step: step.id,
            applied,
            remaining: remaining.size,
          });
          if (!remaining.size) {
            lastError = undefined;
            break;
          }
        }
        if (attempt >= policy.maxAttempts || !selects(policy.on, e)) break;
        await this.clock.sleep(policy.delay(attempt), signal);
      }
    }
    this.stepSummary(step.id).attempts += 1;
    if (remaining.size)
      results.push(
        ...withResult(remaining, {
          outcome: 'failed',
          ...errorOf(lastError),
          attempts: policy.maxAttempts,
        }),
      );
    const state = this.finishDevices(step.id, output, results);
    if (lastError !== undefined) {
      this.recordLedger(step.id, results);
      // The step fails, but its devices were touched: the summary counts them as the ledger does.
      addCounts(this.stepSummary(step.id).devices, state.devices);
      throw lastError;
    }
    return state;
  }

  private async reconcile(
    stepId: string,
    action: string,
    input: Json,
    ids: Set<string>,
    signal: AbortSignal,
  ): Promise<Set<string>> {
    const filter = appliedFilter(action, input);
    const applied = new Set<string>();
    this.stepSummary(stepId).calls++;
    // The largest pages, and no further than the last device looked for: a daemon restarted in a loop
    // reconciles up to `concurrency` batches at each start, and the listing grows with every device done.
    for await (const record of this.o.client.items(
      'devices.list',
      { accountName: input.accountName, filter, maxNumberOfDevices: 2000 },
      { signal },
    )) {
      for (const id of identifiersOf(record as Json)) if (ids.has(id)) applied.add(id);
      if (applied.size === ids.size) break;
    }
    return applied;
  }

  /**
   * Locate and location reports, with the per-device policy: devices that failed with the types a
   * `devices.retry` rule names are sent again, alone, with the rule's arguments, up to its attempts.
   */
  private async locationStep(
    step: Extract<Step, { uses: unknown }>,
    scope: Scope,
    input: Json,
    devices: DeviceSet,
    signal: AbortSignal,
  ): Promise<StepState> {
    const byMsid = new Map(refsOf(devices).map((d) => [d.id, d]));
    const results = new Map<string, DeviceResult>();
    const policy = step.devices ?? {};
    const pass = async (passInput: Json, attempt: number): Promise<unknown> => {
      const { value } = await this.retrying(
        step,
        CATALOG[step.uses as 'location.locate'],
        signal,
        async () => {
          return this.callAction(step.id, step.uses, passInput, signal);
        },
      );
      if (step.uses === 'location.locate') {
        for (const e of value as Json[]) {
          const r = locationResult(e, byMsid, attempt);
          results.set(r.deviceId, r);
        }
        return value;
      }
      const created = value as { reports: Json[] };
      if (!step.wait && !step.devices) {
        for (const d of refsOf(devicesOf(step.uses, passInput)))
          results.set(d.id, { deviceId: d.id, kind: d.kind, outcome: 'succeeded', attempts: attempt });
        return created;
      }
      await this.awaitReports(step, String(passInput.accountName), created.reports, signal);
      for (const r of created.reports) {
        // Each page's results go to the ledger while the next page is already on its way.
        const pages = this.o.client.pages(
          'location.getReport',
          { accountName: passInput.accountName, txid: r.txid },
          { signal },
        );
        for await (const page of readAhead(pages)) {
          this.stepSummary(step.id).calls++;
          const rows: DeviceResult[] = [];
          for (const e of ((page as Json).devLocationList as Json[] | undefined) ?? []) {
            const res = locationResult(e, byMsid, attempt);
            results.set(res.deviceId, res);
            rows.push(res);
          }
          this.recordLedger(step.id, groupResults(rows));
        }
      }
      return created;
    };
    let output = await pass(input, 1);
    for (const rule of policy.retry ?? []) {
      const types = new Set(rule.on);
      for (let attempt = 2; attempt <= (rule.maxAttempts ?? 2); attempt++) {
        const again = [...results.values()].filter(
          (r) => r.outcome === 'failed' && r.errorType && types.has(r.errorType),
        );
        if (!again.length) break;
        if (rule.delay) await this.clock.sleep(parseDuration(rule.delay) ?? 0, signal);
        const overrides = render(rule.with ?? {}, scope.ctx, scope.inLoop) as Json;
        this.log.info('retrying devices', { step: step.id, devices: again.length, on: rule.on, attempt });
        output = await pass(
          { ...withDevices(input, new Set(again.map((r) => r.deviceId))), ...overrides },
          attempt,
        );
      }
    }
    const ignore = new Set(policy.ignore ?? []);
    const changed: DeviceResult[] = [];
    for (const r of results.values()) {
      if (r.outcome === 'failed' && r.errorType && ignore.has(r.errorType)) {
        r.outcome = 'skipped';
        changed.push(r);
      }
    }
    // Report results are already in the ledger, page by page; only what the policy changed is written again.
    const reported = step.uses === 'location.createReport' && Boolean(step.wait || step.devices);
    const all = [...results.values()];
    // `results` holds each device once.
    const state = this.finishDevices(step.id, output, groupResults(all, true), all);
    if (reported) state.ledger = groupResults(changed, true);
    return state;
  }

  /** Polls each report's status until COMPLETED, or the step's wait timeout. */
  private async awaitReports(
    step: Extract<Step, { uses: unknown }>,
    accountName: string,
    reports: Json[],
    signal: AbortSignal,
  ): Promise<void> {
    const timeoutMs = (step.wait?.timeout ? parseDuration(step.wait.timeout) : undefined) ?? 2 * 3_600_000;
    const interval =
      (step.wait?.pollInterval ? parseDuration(step.wait.pollInterval) : undefined) ??
      this.o.pollIntervalMs ??
      5000;
    const deadline = this.clock.now() + timeoutMs;
    for (const r of reports) {
      let status = String(r.status);
      while (status !== 'COMPLETED') {
        if (this.clock.now() + interval > deadline)
          throw new StepError(`report ${String(r.txid)} not completed within ${step.wait?.timeout ?? '2h'}`, [
            'timeout',
          ]);
        await this.clock.sleep(interval, signal);
        const s = (await this.callAction(
          step.id,
          'location.getReportStatus',
          { accountName, txid: r.txid },
          signal,
        )) as Json;
        status = String(s.status);
      }
    }
  }

  /** `results`, when given, are `groups` device by device in the order they came, for the step's items. */
  private finishDevices(
    stepId: string,
    output: unknown,
    groups: DeviceGroup[],
    results?: DeviceResult[],
  ): StepState {
    const counts = countDevices(groups);
    this.progress.devicesDone += counts.total;
    this.progress.devicesTotal = Math.max(this.progress.devicesTotal, this.progress.devicesDone);
    this.progress.errors += counts.failed;
    this.report();
    const items = this.keeps(stepId, 'items') ? (results ?? resultsOf(groups)).map(item) : [];
    return { status: 'succeeded', output, items, devices: counts, ledger: groups };
  }

  private recordLedger(stepId: string, groups: DeviceGroup[]): void {
    if (groups.length)
      this.o.store.recordDevices(this.id, stepId, groups, new Date(this.clock.now()).toISOString());
  }

  private report(): void {
    this.o.onProgress?.({ ...this.progress });
  }

  // ── limits ────────────────────────────────────────────────────────────────────────────────────

  /** Stops the run before a mutating call that would take it past `limits` (playbook or step). */
  private async checkLimits(
    step: Extract<Step, { uses: unknown }>,
    devices: DeviceSet,
    input: Json,
  ): Promise<void> {
    const limits = [this.pb.limits, step.limits].filter((l): l is NonNullable<typeof l> => Boolean(l));
    if (!limits.length || !devices.size) return;
    const ids = idsOf(devices);
    const after = new Set(this.mutated);
    for (const id of ids) after.add(id);
    for (const l of limits) {
      if (l.maxDevices !== undefined && after.size > l.maxDevices) {
        throw new LimitError(
          `limits.maxDevices is ${l.maxDevices}: step \`${step.id}\` would bring this run to ${after.size} devices; nothing was sent`,
        );
      }
      if (l.maxPercentOfFleet !== undefined && typeof input.accountName === 'string') {
        const fleet = await this.fleetSize(input.accountName);
        const pct = fleet ? (after.size / fleet) * 100 : 100;
        if (pct > l.maxPercentOfFleet) {
          throw new LimitError(
            `limits.maxPercentOfFleet is ${l.maxPercentOfFleet} %: step \`${step.id}\` would bring this run to ${after.size} of the ${fleet} devices of ${input.accountName} (${pct.toFixed(1)} %); nothing was sent`,
          );
        }
      }
    }
    for (const id of ids) this.mutated.add(id);
  }

  private async fleetSize(accountName: string): Promise<number> {
    let n = this.fleet.get(accountName);
    if (n === undefined) {
      n = 0;
      for await (const _ of this.o.client.items('devices.list', { accountName })) n++;
      this.fleet.set(accountName, n);
    }
    return n;
  }
}

// ── helpers ─────────────────────────────────────────────────────────────────────────────────────

/**
 * A listing page's devices as items (`{ id, kind }`: the identifier of the filter's `kind`, else the first),
 * appended to `items`, and to `runs` as the checkpoint keeps them. A function of its own, small, so that the
 * per-device loop is optimised alone, not with the whole listing step around it.
 */
function takePage(devices: Json[], kind: string | undefined, items: Json[], runs: ItemRuns): void {
  for (const d of devices) {
    const ids = (d.deviceIds as Json[] | undefined) ?? [];
    // The identifier of the filter's kind, else the first; the kind as the filter spells it, shared.
    let pick = ids[0];
    let pickKind: string | undefined;
    if (kind !== undefined) {
      for (const x of ids) {
        if (x.kind === kind || String(x.kind).toLowerCase() === kind) {
          pick = x;
          pickKind = kind;
          break;
        }
      }
    }
    const it = { id: String(pick?.id), kind: pickKind ?? String(pick?.kind).toLowerCase() };
    items.push(it);
    const run = runs[runs.length - 1];
    if (run?.[0] === it.kind) run[1].push(it.id);
    else runs.push([it.kind, [it.id]]);
  }
}

function done(output: unknown): StepState {
  return { status: 'succeeded', output, items: [], devices: emptyCounts() };
}

function item(r: DeviceResult): Json {
  return {
    id: r.deviceId,
    kind: r.kind,
    outcome: r.outcome,
    ...(r.errorType ? { error: r.errorType, errorClass: r.errorClass } : {}),
    attempts: r.attempts,
  };
}

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Sent, and no answer that says whether the service acted. */
function unknownOutcome(e: unknown): boolean {
  if (e instanceof NetworkError) return e.sent;
  return e instanceof ApiError && e.status >= 500 && e.status !== 503;
}

function errorOf(e: unknown): Pick<DeviceResult, 'errorType' | 'errorClass'> {
  if (e instanceof ApiError) return { errorType: e.apiCode, errorClass: e.retryClass };
  if (e instanceof NetworkError)
    return { errorType: e.sent ? 'OUTCOME UNKNOWN' : 'NETWORK', errorClass: 'retryable' };
  if (e instanceof FleetbookError) return { errorType: e.code, errorClass: e.retryClass };
  return { errorType: 'ERROR', errorClass: 'permanent' };
}

interface RetryPolicy {
  on: string[];
  maxAttempts: number;
  delay(attempt: number): number;
}

function retryPolicy(step: Step): RetryPolicy {
  const r = step.retry;
  const base = (r?.delay ? parseDuration(r.delay) : undefined) ?? 1000;
  const cap = (r?.maxDelay ? parseDuration(r.maxDelay) : undefined) ?? 60_000;
  return {
    on: r?.on ?? ['retryable'],
    maxAttempts: r ? (r.maxAttempts ?? 3) : 1,
    delay: (attempt) => {
      if (r?.backoff === 'fixed') return r.jitter === 'full' ? Math.floor(Math.random() * base) : base;
      const o = { baseDelayMs: base, maxDelayMs: cap };
      return r?.jitter === 'none' ? Math.min(cap, base * 2 ** (attempt - 1)) : fullJitter(attempt - 1, o);
    },
  };
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

/** A step output kept in a checkpoint only when it is small; large ones live in the ledger. */
function boundedOutput(output: unknown): unknown {
  const text = JSON.stringify(output ?? null);
  return text.length <= 256 * 1024 ? output : { truncated: true, bytes: text.length };
}

/** For each step id, the members expressions read: `steps.x.output` gives output; `steps.x` alone, `*`. */
function referencedMembers(pb: Playbook): Map<string, Set<string>> {
  const refs = new Map<string, Set<string>>();
  const add = (id: string, member: string) => refs.set(id, (refs.get(id) ?? new Set()).add(member));
  const visit = (v: unknown): void => {
    if (typeof v === 'string') {
      if (!v.includes('${{')) return;
      for (const m of v.matchAll(/\bsteps\s*\.\s*([A-Za-z_]\w*)(\s*\.\s*([A-Za-z_]\w*))?/g)) {
        const member = m[3];
        add(m[1] as string, member === 'output' || member === 'items' ? member : member ? 'other' : '*');
      }
      for (const m of v.matchAll(/\bsteps\s*\[\s*["']([^"']+)["']/g)) add(m[1] as string, '*');
    } else if (Array.isArray(v)) v.forEach(visit);
    else if (v && typeof v === 'object') Object.values(v).forEach(visit);
  };
  visit(pb);
  return refs;
}

/** The API actions a playbook's steps and polls use, each once, in order. */
export function actionsOf(pb: Playbook): ActionName[] {
  const found = new Set<ActionName>();
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(visit);
    else if (v && typeof v === 'object') {
      const uses = (v as Json).uses;
      if (typeof uses === 'string' && isAction(uses)) found.add(uses);
      Object.values(v).forEach(visit);
    }
  };
  visit([pb.steps, pb.finally]);
  return [...found];
}

function withListeners(signal: AbortSignal): AbortSignal {
  setMaxListeners(0, signal);
  return signal;
}
