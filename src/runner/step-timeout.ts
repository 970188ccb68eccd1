/**
 * A step's timeout, per attempt, and its retries after a timeout (`retry.on: [timeout]`): what the interpreter
 * (runner.ts) runs each step under.
 */
import type { Step } from '../playbook/schema.js';
import { retrying } from '../retry.js';
import { linkedController } from '../util/linked-abort.js';
import { withListeners } from './cancel.js';
import { selects, type RunContext, type StepCount } from './context.js';
import type { StepPlan } from './plan.js';
import { StepError } from './types.js';

/**
 * Runs the step (`run`) with its timeout per attempt: `retry.on: [timeout]` tries it again after a timeout. A
 * mutating action that timed out may have acted, so it is not tried again blindly.
 */
export async function attemptsWithTimeout<T>(
  ctx: RunContext,
  step: Step,
  plan: StepPlan,
  parent: AbortSignal,
  count: StepCount,
  run: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const mutating = Boolean(plan.op?.mutating);
  const attempt = () => withTimeout(step, plan, parent, run);
  const { value } = await retrying(attempt, {
    maxAttempts: plan.retry.maxAttempts,
    retryable: (e) =>
      e instanceof StepError && e.selector.includes('timeout') && !mutating && selects(plan.retry.on, e),
    delay: (attempt) => ctx.delay(plan.retry, attempt),
    sleep: (ms) => ctx.clock.sleep(ms, parent),
    onRetry: () => count.attempt(),
  });
  return value;
}

/**
 * Runs `fn` under `parent`, or under a signal of its own that the step's timeout aborts: then the step ends with
 * the timeout once `fn`, stopped, has ended, so that nothing of the step acts or writes after it has failed.
 */
async function withTimeout<T>(
  step: Step,
  plan: StepPlan,
  parent: AbortSignal,
  fn: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const ms = plan.timeoutMs;
  if (ms === undefined) return fn(parent);
  const timer = linkedController(parent);
  let timedOut!: (e: Error) => void;
  const timeout = new Promise<never>((_, reject) => (timedOut = reject));
  const t = setTimeout(() => {
    const e = new StepError(`timed out after ${step.timeout}`, ['timeout']);
    timer.controller.abort(e);
    timedOut(e);
  }, ms);
  const work = fn(withListeners(timer.controller.signal));
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(t);
    if (timer.controller.signal.aborted) await work.catch(() => undefined);
    timer.unlink();
  }
}
