/**
 * The runner's interpreter: walks a playbook's compiled steps for one run, with their control flow, timeouts,
 * retries, checkpoints and limits. How an action is executed is its strategy's business (strategies/), chosen by
 * the action's catalog entry; the interpreter knows no operation by name. See src/runner/ARCHITECTURE.md.
 */
import { CATALOG } from '../api/catalog.js';
import { unsetSecrets } from '../config.js';
import { condition, render } from '../expressions/template.js';
import type { Playbook, Step } from '../playbook/schema.js';
import { versionOf } from '../playbook/version.js';
import { addCounts, emptyCounts, type RunSummary } from '../store/store.js';
import {
  RunContext,
  devicesOverTolerance,
  done,
  findsItems,
  IF_FALSE,
  itemsNotKnown,
  NEVER_REACHED,
  settle,
  skipped,
  type StepCount,
} from './context.js';
import { cancelReason, isCancel, withListeners } from './cancel.js';
import { coerceInputs } from './inputs.js';
import { RunLimits } from './limits.js';
import { planOf, stepsIn, type StepPlan } from './plan.js';
import { endedState } from './ended-state.js';
import { restoreStep } from './restore.js';
import { renderVars, runScope } from './run-scope.js';
import { secretsStillRead } from './resume-secrets.js';
import { attemptsWithTimeout } from './step-timeout.js';
import { jsonFits } from '../util/json-size.js';
import {
  Interrupted,
  LimitError,
  StepError,
  unfinished,
  type Checkpoint,
  type Json,
  type RunOptions,
  type Scope,
  type StepState,
} from './types.js';
import { begunCounts, resumable, skippedByIf, StepMarks } from './step-marks.js';
import { waitStep } from './wait.js';
import { fanOut } from './fan-out.js';
import { newRunId } from './run-id.js';
import { usesStep } from './uses.js';

export { actionsOf } from './plan.js';
export { countDevices, selects } from './context.js';
export * from './types.js';

/**
 * Who resumes an interrupted run (a stop, a lease lost), on each store: on PostgreSQL a replica at its next lease
 * renewal, the one that stopped having released its lease (or lost it); on a SQLite file, the one `serve`: at
 * its next start, or, beside a `fleetbook run` whose lease was lost, at its next renewal.
 */
const TAKEN_UP = {
  replicas:
    'a replica (`fleetbook serve`) on this database takes it up at its next lease renewal, within a third of FLEETBOOK_LEASE, or the next one to start',
  single:
    '`fleetbook serve` on this state file resumes it: at its next start, or at its next lease renewal (within a third of FLEETBOOK_LEASE) if one is running',
};

export async function runPlaybook(pb: Playbook, o: RunOptions): Promise<RunSummary> {
  // A run taken up goes on as it was created: a dry run stays one, whoever takes it up.
  const stored = o.stored ?? (o.runId ? await o.store.getRun(o.runId) : undefined);
  return new Run(pb, stored?.dryRun ? { ...o, stored, dryRun: true } : { ...o, stored }).execute();
}

class Run {
  private readonly ctx: RunContext;
  private readonly limits: RunLimits;
  private startedAt = '';
  /**
   * The signal of the steps, and of every step without a timeout: the run's own (or one that never aborts), not
   * one per step of a fan-out (every request of a step listens to it, and a fan-out has many in flight). In the
   * `finally` of a cancelled run, the run's stop.
   */
  private signal: AbortSignal;
  /** The marks of its steps' starts and skips (step-marks.ts). */
  private readonly marks: StepMarks;

  constructor(
    private readonly pb: Playbook,
    private readonly o: RunOptions,
  ) {
    this.ctx = new RunContext(o.runId ?? newRunId(), planOf(pb), o);
    this.limits = new RunLimits(this.ctx);
    this.marks = new StepMarks(o.store, this.ctx.id);
    this.signal = withListeners(o.signal ?? new AbortController().signal);
  }

