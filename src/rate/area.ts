/**
 * The rate budget of one API area, shared by every call in the process (product.md section 5).
 *
 * - A count of slots bounds how many requests of the area are in flight; those waiting for one queue in order.
 * - Starts are spaced `windowMs / rate` apart, on a schedule kept from the intended start times, so that a
 *   timer that fires late costs no throughput (the next start catches up) and the stream stays smooth.
 * - A sliding-window log is the hard bound: a start waits until fewer than `rate` starts lie in the last
 *   `windowMs`. That holds for every window, not only for aligned ones, whatever the timers do.
 * - A 429 pauses the area for its Retry-After and halves the rate (multiplicative decrease, at most once per
 *   window). Each window without a 429 gives back a twentieth of the budget (additive increase) until it is
 *   whole again.
 * - When several processes share the budget (shares.ts), each runs its area under a ceiling, its share, that
 *   holds until a given time: `setLimit`. A start never makes a window hold more starts than the highest
 *   ceiling set during that window, and none starts once the ceiling's time is past. Another process's 429
 *   reaches the area as `slowDown`.
 *
 * A request that finds a slot and the budget free, with no one waiting before it, starts in the turn it is asked
 * for: no promise stands between it and its task.
 */
import { systemClock, type Clock } from '../clock.js';
import { Alarm } from './alarm.js';

export interface AreaOptions {
  /** Requests allowed to start in any one-second window. @default 20 */
  requestsPerSecond: number;
  /** Requests in flight at once. @default 10 */
  concurrency: number;
  /**
   * Width of the window the budget is counted over, in ms. A little over a second, so that requests started a
   * second apart by this clock do not arrive closer than that at the service. @default DEFAULT_WINDOW_MS
   */
  windowMs?: number;
  /** Lowest rate a run of 429s can push the area to. @default 1 */
  minRequestsPerSecond?: number;
}

/**
 * The window of a budget: a second and 10 ms, so that requests started a second apart by this clock, and held
 * a little on their way (a busy event loop, a connection being opened), do not arrive closer than a second.
 */
export const DEFAULT_WINDOW_MS = 1010;

/**
 * The window of a budget shared by several processes (rate/shares.ts): a second and 25 ms. Each process's
 * requests are held on their way apart, and the service counts them together: with 10 ms, three replicas on a
 * busy two-core machine were seen at 302 and 313 arrivals in one second of a 300/s budget, just after the third
 * joined (test/daemon/replicas-rate.test.ts). It costs 1.5 % of the budget more than one process's window.
 */
export const SHARED_WINDOW_MS = 1025;

export class AreaBudget {
  readonly name: string;
  readonly concurrency: number;
  /** Requests holding a slot: starting or in flight. */
  private active = 0;
  /** Requests waiting for a slot, in arrival order, from `slotHead` on: each is given the slot of one that ends. */
  private slotQueue: (() => void)[] = [];
  private slotHead = 0;
  /** Requests waiting at the gate for a start: while there are any, a new request queues behind them. */
  private gated = 0;
  private readonly clock: Clock;
  /** Requests per second the area is configured with: the whole budget, however many processes share it. */
  readonly budget: number;
  /** Width of the window the budget is counted over, in ms. */
  windowMs: number;
  /** The ceiling: the budget, or this process's share of it (`setLimit`). */
  private max: number;
  private min: number;
  private readonly floor: number;
  /** Starts are allowed only before this time: the ceiling's (`setLimit`); -Infinity under a ceiling of 0. */
  private until = Infinity;
  private rate: number;
  /** Start times, oldest first, from `head` on. */
  private starts: number[] = [];
  private head = 0;
  /** Until when a 429 (here or in another process) pauses the area. */
  private resumeAt = 0;
  /** When the next start is due by the spacing schedule. */
  private nextAt = 0;
  private lastChange = 0;
  private lastDecrease = -Infinity;
  /** Serialises the gate so that starts are granted in arrival order. */
  private gate: Promise<void> = Promise.resolve();
  /** The request at the head of the gate sleeps on it; a raised ceiling wakes it. */
  private readonly alarm: Alarm;
  /** Called on each 429 of this process (`throttled`), so that the processes it shares the budget with learn it. */
  onThrottled: (() => void) | undefined;
  /** Counters for metrics and tests. */
  readonly stats = { started: 0, throttled: 0, waitedMs: 0 };

