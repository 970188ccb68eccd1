/** An engine action (log, notify.webhook, report.write, ledger.query): run in-process, with the step's retries. */
import { runEngineAction } from '../../actions/executors.js';
import type { Step } from '../../playbook/schema.js';
import { done, type RunContext, type StepCount } from '../context.js';
import type { StepPlan } from '../plan.js';
import type { Json, StepState } from '../types.js';

export async function engineAction(
  ctx: RunContext,
  step: Extract<Step, { uses: unknown }>,
  plan: StepPlan,
  input: Json,
  signal: AbortSignal,
  count: StepCount,
): Promise<StepState> {
  // A webhook or a report leaves the process: what the run wrote before it is committed first.
  await ctx.o.store.durable();
  const { value } = await ctx.retrying(count, plan.retry, { retrySafe: true }, signal, () =>
    runEngineAction(step.uses, input, {
      store: ctx.o.store,
      runId: ctx.id,
      playbook: ctx.plan.playbook.name,
      logger: ctx.log,
      clock: ctx.clock,
      ledger: (stepId) => ctx.o.store.eachDeviceResult(ctx.id, stepId),
      signal,
      settings: ctx.o.engine,
    }),
  );
  return done(value);
}