  async execute(): Promise<RunSummary> {
    const { ctx, o } = this;
    const { store } = o;
    this.startedAt = ctx.now();
    let inputs: Json = {};
    let error: string | undefined;
    try {
      inputs = coerceInputs(this.pb, o.inputs ?? {});
    } catch (e) {
      error = (e as Error).message;
    }
    const { stored } = o;
    if (stored) {
      // Queued by the daemon, or interrupted (a crash): what earlier executions checkpointed is not done again.
      // A run still queued never executed, so it has no checkpoints.
      this.startedAt = stored.startedAt;
      if (stored.status !== 'queued') {
        const loaded = await store.loadSteps(ctx.id);
        ctx.checkpoints = resumable(loaded);
        ctx.begun = begunCounts(loaded);
        await this.limits.resume();
      }
      store.updateRun(ctx.id, { status: 'running' });
    } else {
      // The definition first: a run of a version is never stored without it (playbook/version.ts).
      const { version, definition } = versionOf(this.pb);
      await store.savePlaybookVersion(version, definition);
      store.createRun({
        id: ctx.id,
        playbook: this.pb.name,
        version,
        status: 'running',
        trigger: o.trigger ?? { type: 'manual' },
        inputs,
        startedAt: this.startedAt,
        ...(o.event !== undefined ? { event: o.event } : {}),
        ...(o.owner !== undefined ? { owner: o.owner } : {}),
        ...(o.dryRun ? { dryRun: true } : {}),
      });
    }
    // A secret not set would fail the run at the step that reads it, after the steps before it acted (a run
    // resumed or taken up by a process without it): it fails before its first step instead. Resumed, it needs
    // only those it can still read, not those of the steps it finished (resume-secrets.ts).
    const unset = unsetSecrets(secretsStillRead(ctx.plan, ctx.checkpoints), o.secrets ?? {});
    if (unset) error ??= `playbook ${this.pb.name} ${unset}`;
    ctx.log.info(ctx.checkpoints.size ? 'run resumed' : 'run started', {
      dryRun: Boolean(o.dryRun),
      ...(ctx.checkpoints.size ? { checkpoints: ctx.checkpoints.size } : {}),
    });
    // A dry run makes no mutating call: their checks are not needed.
    o.client.warm(ctx.plan.actions.filter((a) => !o.dryRun || !CATALOG[a].mutating));
    const scope = runScope(this.pb, o, ctx.id, inputs, this.startedAt);
    let cancelled = false;
    if (error === undefined) {
      try {
        scope.ctx.vars = renderVars(this.pb.vars ?? {}, scope.ctx);
        await this.steps(this.pb.steps, scope);
      } catch (e) {
        cancelled = this.signal.aborted;
        // A cancelled run says why it was cancelled, not how its step in flight ended.
        error = cancelled ? cancelReason(this.signal) : (e as Error).message;
      }
      if (cancelled) this.throwIfInterrupted();
      if (this.pb.finally) {
        // `finally` runs whatever happened. After a cancel, on a signal of its own, so that it can still act (resume
        // the devices the run suspended) until the run is stopped: the process stops, or the run is cancelled again.
        if (cancelled) this.signal = withListeners(o.stop ?? new AbortController().signal);
        // A step the run never reached reads as skipped, as one whose `if` was false: a finally step can ask.
        // A step that finds items (a listing) never looked: what it would have found is not known.
        for (const s of stepsIn(this.pb.steps))
          scope.ctx.steps[s.id] ??= findsItems(s)
            ? itemsNotKnown(skipped(NEVER_REACHED), s.id, `was skipped (${NEVER_REACHED})`)
            : skipped(NEVER_REACHED);
        scope.ctx.run = {
          ...(scope.ctx.run as Record<string, unknown>),
          status: error === undefined ? 'succeeded' : cancelled ? 'cancelled' : 'failed',
          error: error ?? '',
        };
        // Each runs whatever the ones before it did; the first error is the run's.
        for (const step of this.pb.finally) {
          try {
            await this.step(step, scope);
          } catch (e) {
            // Stopped (not cancelled) in `finally`: the run resumes, and its `finally` goes on from this step.
            if (this.signal.aborted) this.throwIfInterrupted();
            error ??= (e as Error).message;
            if (this.signal.aborted) break;
          }
        }
      }
    }
    const summary = this.summary(
      error === undefined ? 'succeeded' : cancelled ? 'cancelled' : 'failed',
      error,
    );
    store.updateRun(ctx.id, {
      status: summary.status,
      endedAt: summary.endedAt as string,
      summary,
      ...(error ? { error } : {}),
    });
    ctx.log.info('run ended', { status: summary.status, ...(error ? { error } : {}) });
    return summary;
  }

