/**
 * A plain call: sent (with the step's retries), its answer the step's output. The devices it names succeeded,
 * or, for a request the service only queued (an answer with a request id and no means to confirm it, such as
 * an SMS), were accepted under that request id.
 */
import { done } from '../context.js';
import { withResult } from '../devices.js';
import type { StepState } from '../types.js';
import type { ActionCall } from './index.js';

export async function call(x: ActionCall): Promise<StepState> {
  const { ctx, step } = x;
  const { value, attempts } = await ctx.retrying(x.count, x.plan.retry, x.op, x.signal, () =>
    ctx.call(x.count, x.action, x.input, x.signal),
  );
  if (!x.devices.size) return done(value);
  const requestId = x.op.mutating ? requestIdOf(value) : undefined;
  return ctx.finishDevices(
    step.id,
    value,
    withResult(
      x.devices,
      requestId ? { outcome: 'accepted', attempts, requestId } : { outcome: 'succeeded', attempts },
    ),
  );
}

/** The request id of an asynchronous request's answer (`{ requestId }`). */
export function requestIdOf(answer: unknown): string | undefined {
  const id = (answer as { requestId?: unknown } | null)?.requestId;
  return typeof id === 'string' && id !== '' ? id : undefined;
}
