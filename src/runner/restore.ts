/**
 * A step an earlier execution of its run finished, brought back from its checkpoint when the run resumes: the
 * interpreter (runner.ts) does not run it again.
 */
import { render } from '../expressions/template.js';
import type { Step } from '../playbook/schema.js';
import { emptyCounts, type StepStatus } from '../store/store.js';
import { countConfirmation, type RunContext } from './context.js';
import { addPlanned } from './dry-run.js';
import { StoredItems } from './stored-items.js';
import { StepError, type Checkpoint, type Scope, type StepState } from './types.js';

/**
 * A step an earlier execution of this run finished: its state comes back from the checkpoint (and its
 * items from it or from the ledger), and it is not run again. A failure comes back as the same failure.
 */
export async function restoreStep(
  ctx: RunContext,
  step: Step,
  scope: Scope,
  cp: Checkpoint,
): Promise<StepState> {
  const sum = ctx.stepSummary(step.id);
  sum.calls += cp.calls ?? 0;
  sum.attempts += cp.attempts ?? 0;
  if (cp.confirmation) countConfirmation(sum, cp.confirmation);
  // A dry run's planned step: its calls count in the summary's `planned` as when it ran (planOnly).
  if (cp.planned) addPlanned(ctx, step.id, cp.planned);
  if (cp.status === 'failed' || cp.status === 'cancelled') throw new StepError(cp.error ?? cp.status);
  if ('set' in step) {
    // Variables are not checkpointed: a `set` is evaluated again, from the same restored context.
    for (const [k, v] of Object.entries(step.set)) scope.ctx.vars[k] = render(v, scope.ctx, scope.inLoop);
  }
  const key = `${scope.key}${step.id}`;
  const stored =
    cp.storedItems === undefined ? undefined : new StoredItems(ctx.o.store, ctx.id, key, cp.storedItems);
  const items = !ctx.keeps(step.id, 'items')
    ? []
    : stored
      ? await stored.all()
      : (cp.items ??
        cp.itemRuns?.flatMap(([kind, ids]) => ids.map((id) => ({ id, kind }))) ??
        (!scope.inLoop ? await ctx.ledgerItems(step.id) : []));
  return {
    status: cp.status as StepStatus,
    output: cp.output ?? null,
    items,
    ...(stored ? { stored } : {}),
    devices: cp.devices ?? emptyCounts(),
    ...(cp.reason ? { reason: cp.reason } : {}),
    ...(cp.note ? { note: cp.note } : {}),
  };
}
