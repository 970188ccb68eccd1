/**
 * Time is injected: the client, the rate gate and the retry loops read `now()` and wait with `sleep()`, so
 * that tests run them on a virtual clock and never sleep for real.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms`; rejects with the signal's reason if it is aborted first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Calls `fire` once `ms` have passed; the function it returns cancels that. */
  timer(ms: number, fire: () => void): () => void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  timer: (ms, fire) => {
    const t = setTimeout(fire, Math.max(0, ms));
    return () => clearTimeout(t);
  },
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      const timer = setTimeout(
        () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        Math.max(0, ms),
      );
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

/** The first millisecond of year 10000: from there on an ISO string has a six-digit year. */
const YEAR_10000 = 253_402_300_800_000;
/** The second isoTime made its prefix for, and the prefix (`YYYY-MM-DDTHH:MM:SS.`). */
let isoSecond = NaN;
let isoPrefix = '';

/**
 * `new Date(ms).toISOString()`, from a prefix made once per second: toISOString takes over a microsecond in
 * Node 20, and the daemon stamps a dozen times per run (callbacks received, runs, steps and ledger entries).
 */
export function isoTime(ms: number): string {
  if (!(ms >= 0 && ms < YEAR_10000)) return new Date(ms).toISOString();
  const t = Math.floor(ms);
  const second = Math.floor(t / 1000);
  if (second !== isoSecond) {
    isoSecond = second;
    isoPrefix = new Date(second * 1000).toISOString().slice(0, 20);
  }
  const milli = t - second * 1000;
  return `${isoPrefix}${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
}

/**
 * A virtual clock for tests and simulations: `sleep` resolves as soon as every earlier sleeper has, and moves
 * `now()` forward to its deadline. Each requested sleep is recorded in `sleeps`.
 */
export class VirtualClock implements Clock {
  private t: number;
  readonly sleeps: number[] = [];
  private timers: { at: number; seq: number; resolve: () => void }[] = [];
  private seq = 0;
  private scheduled = false;

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.timer(ms, resolve));
  }

  /** A timer cancelled before its turn never fires, and does not move `now()`. */
  timer(ms: number, fire: () => void): () => void {
    this.sleeps.push(ms);
    const timer = { at: this.t + Math.max(0, ms), seq: this.seq++, resolve: fire };
    this.timers.push(timer);
    this.schedule();
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }

  /** Fire timers one at a time, earliest first, after the event loop has let every ready task run. */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.timers.shift();
      if (!next) return;
      this.t = Math.max(this.t, next.at);
      next.resolve();
      if (this.timers.length) this.schedule();
    });
  }
}
