/**
 * Each API area's budget shared by every process that owns one store (issue 20, product.md section 10): a
 * daemon and a `fleetbook run` on one SQLite file, or replicas on one PostgreSQL database. Each process runs
 * its areas at a share of their budgets, and exchanges with a board in the store a few times per second
 * (one round trip: write my row, read everyone's), never per call. See ARCHITECTURE.md for the rules and why
 * they keep the sum of every process's starts within the budget in any window.
 */
import { systemClock, type Clock } from '../clock.js';
import { Alarm } from './alarm.js';
import { SHARED_WINDOW_MS, type AreaBudget } from './area.js';

/** What a member says of one area. */
export interface AreaPost {
  /** The area's budget as the member is configured: every member runs at the lowest. */
  budget: number;
  /** The highest ceiling the member ran the area at during the last window: at most that many starts of it can
   * still lie in any window. */
  claim: number;
  /** How long the area stays paused by the member's last 429, from when the post is written. */
  pauseMs: number;
  /** 429s the member has met in the area: each new one slows every member down. */
  slowdowns: number;
}

/** A member's row on the board. */
export interface SharePost {
  /** The owner of the store (its lease's id) that the member is. */
  owner: string;
  /** The member's exchanges, counted: a board keeps the row of the highest, should an older one land late. */
  seq: number;
  /** The members as this one last read them: sorted ids, space-separated; empty before its first read. */
  view: string;
  areas: Record<string, AreaPost>;
}

export interface BoardRow {
  member: string;
  post: SharePost;
  /** How long ago the row was written, by the board's clock. */
  ageMs: number;
  /** How long its lease still held when the board read it. */
  leftMs: number;
}

/**
 * How long a board keeps a lapsed row before it deletes it: until then, a late write of the lapsed member
 * finds the row and leaves it lapsed.
 */
export const LAPSED_ROW_KEPT_MS = 600_000;

/**
 * How long the shares of an owner released from the store (a clean stop, or a process known dead) still hold:
 * a window and its margin, so that its last starts have left every window before the others take its share.
 */
export const RELEASED_SHARE_MS = 1_100;

/** Where the members meet: a table in the store. */
export interface ShareBoard {
  /**
   * Writes `post` as `member`'s row, live for `leaseMs` from when the board writes it, by the board's clock
   * (`now` is the caller's, for a board without a clock of its own); answers the live rows as the board held
   * them just before this write, the member's own among them from its second exchange on. A row that holds a
   * later `seq`, or whose lease has lapsed, is left as it is: a lapsed member never comes back.
   */
  exchange(member: string, post: SharePost, leaseMs: number, now: number): Promise<BoardRow[]>;
}

export interface RateSharesOptions {
  /** This process as an owner of the store: its lease's id. */
  owner: string;
  board: ShareBoard;
  /** The process's budgets, by area: each runs at this process's share of its budget from `start()` on. */
  areas: Readonly<Record<string, AreaBudget>>;
  /** Time between two exchanges with the board, in ms. @default 250 */
  intervalMs?: number;
  /**
   * How long a member's row holds without an exchange, in ms: a process that dies has its share given to the
   * others after it. More than a window and two intervals: a process that cannot reach the board stops
   * starting requests a window before its row lapses. @default 5000
   */
  leaseMs?: number;
  clock?: Clock;
  /** An exchange failed (the board out of reach): the loop goes on, and the shares lapse with the lease. */
  onError?(error: Error): void;
}

export interface ShareStatus {
  /** This process's id on the board. */
  member: string;
  /** The members this process last read, itself among them. */
  members: string[];
  /** Per area: the budget every member runs at, this process's share of it, and the ceiling it runs at now. */
  areas: Record<string, { budget: number; share: number; limit: number }>;
}

/**
 * The share of `budget` (whole requests) that `member` holds among `members`: a whole part each, and the
 * remainder one by one to the first members by id. A newcomer never raises another member's share.
 */
export function shareOf(budget: number, members: readonly string[], member: string): number {
  const whole = Math.floor(budget);
  const n = members.length;
  const rank = members.reduce((r, m) => (m < member ? r + 1 : r), 0);
  return Math.floor(whole / n) + (rank < whole % n ? 1 : 0);
}

