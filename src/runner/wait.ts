/**
 * A `wait:` step: a plain duration, or an event wait that ends with the first matching callback (the daemon's
 * EventSource) or, with `poll`, the first polled answer that satisfies `until`, or fails at its timeout.
 */
import { render, selectsEvent, truthy } from '../expressions/template.js';
import type { Step } from '../playbook/schema.js';
import { emptyCounts } from '../store/store.js';
import { done, type RunContext } from './context.js';
import type { StepPlan } from './plan.js';
import { StepError, type Json, type Scope, type StepState } from './types.js';

export async function waitStep(
  ctx: RunContext,
  step: Extract<Step, { wait: unknown }>,
  plan: StepPlan,
  scope: Scope,
  signal: AbortSignal,
): Promise<StepState> {
  const w = step.wait;
  const timeoutMs = plan.waitMs ?? 0;
  if (typeof w === 'string') {
    await ctx.clock.sleep(timeoutMs, signal);
    return done(null);
  }
  const deadline = ctx.clock.now() + timeoutMs;
  const stop = new AbortController();
  const both = AbortSignal.any([signal, stop.signal]);
  const match = (event: unknown) =>
    w.event.match === undefined || selectsEvent(w.event.match, { ...scope.ctx, event }, scope.inLoop);
  const waiters: Promise<unknown>[] = [];
  if (ctx.o.events) waiters.push(ctx.o.events.wait(w.event.service, match, both));
  if (w.poll) {
    const poll = w.poll;
    waiters.push(
      (async () => {
        const interval = plan.pollMs ?? ctx.o.pollIntervalMs ?? 5000;
        for (;;) {
          const input = render(poll.with ?? {}, scope.ctx, scope.inLoop) as Json;
          const output = await ctx.call(step.id, poll.uses, input, both);
          scope.ctx.steps[step.id] = { status: 'running', output, items: [], devices: emptyCounts() };
          // In `until`, `event` is the polled call's response.
          if (truthy(render(poll.until, { ...scope.ctx, event: output }, scope.inLoop))) return output;
          if (ctx.clock.now() + interval > deadline)
            throw new StepError(`timed out after ${w.timeout}`, ['timeout']);
          await ctx.clock.sleep(interval, both);
        }
      })(),
    );
  }
  waiters.push(
    ctx.clock.sleep(timeoutMs, both).then(() => {
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
