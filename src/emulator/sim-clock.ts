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
 * Date holds would fail every later call. An advance that would pass it is refused.
 */
export const LATEST = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * The fastest the clock runs by itself (simulated seconds per real second): about 12 days a second. Faster, the
 * clock would pass LATEST within hours, and at an infinite speed the work due each tick would never end.
 */
export const MAX_TIME_SCALE = 1_000_000;

/** What is wrong with `v` as a timeScale, or undefined when it is one. */
export function timeScaleProblem(v: unknown): string | undefined {
  return typeof v === 'number' && v >= 0 && v <= MAX_TIME_SCALE
    ? undefined
    : `timeScale must be a number from 0 to ${MAX_TIME_SCALE}, got ${JSON.stringify(v) ?? String(v)}`;
}

export class SimClock {
  private readonly start: number;
  private readonly realStart: number;
  private offset = 0;
  private scale: number;
  private readonly wall: () => number;

  constructor(start: number, timeScale: number, wall: () => number = Date.now) {
    this.start = start;
    this.scale = timeScale;
    this.wall = wall;
    this.realStart = wall();
  }

  /** Simulated milliseconds since the epoch. */
  now(): number {
    return Math.floor(this.start + this.offset + (this.wall() - this.realStart) * this.scale);
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

  advance(ms: number): void {
    this.offset += ms;
  }
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
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

/** Start of the billing cycle containing `ms`, for a cycle that begins on `billDay` (1–28) of each month. */
export function startOfBillCycle(ms: number, billDay: number): number {
  const d = new Date(ms);
  let y = d.getUTCFullYear();
  let m = d.getUTCMonth();
  if (d.getUTCDate() < billDay) {
    m -= 1;
    if (m < 0) {
      m = 11;
      y -= 1;
    }
  }
  return Date.UTC(y, m, billDay);
}

/** Start of the billing cycle after the one containing `ms`. */
export function nextBillCycle(ms: number, billDay: number): number {
  const s = new Date(startOfBillCycle(ms, billDay));
  return Date.UTC(s.getUTCFullYear(), s.getUTCMonth() + 1, billDay);
}