  constructor(name: string, o: AreaOptions, clock: Clock = systemClock) {
    if (!(Number.isFinite(o.requestsPerSecond) && o.requestsPerSecond >= 1)) {
      throw new TypeError(
        `Expected \`requestsPerSecond\` for area ${name} to be a number from 1 and up, got \`${o.requestsPerSecond}\``,
      );
    }
    if (!(Number.isInteger(o.concurrency) && o.concurrency >= 1)) {
      throw new TypeError(
        `Expected \`concurrency\` for area ${name} to be an integer from 1 and up, got \`${o.concurrency}\``,
      );
    }
    this.name = name;
    this.clock = clock;
    this.alarm = new Alarm(clock);
    this.budget = o.requestsPerSecond;
    this.max = o.requestsPerSecond;
    this.floor = o.minRequestsPerSecond ?? 1;
    this.min = Math.min(this.max, this.floor);
    this.windowMs = o.windowMs ?? DEFAULT_WINDOW_MS;
    this.rate = this.max;
    this.concurrency = o.concurrency;
  }

  /** Counts the budget over a window of at least `windowMs` from now on (a budget shared: SHARED_WINDOW_MS). */
  widen(windowMs: number): void {
    this.windowMs = Math.max(this.windowMs, windowMs);
  }

  /** Until when the area is paused (by a 429 here or elsewhere), in ms since the epoch. */
  get pausedUntil(): number {
    return this.resumeAt;
  }

  /**
   * Runs the area under a ceiling of `requestsPerSecond` (below 1: nothing starts) until `untilMs`, after which
   * nothing starts until the next ceiling. A lower ceiling holds for new starts at once, and for whole windows
   * one window later; a rate at its ceiling follows a higher one at once, and a rate a 429 lowered recovers
   * towards it as usual.
   */
  setLimit(requestsPerSecond: number, untilMs = Infinity): void {
    const now = this.clock.now();
    const wasStopped = now >= this.until;
    if (!(requestsPerSecond >= 1)) {
      this.until = -Infinity;
      return;
    }
    const raised = requestsPerSecond > this.max;
    this.rate = this.rate >= this.max ? requestsPerSecond : Math.min(this.rate, requestsPerSecond);
    this.max = requestsPerSecond;
    this.min = Math.min(this.max, this.floor);
    this.until = untilMs;
    if (raised || (wasStopped && now < untilMs)) this.alarm.ring();
  }

  /** The rate the area currently allows, which a 429 lowers and time restores. */
  get currentRate(): number {
    return this.rate;
  }

  /** Requests started and not yet answered. */
  get inFlight(): number {
    return this.active - this.gated;
  }

  /** Requests waiting: for a slot, or holding one and waiting for a start within the budget. */
  get waiting(): number {
    return this.slotQueue.length - this.slotHead + this.gated;
  }

  /** Requests holding a slot or waiting for one. */
  get pending(): number {
    return this.active + this.slotQueue.length - this.slotHead;
  }

