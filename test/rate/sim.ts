/**
 * A simulation of owners sharing an area's budget on a virtual clock: a board in memory (fine for the
 * algorithm; the real boards have tests of their own), and owners that each run their budget's coordinator
 * and keep their area busy. A board may answer late, from a snapshot taken before its write lands, as two
 * statements at once on PostgreSQL do.
 */
import type { VirtualClock } from '../../src/clock.js';
import { AreaBudget, DEFAULT_WINDOW_MS } from '../../src/rate/area.js';
import { RateShares, type BoardRow, type ShareBoard, type SharePost } from '../../src/rate/shares.js';

export const WINDOW = DEFAULT_WINDOW_MS;

interface Row {
  post: SharePost;
  leaseUntil: number;
  writtenAt: number;
}

export class MemoryBoard implements ShareBoard {
  readonly rows = new Map<string, Row>();
  /** Owners whose exchanges fail: dead, or cut off from the board. */
  readonly unreachable = new Set<string>();
  exchanges = 0;

  /**
   * `delays()`: how long an exchange waits before the board takes its snapshot, and then before its write
   * lands and it answers.
   */
  constructor(
    private readonly clock: VirtualClock,
    private readonly delays?: () => [number, number],
  ) {}

  async exchange(member: string, post: SharePost, leaseMs: number): Promise<BoardRow[]> {
    if (this.unreachable.has(post.owner)) throw new Error(`the board is out of reach of ${post.owner}`);
    const [before, after] = this.delays?.() ?? [0, 0];
    if (before) await this.clock.sleep(before);
    const at = this.clock.now();
    const snapshot = [...this.rows]
      .filter(([, r]) => r.leaseUntil > at)
      .map(([m, r]) => ({
        member: m,
        post: structuredClone(r.post),
        ageMs: at - r.writtenAt,
        leftMs: r.leaseUntil - at,
      }));
    if (after) await this.clock.sleep(after);
    const old = this.rows.get(member);
    if (!old || (old.post.seq < post.seq && old.leaseUntil > at))
      this.rows.set(member, { post: structuredClone(post), leaseUntil: at + leaseMs, writtenAt: at });
    this.exchanges++;
    return snapshot;
  }
}

export interface Start {
  at: number;
  owner: string;
}

export interface OwnerOptions {
  budget: number;
  concurrency?: number;
  /** How long each request takes. @default 20 */
  taskMs?: number;
  intervalMs?: number;
  leaseMs?: number;
}

/** A process on the board: a coordinator, one area, and as much work as its concurrency allows. */
export class SimOwner {
  readonly area: AreaBudget;
  readonly shares: RateShares;
  /** Every ceiling the coordinator gave the area: `[at, limit, until]`. */
  readonly ceilings: [number, number, number][] = [];
  private alive = true;
  private working = false;

  constructor(
    readonly id: string,
    private readonly clock: VirtualClock,
    private readonly board: MemoryBoard,
    private readonly log: Start[],
    private readonly o: OwnerOptions,
  ) {
    this.area = new AreaBudget(
      'loc',
      { requestsPerSecond: o.budget, concurrency: o.concurrency ?? 20 },
      clock,
    );
    const setLimit = this.area.setLimit.bind(this.area);
    this.area.setLimit = (limit, until = Infinity) => {
      this.ceilings.push([clock.now(), limit < 1 ? 0 : limit, until]);
      setLimit(limit, until);
    };
    this.shares = new RateShares({
      owner: id,
      board,
      areas: { loc: this.area },
      clock,
      intervalMs: o.intervalMs,
      leaseMs: o.leaseMs,
      onError: () => undefined,
    });
  }

  /** Joins the board and keeps the area busy. */
  start(): this {
    this.shares.start();
    this.working = true;
    for (let i = 0; i < (this.o.concurrency ?? 20); i++) void this.work();
    return this;
  }

  private async work(): Promise<void> {
    while (this.working)
      await this.area.run(async () => {
        if (!this.alive) return;
        this.log.push({ at: this.clock.now(), owner: this.id });
        await this.clock.sleep(this.o.taskMs ?? 20);
      });
  }

  /** A clean stop. */
  async stop(): Promise<void> {
    this.working = false;
    await this.shares.stop();
  }

  /** SIGKILL: nothing more is sent, to the service or the board. */
  kill(): void {
    this.alive = false;
    this.working = false;
    this.board.unreachable.add(this.id);
  }
}

/** The most starts found in any window of `width` ms (sliding, not aligned), and where it begins. */
export function busiestWindow(starts: readonly Start[], width = WINDOW): { count: number; at: number } {
  const s = starts.map((x) => x.at).sort((a, b) => a - b);
  let best = { count: 0, at: 0 };
  let lo = 0;
  for (let hi = 0; hi < s.length; hi++) {
    while ((s[hi] as number) - (s[lo] as number) >= width) lo++;
    if (hi - lo + 1 > best.count) best = { count: hi - lo + 1, at: s[lo] as number };
  }
  return best;
}

/** Starts in [from, to). */
export const startsIn = (starts: readonly Start[], from: number, to: number, owner?: string): number =>
  starts.filter((s) => s.at >= from && s.at < to && (owner === undefined || s.owner === owner)).length;

/**
 * The window where the owners' ceilings, each at its highest during the window (0 before its first, and
 * past the time it was given for), add up to the most. A start never makes a window hold more than the
 * highest ceiling of its area during it (area-limit.test.ts), so this sum bounds the starts of every window,
 * whatever the traffic: what the sharing must keep within the budget.
 */
export function busiestCeilings(owners: readonly SimOwner[], width = WINDOW): { sum: number; at: number } {
  // Piecewise constant: [from, to, limit] pieces per owner.
  const pieces = owners.map((o) =>
    o.ceilings.flatMap(([at, limit, until], i) => {
      const next = o.ceilings[i + 1]?.[0] ?? Infinity;
      return [[at, Math.min(next, until), limit] as const];
    }),
  );
  const edges = new Set(pieces.flat().flatMap(([from, to]) => [from, to - 1]));
  let best = { sum: 0, at: 0 };
  for (const edge of edges)
    for (const t of [edge, edge - width + 1]) {
      if (!Number.isFinite(t)) continue;
      const sum = pieces.reduce(
        (acc, ps) =>
          acc + Math.max(0, ...ps.filter(([from, to]) => from < t + width && to > t).map(([, , l]) => l)),
        0,
      );
      if (sum > best.sum) best = { sum, at: t };
    }
  return best;
}