interface AreaState {
  name: string;
  area: AreaBudget;
  /** The ceiling the area runs at. */
  limit: number;
  /** The ceilings set, `[since, limit]`, from the one in effect a window ago on. */
  history: [number, number][];
  budget: number;
  share: number;
}

/** Runs the exchanges of one process, and sets its areas' ceilings from what they say. */
export class RateShares {
  private readonly o: RateSharesOptions;
  private readonly clock: Clock;
  private readonly intervalMs: number;
  private readonly leaseMs: number;
  private readonly states: AreaState[];
  private readonly alarm: Alarm;
  private incarnation = 1;
  private member: string;
  private seq = 0;
  /** Whether a row of `member` was written: from then on, each answer must hold it. */
  private posted = false;
  private view = '';
  private members: string[] = [];
  /** The 429s counted in each other member's last post, by member and area. */
  private seen = new Map<string, number>();
  private loop: Promise<void> | undefined;
  private stopped = false;
  /** Exchange again without waiting for the interval. */
  private again = false;
  /** Answers in a row that did not hold this process's row. */
  private ungrounded = 0;

  constructor(o: RateSharesOptions) {
    this.o = o;
    this.clock = o.clock ?? systemClock;
    this.intervalMs = o.intervalMs ?? 250;
    this.leaseMs = o.leaseMs ?? 5_000;
    this.alarm = new Alarm(this.clock);
    this.member = `${o.owner}/1`;
    this.states = Object.entries(o.areas).map(([name, area]) => ({
      name,
      area,
      limit: 0,
      history: [[-Infinity, 0]],
      budget: area.budget,
      share: 0,
    }));
    const window = Math.max(0, ...this.states.map((s) => s.area.windowMs));
    if (!(Number.isFinite(this.intervalMs) && this.intervalMs > 0))
      throw new TypeError(`Expected \`intervalMs\` to be a number above 0, got \`${this.intervalMs}\``);
    if (!(this.leaseMs > window + 2 * this.intervalMs))
      throw new TypeError(
        `Expected \`leaseMs\` to be more than a window and two intervals (${window + 2 * this.intervalMs}), got \`${this.leaseMs}\``,
      );
  }

  /**
   * Joins the board. Call it before the first request: the areas start nothing until the first exchanges
   * give this process its share (at once when it is alone; once the others have made room, else).
   */
  start(): void {
    if (this.loop) return;
    for (const s of this.states) {
      s.area.widen(SHARED_WINDOW_MS);
      s.area.setLimit(0);
      s.area.onThrottled = () => {
        this.again = true;
        this.alarm.ring();
      };
    }
    this.loop = this.run();
  }

  /**
   * Leaves the board: the areas start nothing more, and the row lapses one window later, once the last of
   * this process's starts has left every window. Stop the requests first: those still waiting never start.
   */
  async stop(): Promise<void> {
    if (!this.loop || this.stopped) return;
    this.stopped = true;
    this.alarm.ring();
    await this.loop;
    const now = this.clock.now();
    for (const s of this.states) {
      this.setLimit(s, 0, now, -Infinity);
      s.area.onThrottled = undefined;
    }
    if (!this.posted) return;
    const window = Math.max(...this.states.map((s) => s.area.windowMs));
    await this.exchange(window);
  }

