/**
 * A `wait:` step: a plain duration, or an event wait that ends with the first matching callback (the daemon's
 * EventSource) or, with `poll`, the first polled answer that satisfies `until`, or fails at its timeout. Its
 * deadline is checkpointed as it begins (`waiting`), with where the stored events stood: a run resumed after a
 * restart waits until then, not a whole wait again, and takes an event that came while it was not waiting.
 */
import { pollProblem } from '../actions/selectors.js';
import { condition, render, selectsEvent } from '../expressions/template.js';
import type { Playbook, Step } from '../playbook/schema.js';
import { emptyCounts } from '../store/store.js';
import { linkedController } from '../util/linked-abort.js';
import { done, type RunContext, type StepCount } from './context.js';
import { stepsIn, type StepPlan } from './plan.js';
import { StepError, type Checkpoint, type Json, type Scope, type StepState } from './types.js';

export async function waitStep(
  ctx: RunContext,
  step: Extract<Step, { wait: unknown }>,
  plan: StepPlan,
  scope: Scope,
  signal: AbortSignal,
  count: StepCount,
  key: string,
  resumed?: Checkpoint,
): Promise<StepState> {
  const w = step.wait;
  // Nothing could end such a wait but its timeout, hours later maybe: said now, before it begins.
  if (typeof w !== 'string' && !w.poll && !ctx.o.events) throw new StepError(unreachable(w.event.service));
  let deadline = resumed?.status === 'waiting' ? resumed.until : undefined;
  let after = resumed?.status === 'waiting' ? resumed.after : undefined;
  if (deadline === undefined) {
    deadline = ctx.clock.now() + (plan.waitMs ?? 0);
    // Where the events stood as the wait began: resumed after a restart, it takes one that came meanwhile.
    if (typeof w !== 'string') after = await ctx.o.events?.position?.();
    const checkpoint: Checkpoint = {
      status: 'waiting',
      until: deadline,
      ...(after !== undefined ? { after } : {}),
    };
    ctx.saveUnderWay(count, key, checkpoint);
  }
  if (typeof w === 'string') {
    await sleepLogged(ctx, step.id, scope, deadline, { for: w }, signal);
    return done(null);
  }
  const stop = linkedController(signal);
  const both = stop.controller.signal;
  const match = (event: unknown) =>
    w.event.match === undefined || selectsEvent(w.event.match, { ...scope.ctx, event }, scope.inLoop);
  const waiters: Promise<unknown>[] = [];
  if (ctx.o.events) waiters.push(ctx.o.events.wait(w.event.service, match, both, after));
  if (w.poll) {
    const poll = w.poll;
    // `validate` refuses such a poll; a playbook that bypassed it is stopped before its first call.
    const problem = pollProblem(poll.uses);
    if (problem) throw new StepError(problem);
    waiters.push(
      (async () => {
        const interval = pollMs(ctx, plan);
        for (;;) {
          const input = render(poll.with ?? {}, scope.ctx, scope.inLoop) as Json;
          const output = await ctx.call(count, poll.uses, input, both);
          scope.ctx.steps[step.id] = { status: 'running', output, items: [], devices: emptyCounts() };
          // In `until`, `event` is the polled call's response.
          if (condition(render(poll.until, { ...scope.ctx, event: output }, scope.inLoop), '`until`'))
            return output;
          if (ctx.clock.now() + interval > deadline)
            throw new StepError(`timed out after ${w.timeout}`, ['timeout']);
          await ctx.clock.sleep(interval, both);
        }
      })(),
    );
  }
  const what = {
    for: `a ${w.event.service} event`,
    ...(w.event.match !== undefined ? { match: w.event.match } : {}),
    ...(w.poll ? { poll: `${w.poll.uses} every ${w.poll.interval ?? `${pollMs(ctx, plan) / 1000}s`}` } : {}),
  };
  waiters.push(
    sleepLogged(ctx, step.id, scope, deadline, what, both).then(() => {
      throw new StepError(`no ${w.event.service} event within ${w.timeout}`, ['timeout']);
    }),
  );
  try {
    return done(await Promise.race(waiters));
  } finally {
    stop.unlink();
    stop.controller.abort(new StepError('wait ended'));
    await Promise.allSettled(waiters);
  }
}

/** How often a wait's `poll` calls its action: its own interval, or the run's. */
function pollMs(ctx: RunContext, plan: StepPlan): number {
  return plan.pollMs ?? ctx.o.pollIntervalMs ?? 5000;
}

/** A wait at least this long logs what it waits for as it starts, and then its progress at this interval. */
const PROGRESS_MS = 60_000;

/**
 * Sleeps until `end` on the run's clock. A long sleep logs `waiting` as it starts (the step, what it waits for,
 * until when) and `still waiting` each minute (how long so far): at info, or at debug inside a fan-out, as its
 * steps log. It sleeps a minute at a time, so that it needs no second timer.
 */
async function sleepLogged(
  ctx: RunContext,
  stepId: string,
  scope: Scope,
  end: number,
  what: Json,
  signal: AbortSignal,
): Promise<void> {
  const start = ctx.clock.now();
  const ms = end - start;
  const meta = { step: stepId, ...what, until: new Date(end).toISOString() };
  const log = (message: string, extra: Json = {}) =>
    scope.inLoop
      ? ctx.log.debug(message, { ...meta, ...extra })
      : ctx.log.info(message, { ...meta, ...extra });
  const long = ms >= PROGRESS_MS;
  if (long) log('waiting');
  for (let left = ms; left > 0; left = end - ctx.clock.now()) {
    await ctx.clock.sleep(Math.min(left, PROGRESS_MS), signal);
    const now = ctx.clock.now();
    if (long && now < end) log('still waiting', { waited: minutes(now - start) });
  }
}

/** A time as whole minutes, e.g. `3m`. */
function minutes(ms: number): string {
  return `${Math.floor(ms / PROGRESS_MS)}m`;
}

/** Why a callback wait without `poll` cannot end in a process that receives no callbacks. */
export function unreachable(service: string): string {
  return `no ${service} callback can reach this run: it runs where no callback listener is (\`fleetbook run\`, \`fleetbook test\`). Run the playbook under \`fleetbook serve\`, or give the wait a \`poll\` that reads what the callback would tell`;
}

/** The steps of `pb` that wait for a callback with no `poll`: where no callback comes, they cannot end. */
export function unpolledWaits(pb: Playbook): { step: string; service: string }[] {
  return stepsIn([...pb.steps, ...(pb.finally ?? [])]).flatMap((s) => {
    const w = 'wait' in s ? s.wait : undefined;
    return typeof w === 'object' && 'event' in w && !w.poll ? [{ step: s.id, service: w.event.service }] : [];
  });
}
