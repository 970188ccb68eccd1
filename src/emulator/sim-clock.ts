/**
 * The simulated clock. Everything the service does "over time" reads it: session idle time, report progress,
 * usage, triggers. It moves by the control API (`advance`) and, when `timeScale` > 0, with real time at that
 * speed. OAuth bearer lifetimes are the one exception (see ARCHITECTURE.md): they run on the wall clock.
 */
export const DAY_MS = 86_400_000;
export const HOUR_MS = 3_600_000;
export const MINUTE_MS = 60_000;

/** Default start of simulated time: a Monday, so that weekly cycles line up with the first day. */
export const DEFAULT_START = Date.UTC(2026, 0, 5);

/**
 * The last time the clock reaches: the API writes times with four-digit years, and a time past the last one a
 * Date holds would fail every later call. The clock starts no later, an advance that would pass it is refused,
 * and running by itself the clock stops there.
 */
export const LATEST = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * The fastest the clock runs by itself (simulated seconds per real second): about 12 days a second. Faster, the
 * clock would reach LATEST within hours, and at an infinite speed the work due each tick would never end.
 */
export const MAX_TIME_SCALE = 1_000_000;

/** `v` as a message says what it got: a number as written, anything else as JSON, nothing as `nothing`. */
export function said(v: unknown): string {
  return typeof v === 'number' ? String(v) : (JSON.stringify(v) ?? 'nothing');
}

/** An advance the clock refuses: it would take the clock back, or past LATEST. */
export class ClockLimit extends RangeError {}

export class SimClock {
  private readonly start: number;
  private readonly realStart: number;
  private offset = 0;
  private scale: number;
  private readonly wall: () => number;

  /** From `start` at `timeScale`, both checked (limits.ts: startTimeProblem, timeScaleProblem). */
  constructor(start: number, timeScale: number, wall: () => number = Date.now) {
    this.start = start;
    this.scale = timeScale;
    this.wall = wall;
    this.realStart = wall();
  }

  /** Where the clock's speed has taken it, LATEST or not. */
  private raw(): number {
    return Math.floor(this.start + this.offset + (this.wall() - this.realStart) * this.scale);
  }

  /** Simulated milliseconds since the epoch: LATEST at the most, where the running clock stops. */
  now(): number {
    return Math.min(LATEST, this.raw());
  }

  get timeScale(): number {
    return this.scale;
  }

  /** Changes the speed without a jump: time so far is folded into the offset. */
  setTimeScale(scale: number): void {
    const now = this.now();
    this.scale = scale;
    this.offset = now - this.start - (this.wall() - this.realStart) * this.scale;
  }

  /**
   * Moves the clock `seconds` forward, to the millisecond. Throws ClockLimit, keeping its time, when `seconds`
   * is not a number from 0 up or would take the clock past LATEST.
   */
  advance(seconds: number): void {
    const raw = this.raw();
    const now = Math.min(LATEST, raw);
    const ms = typeof seconds === 'number' ? Math.round(seconds * 1000) : NaN;
    if (!(ms >= 0 && ms <= LATEST - now))
      throw new ClockLimit(
        `seconds must be a number from 0 to ${Math.floor((LATEST - now) / 1000)}: the clock goes no further than ${iso(LATEST)} (now ${iso(now)}); got ${said(seconds)}`,
      );
    // From where the clock stands: one that ran into LATEST moves on from there, not from past it.
    this.offset += now - raw + ms;
  }
}

/**
 * A time as the API writes it. A time derived from the clock's (the end of a billing cycle that runs past the
 * year 9999) may pass LATEST: it is written as LATEST, the last time the spec's four-digit years can say.
 */
export function iso(ms: number): string {
  return new Date(Math.min(ms, LATEST)).toISOString();
}

/** `YYYY-MM-DD` of a simulated time. */
export function isoDate(ms: number): string {
  return iso(ms).slice(0, 10);
}

/** `YYYYMMDDhhmmss`, the time format of location results. */
export function compactTime(ms: number): string {
  return iso(ms).replace(/[-:T]/g, '').slice(0, 14);
}

export function startOfDay(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

/** Weekly cycles start on Monday (spec 2.1.1). */
export function startOfWeek(ms: number): number {
  const day = startOfDay(ms);
  const weekday = (new Date(day).getUTCDay() + 6) % 7;
  return day - weekday * DAY_MS;
}

/**
 * Midnight UTC of day `d` of month `m` (0-based, and may overflow into the next year) of year `y`. Not Date.UTC,
 * which reads the years 0 to 99 as 1900 to 1999.
 */
export function utcDay(y: number, m: number, d: number): number {
  const t = new Date(0);
  t.setUTCFullYear(y, m, d);
  return t.getTime();
}

/** Start of the billing cycle containing `ms`, for a cycle that begins on `billDay` (1–28) of each month. */
export function startOfBillCycle(ms: number, billDay: number): number {
  const d = new Date(ms);
  const m = d.getUTCMonth() - (d.getUTCDate() < billDay ? 1 : 0);
  return utcDay(d.getUTCFullYear(), m, billDay);
}

/** Start of the billing cycle after the one containing `ms`. */
export function nextBillCycle(ms: number, billDay: number): number {
  const s = new Date(startOfBillCycle(ms, billDay));
  return utcDay(s.getUTCFullYear(), s.getUTCMonth() + 1, billDay);
}
