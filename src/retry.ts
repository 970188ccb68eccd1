/**
 * Retries, one module for the client, the steps and the devices: how long to wait before the next attempt
 * (exponential backoff with full jitter and a cap, or a fixed delay; the service's Retry-After), and the loop
 * that tries again, on an injected sleep and random source so that tests and resumed runs are deterministic.
 */

export interface BackoffOptions {
  /** First delay before jitter, in ms. */
  baseDelayMs: number;
  /** Largest delay, in ms. */
  maxDelayMs: number;
  /** The same delay every time instead of doubling. @default false */
  fixed?: boolean;
  /** `full`: a uniform delay in [0, delay); `none`: the delay itself. @default 'full' */
  jitter?: 'full' | 'none';
}

/** The delay before attempt `attempt + 1`; `attempt` counts from 1 (the attempt that just failed). */
export function backoffDelay(attempt: number, o: BackoffOptions, random: () => number = Math.random): number {
  const ceiling = o.fixed ? o.baseDelayMs : Math.min(o.maxDelayMs, o.baseDelayMs * 2 ** (attempt - 1));
  return o.jitter === 'none' ? ceiling : Math.floor(random() * ceiling);
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

export interface RetryLoop {
  maxAttempts: number;
  /** Whether the error of attempt `attempt` may be tried again (the attempt limit is checked apart). */
  retryable(e: unknown, attempt: number): boolean;
  /** The wait before the next attempt. */
  delay(attempt: number, e: unknown): number;
  sleep(ms: number): Promise<void>;
  /** Told of each attempt as it starts (counting it in a summary), and of each retry. */
  onAttempt?(attempt: number): void;
  onRetry?(attempt: number, e: unknown, delayMs: number): void;
}

/** Calls `fn` until it succeeds, the error is not retryable, or the attempts are used up. */
export async function retrying<T>(
  fn: (attempt: number) => Promise<T>,
  o: RetryLoop,
): Promise<{ value: T; attempts: number }> {
  for (let attempt = 1; ; attempt++) {
    o.onAttempt?.(attempt);
    try {
      return { value: await fn(attempt), attempts: attempt };
    } catch (e) {
      if (attempt >= o.maxAttempts || !o.retryable(e, attempt)) throw e;
      const ms = o.delay(attempt, e);
      o.onRetry?.(attempt, e, ms);
      await o.sleep(ms);
    }
  }
}
