/**
 * A run's cancel as its steps see it: the signal they share, whether an error is the cancel itself, and why the
 * run was cancelled.
 */
import { setMaxListeners } from 'node:events';
import { AbortedError, FleetbookError } from '../errors.js';

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

/** Why a run was cancelled, as its signal's reason says: `cancelled from the console`. */
export function cancelReason(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason.message : reason === undefined ? 'cancelled' : String(reason);
}
