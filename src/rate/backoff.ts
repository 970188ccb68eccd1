/** Retry delays: exponential backoff with full jitter and a cap, and the service's Retry-After. */

export interface BackoffOptions {
  /** First delay before jitter, in ms. @default 200 */
  baseDelayMs: number;
  /** Largest delay, in ms. @default 30000 */
  maxDelayMs: number;
}

/** Full jitter: a uniform delay in [0, min(cap, base * 2^attempt)). `attempt` counts from 0. */
export function fullJitter(attempt: number, o: BackoffOptions, random: () => number = Math.random): number {
  const ceiling = Math.min(o.maxDelayMs, o.baseDelayMs * 2 ** attempt);
  return Math.floor(random() * ceiling);
}

/**
 * A Retry-After header, in ms: delay-seconds or an HTTP date (RFC 9110 10.2.3). Undefined when absent or
 * unreadable.
 */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || v.trim() === '') return undefined;
  if (/^\s*\d+\s*$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