  /** Throws the signal's reason when it is an Interrupted (the process stops, its lease is lost): the run resumes. */
  private throwIfInterrupted(): void {
    const reason: unknown = this.signal.reason;
    if (!(reason instanceof Interrupted)) return;
    this.ctx.log.info(`run interrupted; ${this.o.store.replicas ? TAKEN_UP.replicas : TAKEN_UP.single}`);
    throw reason;
  }

  private summary(status: RunSummary['status'], error?: string): RunSummary {
    const devices = emptyCounts();
    const steps = [...this.ctx.summaries.values()];
    for (const s of steps) addCounts(devices, s.devices);
    return {
      runId: this.ctx.id,
      playbook: this.pb.name,
      version: versionOf(this.pb).version,
      status,
      startedAt: this.startedAt,
      endedAt: this.ctx.now(),
      ...(this.o.dryRun ? { dryRun: true, planned: [...this.ctx.planned.values()] } : {}),
      ...(error ? { error } : {}),
      steps,
      devices,
    };
  }

  // ── control flow ──────────────────────────────────────────────────────────────────────────────

  /** Whether a step's `if` holds: true or false, else an error that says what it gave or why it failed. */
  private holds(cond: string | boolean, scope: Scope): boolean {
    if (typeof cond === 'boolean') return cond;
    let value: unknown;
    try {
      value = render(cond, scope.ctx, scope.inLoop);
    } catch (e) {
      throw new StepError(`\`if\`: ${(e as Error).message}`);
    }
    return condition(value, '`if`');
  }

  private async steps(list: Step[], scope: Scope, evenIfCancelled = false): Promise<void> {
    for (const step of list) {
      if (!evenIfCancelled) (scope.signal ?? this.signal).throwIfAborted();
      await this.step(step, scope);
    }
  }

