/**
 * A `forEach:` step: its items (or batches of them) through its inner steps, `concurrency` at a time; each
 * iteration's checkpoints under its own key, what its inner steps did over the iterations shown after the loop
 * (after-loop.ts), and the share of failed iterations held to `toleratedFailurePercent`.
 */
import type { Step } from '../playbook/schema.js';
import { given, render } from '../expressions/template.js';
import { AfterLoop } from './after-loop.js';
import { overTolerance, skipped, type RunContext } from './context.js';
import { Interrupted, LimitError, StepError, type Scope, type StepState } from './types.js';

/** The reason of a forEach over no item. */
export const NO_ITEMS = 'no items: `forEach.items` is an empty list, no iteration ran';

export async function fanOut(
  ctx: RunContext,
  step: Extract<Step, { forEach: unknown }>,
  scope: Scope,
  runSteps: (steps: Step[], scope: Scope) => Promise<void>,
  signal: AbortSignal,
): Promise<StepState> {
  const fe = step.forEach;
  const items = render(fe.items, scope.ctx, scope.inLoop);
  if (!Array.isArray(items))
    throw new StepError(
      `forEach.items${typeof fe.items === 'string' ? ` ${fe.items}` : ''} gave ${given(items)}, not a list: a forEach iterates a list`,
    );
  const units: unknown[] = [];
  if (fe.batchSize)
    for (let i = 0; i < items.length; i += fe.batchSize) units.push(items.slice(i, i + fe.batchSize));
  else units.push(...items);
  // Over no item, nothing runs: said so, its output (no iteration) there still for the expressions that read it.
  /** What each inner step did over the iterations: after the loop, `steps.<inner>` shows it (after-loop.ts). */
  const after = new AfterLoop(ctx, step);
  if (!units.length) {
    await after.settle(scope, 0);
    return skipped(NO_ITEMS, { iterations: 0, failed: 0 });
  }
  const devices = after.devices;
  let failed = 0;
  /**
   * What ends the whole fan-out (a limit passed, the run cancelled): no iteration starts after it, and those
   * under way end first, so that nothing of the run acts, or writes its ledger, after the run has ended.
   */
  let fatal: { error: unknown } | undefined;
  let next = 0;
  let finished = 0;
  let reported = 0;
  const worker = async () => {
    while (!fatal && next < units.length) {
      const index = next++;
      const child: Scope = {
        ctx: { ...scope.ctx, steps: { ...scope.ctx.steps }, item: units[index], index },
        inLoop: true,
        key: `${scope.key}${step.id}[${index}]/`,
        signal,
      };
      try {
        await runSteps(fe.steps as Step[], child);
      } catch (e) {
        if (e instanceof LimitError || signal.aborted) {
          fatal ??= { error: e };
          // What its steps did (the devices a limit kept back) is part of what they did over the loop.
          after.add(index, child, scope);
          return;
        }
        failed++;
      }
      after.add(index, child, scope);
      // A line at each tenth of the iterations: the progress of a long fan-out, off a terminal too.
      const tenth = Math.floor((++finished * 10) / units.length);
      if (tenth > reported) {
        reported = tenth;
        ctx.log.info('fan-out progress', {
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
  for (let w = 0; w < Math.min(fe.concurrency ?? 1, units.length || 1); w++) {
    if (w) await new Promise(setImmediate);
    // A limit or a cancellation already met: no more workers are started.
    if (fatal) break;
    workers.push(worker());
  }
  await Promise.all(workers);
  // Ended by a limit or a cancel, the inner steps are what they did so far (a `finally` step may read them);
  // interrupted, the run stops here and resumes later.
  if (!fatal || !(signal.reason instanceof Interrupted)) await after.settle(scope, units.length);
  if (fatal) throw fatal.error;
  const output = { iterations: units.length, failed };
  const over = overTolerance(failed, units.length, 'iterations failed', fe.toleratedFailurePercent ?? 0);
  if (over) throw new StepError(over);
  // The inner steps' devices are already in their own summaries; the forEach reports them for expressions only.
  return {
    status: 'succeeded',
    output,
    items: [],
    devices: { ...devices, byError: { ...devices.byError } },
    ...(failed ? { error: `${failed} iteration(s) failed` } : {}),
  };
}
