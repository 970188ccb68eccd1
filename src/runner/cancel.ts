/**
 * A run's cancel as its steps see it: the signal they share, whether an error is the cancel itself, and why the
 * run was cancelled.
 */
import { setMaxListeners } from 'node:events';
import { AbortedError, FleetbookError } from '../errors.js';
import { Interrupted } from './types.js';

/** `signal`, which every step of a run listens on at once: no listener-count warning. */
export function withListeners(signal: AbortSignal): AbortSignal {
  setMaxListeners(0, signal);
  return signal;
}

/** Whether `e` is the cancel itself: the signal's reason, or a call refused for it. */
export function isCancel(e: unknown, signal: AbortSignal): boolean {
  return e === signal.reason || (e instanceof FleetbookError && e.code === 'FB_ABORTED');
}

/**
 * Whether `e`, the cancel of a call (isCancel), came once its request may have reached the service: it had begun to
 * be written (AbortedError.sent). A call refused for the cancel before that (the signal's reason, or FB_ABORTED cut
 * off before its first byte) reached nothing.
 */
export function cancelledInFlight(e: unknown): boolean {
  return e instanceof AbortedError && e.sent;
}

/**
 * Whether `e` is the stop of this execution (Interrupted, a restart or a lease lost) as a call or a read under
 * `signal` failed with it: no result of the devices it was for. The checkpoint says their request is being sent,
 * and the resumed run decides; until then their latest entry stays what it was.
 */
export function stopped(signal: AbortSignal | undefined, e: unknown): boolean {
  return Boolean(signal?.aborted && signal.reason instanceof Interrupted && isCancel(e, signal));
}

/**
 * Whether `e` is the cancel of a step (the run cancelled, the step's timeout), not a stop, as a call or a read under
 * `signal` failed with it: the step ends, and nothing will learn what a request on its way did.
 */
export function cancelled(signal: AbortSignal | undefined, e: unknown): boolean {
  return Boolean(signal?.aborted && !(signal.reason instanceof Interrupted) && isCancel(e, signal));
}

/** Why a run was cancelled, as its signal's reason says: `cancelled from the console`. */
export function cancelReason(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason.message : reason === undefined ? 'cancelled' : String(reason);
}