  /** Runs `task` once a concurrency slot and a start within the budget are both free. */
  run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.active < this.concurrency) {
      this.active++;
      return this.inSlot(task, signal);
    }
    return new Promise<void>((resolve) => this.slotQueue.push(resolve)).then(() => this.inSlot(task, signal));
  }

  private async inSlot<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    try {
      if (this.gated || !this.startNow(signal)) await this.acquire(signal);
      return await task();
    } finally {
      this.freeSlot();
    }
  }

  /** The slot of a request that ended goes to the first one waiting, if any. */
  private freeSlot(): void {
    const next = this.slotQueue[this.slotHead];
    if (!next) {
      this.active--;
      return;
    }
    this.slotQueue[this.slotHead++] = undefined as unknown as () => void;
    if (this.slotHead === this.slotQueue.length) {
      this.slotQueue = [];
      this.slotHead = 0;
    }
    next();
  }

  /**
   * A 429: pause the area for `retryAfterMs` and halve its rate, at most once per window: the 429s of requests
   * that were in flight together are one signal of congestion, not one each.
   */
  throttled(retryAfterMs: number | undefined): void {
    this.stats.throttled++;
    this.slowDown(this.clock.now() + (retryAfterMs ?? 1000));
    this.onThrottled?.();
  }

  /** A 429 elsewhere (another process sharing the budget): pause until `untilMs`, and halve the rate as a 429 does. */
  slowDown(untilMs: number): void {
    const now = this.clock.now();
    this.resumeAt = Math.max(this.resumeAt, untilMs);
    if (now - this.lastDecrease >= this.windowMs) {
      this.rate = Math.max(this.min, this.rate / 2);
      this.lastDecrease = now;
    }
    this.lastChange = now;
  }

  /** A start at once, when no one waits at the gate and the budget allows it. */
  private startNow(signal?: AbortSignal): boolean {
    signal?.throwIfAborted();
    const now = this.clock.now();
    return this.wait(now, now) === 0;
  }

  private acquire(signal?: AbortSignal): Promise<void> {
    this.gated++;
    const granted = this.gate.then(() => this.grant(signal));
    // A cancelled waiter must not block those behind it.
    this.gate = granted.catch(() => undefined);
    return granted;
  }

  private async grant(signal?: AbortSignal): Promise<void> {
    const began = this.clock.now();
    try {
      for (;;) {
        signal?.throwIfAborted();
        const ms = this.wait(this.clock.now(), began);
        if (ms === 0) return;
        await this.alarm.sleep(ms, signal);
      }
    } finally {
      this.gated--;
    }
  }

  /**
   * Takes a start at `now` when the budget allows one, and says 0; else how long to wait before asking again
   * (Infinity: until the ceiling changes).
   */
  private wait(now: number, began: number): number {
    this.recover(now);
    if (now < this.resumeAt) return this.resumeAt - now;
    if (now >= this.until) return Infinity;
    while (this.head < this.starts.length && now - (this.starts[this.head] as number) >= this.windowMs)
      this.head++;
    if (this.head > 4096) {
      this.starts = this.starts.slice(this.head);
      this.head = 0;
    }
    const inWindow = this.starts.length - this.head;
    const allowed = Math.max(1, Math.floor(this.rate));
    if (inWindow >= allowed) {
      // Wait until enough of the starts in the window have left it.
      const oldestThatMustLeave = this.starts[this.starts.length - allowed] as number;
      return Math.max(1, oldestThatMustLeave + this.windowMs - now);
    }
    const spacing = this.windowMs / this.rate;
    // The clock counts whole milliseconds: a start due within the current one goes now. Waiting for a
    // fraction of a millisecond would sleep a whole timer tick and cap the area near 1,000 starts/s. The
    // window above stays the hard bound.
    if (this.nextAt - now >= 1) return this.nextAt - now;
    // On schedule or late by less than a slot: keep the schedule. Idle for longer: restart it from now.
    this.nextAt = (now - this.nextAt < spacing ? this.nextAt : now) + spacing;
    this.starts.push(now);
    this.stats.started++;
    this.stats.waitedMs += now - began;
    return 0;
  }

  private recover(now: number): void {
    if (this.rate >= this.max || now < this.resumeAt) return;
    const windows = Math.floor((now - Math.max(this.lastChange, this.resumeAt)) / this.windowMs);
    if (windows <= 0) return;
    this.rate = Math.min(this.max, this.rate + (windows * this.max) / 20);
    this.lastChange = now;
  }
}
