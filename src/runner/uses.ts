/**
 * An action step (`uses:`) made ready for what executes it: the interpreter (runner.ts) hands it here, and it
 * goes to its strategy (strategies/), or to the engine for an engine action.
 */
import { isAction } from '../api/catalog.js';
import { hasEffect } from '../actions/engine.js';
import { checkEngineInput, checkEnginePlan } from '../actions/executors.js';
import { render } from '../expressions/template.js';
import { noDevices, skipped, type RunContext, type StepCount } from './context.js';
import { devicesOf, idsOf, OUTCOME_UNKNOWN, withResult } from './devices.js';
import { planOnly } from './dry-run.js';
import type { RunLimits } from './limits.js';
import type { StepPlan } from './plan.js';
import { engineAction } from './strategies/engine.js';
import { reconciles, strategyOf, type UsesStep } from './strategies/index.js';
import { StepError, type Checkpoint, type Json, type Scope, type StepState } from './types.js';

/**
 * A `uses:` step: its input rendered, its limits checked, its devices locked; then its strategy executes it.
 * A mutating call is preceded by a `sending` checkpoint, so that a crash before its answer is recorded leaves
 * a known unknown. A dry run plans the calls it would make instead.
 */
export async function usesStep(
  ctx: RunContext,
  limits: RunLimits,
  step: UsesStep,
  plan: StepPlan,
  scope: Scope,
  key: string,
  count: StepCount,
  signal: AbortSignal,
  resumed?: Checkpoint,
): Promise<StepState> {
  const { o } = ctx;
  const action = step.uses;
  const input = render(step.with ?? {}, scope.ctx, scope.inLoop) as Json;
  const op = plan.op;
  if (!op || !isAction(action)) {
    // Checked once, before the first attempt, dry or real: an input that is wrong stays wrong (FB_INPUT).
    const checked = checkEngineInput(action, input);
    if (o.dryRun && hasEffect(action)) {
      // Refused as the real run refuses it, before it acts: a dry run fails where that run would.
      await checkEnginePlan(checked, o.engine, ctx.hostLookups);
      return planOnly(ctx, step.id, action, 1, { groups: [], size: 0 });
    }
    return engineAction(ctx, step, plan, checked, signal, count, key);
  }
  // A listing's items taken whole come from the store, a batch at a time; a dry run shows them all.
  let source = plan.streamsFrom ? scope.ctx.steps[plan.streamsFrom]?.stored : undefined;
  if (source && o.dryRun) {
    input.deviceList = await source.all();
    source = undefined;
  }
  // Given no devices (a listing or ledger.query that found none), an action that needs some sends nothing.
  const member = op.needsDevices;
  const list = member === undefined ? undefined : input[member];
  if (member !== undefined && (source ? !source.size : Array.isArray(list) && !list.length))
    return skipped(noDevices(member));
  const devices = devicesOf(op, input);
  let release: (() => void) | undefined;
  /** Whether another holder had some of the devices: it may have changed them meanwhile. */
  let contended = false;
  if (op.mutating) {
    await limits.check(count, step.limits, devices, input);
    if (o.dryRun) {
      // The client's check of what it would send (FB_INPUT): the real run fails here, before any call.
      o.client.prepare(op, input);
      const calls = op.batchSize ? Math.max(1, Math.ceil(devices.size / op.batchSize)) : 1;
      return planOnly(ctx, step.id, action, calls, devices, op);
    }
    if (resumed?.status === 'sending' && !reconciles(op) && !op.retrySafe) {
      // Its devices' latest entry says what is known: the request may have reached the service (one send).
      if (devices.size) ctx.recordFailing(count, withResult(devices, { ...OUTCOME_UNKNOWN, attempts: 1 }));
      throw new StepError(
        `${action} was sent before fleetbook stopped and its answer was never recorded; its outcome is unknown, so it is not sent again`,
      );
    }
    if (resumed?.status === 'sending')
      ctx.log.warn('resuming a call whose outcome is unknown', { step: step.id, action });
    if (o.locks && devices.size && !op.onlyReadsDevices)
      release = await o.locks.acquire(idsOf(devices), signal, () => (contended = true));
    // Accepted requests are confirmed, and created reports read, not sent again: their checkpoint stays.
    if (resumed?.status !== 'confirming' && resumed?.status !== 'reporting')
      ctx.saveUnderWay(count, key, { status: 'sending', since: ctx.clock.now() });
  }
  try {
    return await strategyOf(op)({
      ctx,
      step,
      plan,
      op,
      action,
      input,
      devices,
      ...(source ? { source } : {}),
      scope,
      key,
      count,
      signal,
      resumed,
      contended,
    });
  } finally {
    release?.();
  }
}