  private async step(step: Step, scope: Scope): Promise<void> {
    const { ctx } = this;
    const key = `${scope.key}${step.id}`;
    const sum = ctx.stepSummary(step.id);
    const cp = ctx.checkpoints.get(key);
    // An `if` that cannot be evaluated fails its step, as the step's own error would (rescue, onError).
    let unknowable: Error | undefined;
    let holds = true;
    try {
      // The checkpoint first: a step an earlier execution began (its `if` held then) goes on or stays as it
      // finished, and one it skipped by its `if` stays skipped; only a step with none evaluates its `if`.
      holds = cp ? !skippedByIf(cp) : step.if === undefined || this.holds(step.if, scope);
    } catch (e) {
      unknowable = e as Error;
    }
    if (!holds) {
      settle(sum, (scope.ctx.steps[step.id] = skipped(IF_FALSE)));
      if (!cp) this.marks.skippedByIf(key, step.id, scope.inLoop);
      this.logStep(scope, 'step skipped', { step: step.id, reason: IF_FALSE });
      return;
    }
    ctx.progress.step = step.id;
    const underWay = unfinished(cp);
    // A step taken up where a crash left it began then; one an earlier execution finished began and ended then.
    if (!scope.inLoop && cp?.startedAt) sum.startedAt ??= cp.startedAt;
    sum.startedAt ??= ctx.now();
    const endedBefore = !underWay && !scope.inLoop ? cp?.endedAt : undefined;
    // This execution's own calls and attempts: the other iterations of a fan-out count theirs meanwhile.
    const count = ctx.countOf(step.id, key);
    if (cp?.startedAt) count.startedAt = cp.startedAt;
    // An execution a crash stopped goes on (under way), or runs again (begun): the calls it made are this one's.
    count.resume(underWay ? cp : ctx.begun.get(key));
    // A step begun after its run was cancelled (a `finally` step) is cancelled only by the cancel's own error.
    const signal = scope.signal ?? this.signal;
    const abortedBefore = signal.aborted;
    let state: StepState;
    try {
      if (unknowable) throw unknowable;
      // A fan-out or parallel step is entered again: each inner step restores itself from its own checkpoint.
      if (cp && !underWay && !('forEach' in step) && !('parallel' in step)) {
        state = await restoreStep(ctx, step, scope, cp);
      } else {
        this.logStep(scope, 'step started', { step: step.id });
        if (!cp)
          this.marks.started(
            count,
            key,
            step.id,
            scope.inLoop,
            scope.inLoop ? ctx.now() : sum.startedAt,
            'forEach' in step,
          );
        const plan = ctx.plan.of(step);
        state = await attemptsWithTimeout(ctx, step, plan, signal, count, (timed) =>
          this.run(step, plan, scope, key, count, timed, underWay ? cp : undefined),
        );
      }
    } catch (e) {
      // Interrupted, not failed: no checkpoint, so that the step runs again when the run resumes.
      if (signal.aborted && signal.reason instanceof Interrupted) throw e;
      // Cancelled with its run, the step did not fail: it says so, and why.
      const cancelled = signal.aborted && (!abortedBefore || isCancel(e, signal));
      const status = cancelled ? 'cancelled' : 'failed';
      const message = cancelled ? cancelReason(signal) : e instanceof Error ? e.message : String(e);
      const restored = cp && !underWay ? cp : undefined;
      // The devices it recorded as it failed (the summary counted them then), or those its checkpoint kept.
      const devices = restored ? (restored.devices ?? emptyCounts()) : count.failing;
      scope.ctx.steps[step.id] = await endedState(ctx, step, scope, status, message, devices);
      // A failure restored from its checkpoint counts its devices again, as a finished step restored does.
      if (restored) addCounts(sum.devices, devices);
      sum.status = status;
      sum.error = message;
      sum.endedAt = endedBefore ?? ctx.now();
      if (!cancelled) ctx.progress.errors++;
      if (!cp || underWay) {
        this.o.store.saveStep(ctx.id, key, {
          status,
          error: message,
          ...(devices.total ? { devices } : {}),
          calls: count.calls,
          attempts: count.attempts,
          ...(count.confirmation ? { confirmation: count.confirmation } : {}),
          ...times(count, sum.endedAt, scope),
        } satisfies Checkpoint);
        if (cancelled) ctx.log.info('step cancelled', { step: step.id, reason: message });
        else ctx.stepFailed(step.id, e, message);
      }
      if (e instanceof LimitError || signal.aborted) throw e;
      return this.afterFailure(step, scope, message);
    }
    // A step whose devices failed beyond its tolerance fails, its devices recorded as for any other step.
    const over = 'uses' in step && !cp ? devicesOverTolerance(ctx.plan.of(step), state.devices) : undefined;
    if (over) {
      state.status = 'failed';
      state.error = over;
      ctx.progress.errors++;
    }
    scope.ctx.steps[step.id] = state;
    sum.endedAt = endedBefore ?? ctx.now();
    settle(sum, state);
    if (state.error) sum.error = state.error;
    // A forEach shows its body's devices to expressions; the body's own steps already count them.
    if (!('forEach' in step)) addCounts(sum.devices, state.devices);
    if (cp?.status === state.status) return;
    this.o.store.saveStep(
      ctx.id,
      key,
      {
        status: state.status,
        devices: state.devices,
        output: boundedOutput(state.output),
        ...(state.stored ? { storedItems: state.stored.size } : {}),
        calls: count.calls,
        attempts: count.attempts,
        ...(count.confirmation ? { confirmation: count.confirmation } : {}),
        ...(over ? { error: over } : {}),
        ...(state.reason ? { reason: state.reason } : {}),
        ...(state.note ? { note: state.note } : {}),
        ...(state.planned ? { planned: state.planned } : {}),
        ...times(count, sum.endedAt, scope),
      } satisfies Checkpoint,
      state.ledger ? { step: step.id, groups: state.ledger, at: ctx.now() } : undefined,
    );
    delete state.ledger;
    delete state.planned;
    this.logStep(scope, 'step ended', {
      step: step.id,
      status: state.status,
      ...(state.reason ? { reason: state.reason } : {}),
      ...(state.note ? { note: state.note } : {}),
      devices: state.devices,
    });
    if (over) {
      ctx.log.warn('step failed', { step: step.id, error: over });
      await this.afterFailure(step, scope, over);
    }
  }

