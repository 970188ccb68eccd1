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

/** The form parseIsoTime reads: whether a text is written as such a time, whatever its day and hour. */
export const ISO_TIME =
  /^([+-]\d{6}|\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?(?:Z|([+-])(\d{2}):(\d{2}))$/;

/**
 * The time (ms) `text` says when it is an ISO 8601 date and time with its offset: `2026-01-05T00:00Z`, seconds
 * and up to three digits of a fraction optional, `Z` or `±HH:MM`, the year of four digits or, signed, of six
 * (`+010000`, as toISOString writes it). Undefined for anything else: a time without an offset (local to the
 * machine), a date alone, and a day or an hour that does not exist (2026-02-30, 24:00), which Date.parse takes,
 * the last rolled over into the next month or day.
 */
export function parseIsoTime(text: string): number | undefined {
  const m = ISO_TIME.exec(text);
  if (!m || m[1] === '-000000') return undefined;
  const [y, mo, d, h, mi, se, ms, oh, om] = [1, 2, 3, 4, 5, 6, 7, 9, 10].map((i) =>
    Number((m[i] ?? '0').padEnd(i === 7 ? 3 : 1, '0')),
  ) as number[] as [number, number, number, number, number, number, number, number, number];
  if (oh > 23 || om > 59) return undefined;
  const t = new Date(0);
  t.setUTCFullYear(y, mo - 1, d);
  t.setUTCHours(h, mi, se, ms);
  const fields = [
    t.getUTCFullYear(),
    t.getUTCMonth() + 1,
    t.getUTCDate(),
    t.getUTCHours(),
    t.getUTCMinutes(),
  ];
  if (fields.some((v, i) => v !== [y, mo, d, h, mi][i]) || t.getUTCSeconds() !== se) return undefined;
  return t.getTime() - (m[8] === '-' ? -1 : 1) * (oh * 60 + om) * 60_000;
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