  status(): ShareStatus {
    return {
      member: this.member,
      members: [...this.members],
      areas: Object.fromEntries(
        this.states.map((s) => [s.name, { budget: s.budget, share: s.share, limit: s.limit }]),
      ),
    };
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      this.again = false;
      const sentAt = this.clock.now();
      const rows = await this.exchange(this.leaseMs);
      if (rows && !this.stopped) this.apply(rows, sentAt);
      if (!this.stopped && !this.again) await this.alarm.sleep(this.intervalMs);
    }
  }

  /** One exchange, given up after a lease (a later write wins over it should it land at last). */
  private async exchange(leaseMs: number): Promise<BoardRow[] | undefined> {
    const now = this.clock.now();
    const giveUp = new AbortController();
    try {
      return await Promise.race([
        this.o.board.exchange(this.member, this.post(now), leaseMs, now),
        this.clock.sleep(this.leaseMs, giveUp.signal).then(() => {
          throw new Error(`the rate board did not answer within ${this.leaseMs} ms`);
        }),
      ]);
    } catch (e) {
      this.o.onError?.(e as Error);
      return undefined;
    } finally {
      giveUp.abort();
    }
  }

  private post(now: number): SharePost {
    const areas: Record<string, AreaPost> = {};
    for (const s of this.states)
      areas[s.name] = {
        budget: s.area.budget,
        claim: this.claim(s, now),
        pauseMs: Math.max(0, s.area.pausedUntil - now),
        slowdowns: s.area.stats.throttled,
      };
    return { owner: this.o.owner, seq: ++this.seq, view: this.view, areas };
  }

  /** Sets each area's ceiling from an answer of the board, and brings in the others' 429s. */
  private apply(rows: BoardRow[], sentAt: number): void {
    const now = this.clock.now();
    // Grounded: the answer holds this process's row, and came before that row's lease could end, so that no
    // one can have read the row lapsed before this write made it live again (a lapsed member never returns).
    const own = rows.find((r) => r.member === this.member);
    const grounded = own !== undefined && own.leftMs > now - sentAt;
    this.ungrounded = grounded ? 0 : this.ungrounded + 1;
    if (!grounded) {
      // The next answer holds this row: ask for it at once, but only once in a row, should the board keep
      // answering without it.
      if (this.ungrounded === 1) this.again = true;
      // The row lapsed: the others may have shared this process's part out. It comes back as a new member,
      // from nothing, as a process that starts does.
      if (this.posted) {
        this.rejoin(now);
        return;
      }
      this.posted = true;
    }
    const others = rows.filter((r) => r.member !== this.member);
    const members = [...others.map((r) => r.member), this.member].sort();
    const view = members.join(' ');
    const seen = new Map<string, number>();
    for (const s of this.states) {
      s.budget = Math.min(s.area.budget, ...others.map((r) => r.post.areas[s.name]?.budget ?? Infinity));
      s.share = shareOf(s.budget, members, this.member);
      // Lower at once. Raise only on an answer that holds this process's row, once every other member has
      // read the same members and lowered its own ceiling to its share for a whole window.
      const room =
        grounded &&
        others.every(
          (r) =>
            r.post.view === view &&
            (r.post.areas[s.name]?.claim ?? 0) <= shareOf(s.budget, members, r.member),
        );
      const limit = s.share < s.limit || room ? s.share : s.limit;
      this.setLimit(s, limit, now, sentAt + this.leaseMs - s.area.windowMs);
      for (const r of others) {
        const p = r.post.areas[s.name];
        if (!p) continue;
        const key = `${r.member} ${s.name}`;
        const before = this.seen.get(key);
        seen.set(key, p.slowdowns);
        const resumeAt = now + p.pauseMs - r.ageMs;
        if (before === undefined ? resumeAt > now : p.slowdowns > before) s.area.slowDown(resumeAt);
      }
    }
    this.seen = seen;
    this.view = view;
    this.members = members;
  }

  private rejoin(now: number): void {
    this.member = `${this.o.owner}/${++this.incarnation}`;
    this.posted = false;
    this.ungrounded = 0;
    this.view = '';
    this.members = [];
    for (const s of this.states) this.setLimit(s, 0, now, -Infinity);
  }

  /** Sets an area's ceiling, which holds until `until`: a window before the lease this exchange bought ends. */
  private setLimit(s: AreaState, limit: number, now: number, until: number): void {
    if (limit !== s.limit) {
      s.history.push([now, limit]);
      s.limit = limit;
    }
    s.area.setLimit(limit, until);
  }

  /** The highest ceiling of the area during the last window. */
  private claim(s: AreaState, now: number): number {
    const from = now - s.area.windowMs;
    while (s.history.length > 1 && (s.history[1] as [number, number])[0] <= from) s.history.shift();
    return Math.max(...s.history.map(([, limit]) => limit));
  }
}
