/**
 * A plain call: sent (with the step's retries), its answer the step's output. The devices it names succeeded,
 * or, for a request the service only queued (an answer with a request id and no means to confirm it, such as
 * an SMS), were accepted under that request id. An action the spec answers with `{ requestId }`
 * (Operation.answersRequestId) answered without one (none, empty, not a text), or with one that has a NUL
 * character (requestIdOf), is refused: the service took the request, but it cannot be followed, so its devices
 * are recorded `unconfirmed` (MALFORMED ANSWER), without it, the request is not sent again, and the step fails.
 * A call that fails names its devices too (failedResult): `unconfirmed` when the service may have acted, `failed`
 * when it refused; their attempts are the sends made.
 */
import { InputError } from '../../errors.js';
import { cancelled, cancelledInFlight, stopped } from '../cancel.js';
import { done, errorOf, unknownOutcome } from '../context.js';
import {
  answerRefusal,
  MALFORMED_ANSWER,
  MalformedAnswer,
  OUTCOME_UNKNOWN,
  withResult,
  type GroupResult,
} from '../devices.js';
import type { StepState } from '../types.js';
import type { ActionCall } from './index.js';

export async function call(x: ActionCall): Promise<StepState> {
  const { ctx, step } = x;
  // Whether an earlier call may have reached the service: sent before a restart, or an attempt of the step's
  // retries whose outcome is unknown. A repeat that finds what the call removes gone succeeds (Operation.removes).
  let repeat = x.resumed?.status === 'sending';
  /**
   * The sends made for the devices (docs/ledger.md): one by an earlier execution that stopped before its answer, as
   * a device-state pass counts it, and each attempt of this one whose input the client did not refuse (FB_INPUT).
   */
  let sends = repeat ? 1 : 0;
  let value: unknown;
  try {
    ({ value } = await ctx.retrying(x.count, x.plan.retry, x.op, x.signal, async () => {
      try {
        const answer = await ctx.call(x.count, x.action, x.input, x.signal, repeat);
        sends++;
        return answer;
      } catch (e) {
        if (!(e instanceof InputError)) sends++;
        repeat ||= unknownOutcome(e);
        throw e;
      }
    }));
  } catch (e) {
    // The step fails, and a request was sent for the devices: the ledger names them with what is known of it.
    const result = x.devices.size ? failedResult(x, e, repeat) : undefined;
    if (result) ctx.recordFailing(x.count, withResult(x.devices, { ...result, attempts: sends }));
    throw e;
  }
  const { requestId, refused } = x.op.answersRequestId ? followed(x.action, value) : {};
  if (refused) {
    if (x.devices.size) {
      const groups = withResult(x.devices, { outcome: 'unconfirmed', ...MALFORMED_ANSWER, attempts: sends });
      ctx.recordFailing(x.count, groups);
    }
    throw refused;
  }
  if (!x.devices.size) return done(value);
  return ctx.finishDevices(
    step.id,
    value,
    withResult(
      x.devices,
      requestId
        ? { outcome: 'accepted', attempts: sends, requestId }
        : { outcome: 'succeeded', attempts: sends },
    ),
  );
}

/**
 * The result of the devices of a call that failed with `e` after the step's retries, or none to record. An answer
 * lost once the request may have reached the service (unknownOutcome: the SMS may have gone) leaves them
 * `unconfirmed`, with its type (`OUTCOME UNKNOWN`, a 5xx's own); a refusal (a 4xx, a 503, a request that never
 * left) `failed`, unless an earlier send may have acted (`repeat`: then `OUTCOME UNKNOWN`). A cancel once the request
 * may have left (cancelledInFlight), or after such an earlier send, leaves them `OUTCOME UNKNOWN`, and one before
 * anything may have reached the service records nothing, as a device-state pass's; so does a stop: the resumed run
 * decides (uses.ts records them `OUTCOME UNKNOWN` when it does not send again).
 */
function failedResult(x: ActionCall, e: unknown, repeat: boolean): Omit<GroupResult, 'attempts'> | undefined {
  if (stopped(x.signal, e)) return undefined;
  if (cancelled(x.signal, e)) return repeat || cancelledInFlight(e) ? OUTCOME_UNKNOWN : undefined;
  if (unknownOutcome(e)) return { outcome: 'unconfirmed', ...errorOf(e) };
  return repeat ? OUTCOME_UNKNOWN : { outcome: 'failed', ...errorOf(e) };
}

/**
 * The request id of an asynchronous request's answer (`{ requestId }`), read once: `{ requestId }`, `{}` without
 * one, and `{ refused }` (answerRefusal) for one with a NUL character, which no request id has and no store can
 * keep: `action`'s answer is refused, and what the service did is read otherwise.
 */
export function requestIdOf(
  action: string,
  answer: unknown,
): { requestId?: string; refused?: MalformedAnswer } {
  const id = (answer as { requestId?: unknown } | null)?.requestId;
  if (typeof id !== 'string' || id === '') return {};
  const refused = answerRefusal(action, id, 'requestId', 'no request id');
  return refused ? { refused } : { requestId: id };
}

/** The request id of the answer of an action the spec answers with one, or the refusal of an answer without it. */
function followed(action: string, answer: unknown): { requestId?: string; refused?: MalformedAnswer } {
  const read = requestIdOf(action, answer);
  return read.requestId || read.refused
    ? read
    : { refused: withoutRequestId(action, `${action} answers with`) };
}

/**
 * The refusal of a 2xx answer that has no request id (none, empty, or not a text) from an action the spec
 * answers with one: the service took the request, and gave nothing to follow it by. `whose`: who answers with
 * one; `after`: what was done instead, if anything.
 */
export function withoutRequestId(action: string, whose: string, after = ''): MalformedAnswer {
  return new MalformedAnswer(
    `${action}: the service's answer is refused: it has no requestId, which ${whose}, so the request cannot be followed${after}`,
  );
}