  /** After a step failed: `onError: continue` goes on, rescue steps run, and otherwise the run fails. */
  private async afterFailure(step: Step, scope: Scope, message: string): Promise<void> {
    if (step.onError === 'continue') return;
    if (Array.isArray(step.onError)) {
      await this.steps(step.onError as Step[], scope);
      return;
    }
    throw new StepError(`step \`${step.id}\` failed: ${message}`);
  }

  /**
   * Where a step's start and end are logged: at info, but at debug inside a fan-out, whose thousands of
   * iterations would otherwise log two lines each; the fan-out reports its progress itself (forEach).
   */
  private logStep(scope: Scope, message: string, meta: Json): void {
    if (scope.inLoop) this.ctx.log.debug(message, meta);
    else this.ctx.log.info(message, meta);
  }

  private async run(
    step: Step,
    plan: StepPlan,
    scope: Scope,
    key: string,
    count: StepCount,
    signal: AbortSignal,
    resumed?: Checkpoint,
  ): Promise<StepState> {
    if ('uses' in step)
      return usesStep(this.ctx, this.limits, step, plan, scope, key, count, signal, resumed);
    // The steps inside stop with this one (its timeout, the run's cancel).
    if ('forEach' in step)
      return fanOut(this.ctx, step, scope, (steps, child) => this.steps(steps, child), signal);
    if ('parallel' in step) {
      // Every branch settles before the step ends: a failed branch must not end the run under the others.
      const inner = { ...scope, signal };
      const settled = await Promise.allSettled(step.parallel.map((s) => this.step(s as Step, inner)));
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
    if ('wait' in step) {
      // A dry run sent none of the calls a wait waits on the effect of: it would wait out its time, and an event
      // wait would fail at its timeout where the real run goes on. It is planned, and the walk goes on.
      if (this.o.dryRun) return { status: 'planned', output: null, items: [], devices: emptyCounts() };
      return waitStep(this.ctx, step, plan, scope, signal, count, key, resumed);
    }
    throw new StepError('unknown step kind');
  }
}

// ── helpers ─────────────────────────────────────────────────────────────────────────────────────

/**
 * The times a step's checkpoint keeps (Checkpoint.startedAt): when its execution `count` began it, if it marked its
 * start, and, outside any loop, when it ended (`endedAt`).
 */
function times(
  count: StepCount,
  endedAt: string | undefined,
  scope: Scope,
): Pick<Checkpoint, 'startedAt' | 'endedAt'> {
  if (!count.startedAt) return {};
  return { startedAt: count.startedAt, ...(endedAt && !scope.inLoop ? { endedAt } : {}) };
}

/** The largest step output a checkpoint keeps (characters of JSON). */
export const OUTPUT_LIMIT = 256 * 1024;

/**
 * A step output kept in a checkpoint only when it is small; large ones live in the ledger. Measured without
 * writing it: the output of a listing of a million records is never made one string.
 */
function boundedOutput(output: unknown): unknown {
  return jsonFits(output ?? null, OUTPUT_LIMIT) ? output : { truncated: true, largerThan: OUTPUT_LIMIT };
}
