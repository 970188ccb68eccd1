/**
 * What an attempt's error says of the ones after it: whether the call may be sent again (mayRetry), whether the
 * attempt may have reached the service (mayHaveActed), and whether a later attempt's refusal says that an earlier
 * one removed what the call removes (gone). client.ts's `execute` applies them.
 */
import { ApiError, NetworkError } from '../errors.js';
import type { Json, Operation } from './catalog/operation.js';

/** What `execute` needs to know of a call to apply these rules. */
export interface Repeatable {
  action: string;
  retrySafe: boolean;
  /** The operation's `removes`, with the call's input. */
  removes?: { notFound: RegExp; answer: () => unknown };
}

/**
 * Whether an attempt that failed with `e` is sent again: 429 and 503, "Failed to get location", and network errors
 * that prove the request was not sent, for every call; other 5xx, 408 and network errors after sending only for a
 * retry-safe call, since the service may have acted.
 */
export function mayRetry(c: Repeatable, e: unknown): boolean {
  if (e instanceof ApiError) {
    if (e.retryClass !== 'retryable') return false;
    // 429 and 503 mean the service did not act; "Failed to get location" is an answer that nothing was done.
    if (e.status === 429 || e.status === 503 || e.apiMessage === 'Failed to get location') return true;
    return c.retrySafe;
  }
  if (e instanceof NetworkError) return !e.sent || c.retrySafe;
  return false;
}

/**
 * Whether an attempt that failed with `e` may have reached the service and acted: sent and its answer lost, or a
 * 5xx other than 503 (which says the service did nothing).
 */
export function mayHaveActed(e: unknown): boolean {
  if (e instanceof NetworkError) return e.sent;
  return e instanceof ApiError && e.status >= 500 && e.status !== 503;
}

/** `op.removes` for a call of `op` with `input`. */
export function removesOf(op: Operation, input: Json): Repeatable['removes'] {
  const r = op.removes;
  return r && { notFound: r.notFound, answer: () => r.answer(input) };
}

/**
 * The refusal `e` of an attempt of a call that removes something, made after an earlier attempt that may have
 * acted (`repeat`): when it says what the call names is not there, that attempt removed it, and this is the
 * message to log (the call then answers `removes.answer()`). Undefined for any other error, or a first attempt.
 */
export function gone(c: Repeatable, e: unknown, repeat: boolean): string | undefined {
  if (!repeat || !c.removes || !(e instanceof ApiError)) return undefined;
  if (e.status < 400 || e.status >= 500 || !c.removes.notFound.test(e.apiMessage)) return undefined;
  return `${c.action}: already gone, removed by an earlier attempt whose answer was lost; the call succeeded`;
}
