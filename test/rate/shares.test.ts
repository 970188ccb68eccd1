/**
 * An area's budget shared by every owner of one store (issue 20), on a virtual clock and a board in memory:
 * the sum of the owners' starts never exceeds the budget in any window, whoever joins, leaves, dies, is cut
 * off from the board or meets a 429, and the budget is used while they all have work.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { VirtualClock } from '../../src/clock.js';
import { shareOf } from '../../src/rate/shares.js';
import {
  MemoryBoard,
  SimOwner,
  WINDOW,
  busiestCeilings,
  busiestWindow,
  startsIn,
  type Start,
} from './sim.js';

const INTERVAL = 250;
const LEASE = 3_000;

/** What a budget allows in `ms`, counted in windows. */
const full = (budget: number, ms: number) => (budget * ms) / WINDOW;

function world(delays?: () => [number, number]) {
  const clock = new VirtualClock();
  const board = new MemoryBoard(clock, delays);
  const log: Start[] = [];
  const t0 = clock.now();
  const owners: SimOwner[] = [];
  const owner = (id: string, budget: number, o: { concurrency?: number } = {}) => {
    const x = new SimOwner(id, clock, board, log, { budget, intervalMs: INTERVAL, leaseMs: LEASE, ...o });
    owners.push(x);
    return x;
  };
  /** Runs `f` at `ms` after the start. */
  const at = (ms: number, f: () => unknown) => void clock.sleep(t0 + ms - clock.now()).then(() => void f());
  const until = (ms: number) => clock.sleep(t0 + ms - clock.now());
  const stopAll = () => Promise.all(owners.map((o) => o.stop()));
  /** The starts of the busiest window, and the sum of the ceilings of the busiest: both within `budget`. */
  const expectWithin = (budget: number) => {
    const starts = busiestWindow(log);
    expect(starts.count, `starts, busiest window at +${starts.at - t0} ms`).to.be.at.most(budget);
    const ceilings = busiestCeilings(owners);
    expect(ceilings.sum, `ceilings, busiest window at +${ceilings.at - t0} ms`).to.be.at.most(budget);
  };
  /** Owners started at once, by id and budget. */
  const started = <T extends [string, number][]>(...specs: T) =>
    specs.map(([id, budget]) => owner(id, budget).start()) as { [K in keyof T]: SimOwner };
  /** Runs the world until `ms` after its start, `check()` then, and stops every owner. */
  const runUntil = async (ms: number, check?: () => void) => {
    try {
      await until(ms);
      check?.();
    } finally {
      await stopAll();
    }
  };
  /** The part of `perSecond` used in [from, to) after the start, by one owner or by all. */
  const used = (from: number, to: number, perSecond: number, owner?: string) =>
    startsIn(log, t0 + from, t0 + to, owner) / full(perSecond, to - from);
  return { clock, board, log, t0, owner, started, at, runUntil, used, expectWithin };
}

describe('rate shares: one budget across the owners of a store (virtual clock, board in memory)', () => {
  it('splits a budget by member id, the remainder to the first; a newcomer never raises another share', () => {
    expect(['a', 'b', 'c'].map((m) => shareOf(10, ['c', 'a', 'b'], m))).to.deep.equal([4, 3, 3]);
    expect(['a', 'b'].map((m) => shareOf(300, ['a', 'b'], m))).to.deep.equal([150, 150]);
    expect(shareOf(7, ['a'], 'a')).to.equal(7);
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1000 }),
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 6 }),
        fc.string({ minLength: 1, maxLength: 3 }),
        (budget, members, newcomer) => {
          const sum = members.reduce((s, m) => s + shareOf(budget, members, m), 0);
          expect(sum).to.equal(budget);
          if (members.includes(newcomer)) return;
          const after = [...members, newcomer];
          for (const m of members)
            expect(shareOf(budget, after, m)).to.be.at.most(shareOf(budget, members, m));
        },
      ),
    );
  });

  it('three owners joining and leaving: never above the budget in any window, 95 % used while all work', async () => {
    const w = world();
    const [a, b, c] = [w.owner('a', 300), w.owner('b', 300), w.owner('c', 300)];
    a.start();
    w.at(2_000, () => b.start());
    w.at(4_000, () => c.start());
    w.at(10_000, () => b.stop());
    w.at(13_000, () => c.kill());
    await w.runUntil(20_000);
    w.expectWithin(300);
    const used = (from: number, to: number, owner?: string) => w.used(from, to, owner ? 100 : 300, owner);
    expect(used(0, 2_000), 'a alone, at once').to.be.at.least(0.95);
    // b's join settles within a window and a few exchanges; then c's.
    expect(used(3_500, 4_000), 'a and b').to.be.at.least(0.95);
    expect(used(6_000, 10_000), 'a, b and c').to.be.at.least(0.95);
    for (const o of ['a', 'b', 'c']) expect(used(6_000, 10_000, o), `${o}, a third`).to.be.at.least(0.95);
    // b stopped cleanly: its share is free a window later. c died: its share is free when its lease expires.
    expect(used(12_000, 13_000), 'a and c').to.be.at.least(0.95);
    expect(used(17_000, 20_000), 'a alone again').to.be.at.least(0.95);
    expect(startsIn(w.log, w.t0 + 10_000, w.t0 + 20_000, 'b'), 'b after its stop').to.equal(0);
  });

  it('a 429 at one owner pauses and halves the others at their next exchange', async () => {
    const w = world();
    const [a, b, c] = w.started(['a', 300], ['b', 300], ['c', 300]);
    const T = 4_000;
    const rates: number[] = [];
    w.at(T, () => a.area.throttled(2_000));
    w.at(T + INTERVAL + 10, () => rates.push(a.area.currentRate, b.area.currentRate, c.area.currentRate));
    await w.runUntil(T + 4_000);
    expect(startsIn(w.log, w.t0 + T - 500, w.t0 + T, 'b'), 'b worked before').to.be.above(30);
    expect(startsIn(w.log, w.t0 + T, w.t0 + T + 2_000, 'a'), 'a during its pause').to.equal(0);
    for (const o of ['b', 'c'])
      expect(
        startsIn(w.log, w.t0 + T + INTERVAL + 10, w.t0 + T + 1_990, o),
        `${o} during a's pause`,
      ).to.equal(0);
    expect(rates, 'every rate halved').to.deep.equal([50, 50, 50]);
    expect(startsIn(w.log, w.t0 + T + 2_000, w.t0 + T + 4_000), 'work resumes').to.be.above(100);
    w.expectWithin(300);
  });

  it('an owner cut off from the board stops a window before its lease ends; it rejoins as a newcomer', async () => {
    const w = world();
    w.started(['a', 300], ['b', 300]);
    const T = 3_000;
    w.at(T, () => w.board.unreachable.add('b'));
    w.at(T + 6_000, () => w.board.unreachable.delete('b'));
    await w.runUntil(T + 10_000);
    const bStarts = w.log.filter((s) => s.owner === 'b' && s.at >= w.t0 + T).map((s) => s.at - w.t0);
    const lastBefore = Math.max(...bStarts.filter((t) => t < T + 6_000));
    expect(lastBefore, 'b stops a window before its lease ends').to.be.below(T + LEASE - WINDOW);
    const used = (from: number, to: number, owner?: string) => w.used(from, to, owner ? 150 : 300, owner);
    expect(used(T + LEASE + 1_000, T + 6_000), 'a alone once b is gone').to.be.at.least(0.95);
    expect(used(T + 8_000, T + 10_000, 'b'), 'b back, a half').to.be.at.least(0.95);
    w.expectWithin(300);
  });

  it('runs at the lowest budget any live owner is configured with', async () => {
    const w = world();
    const [a] = w.started(['a', 300], ['b', 100]);
    await w.runUntil(6_000, () =>
      expect(a.shares.status().areas.loc).to.deep.equal({ budget: 100, share: 50, limit: 50 }),
    );
    expect(busiestWindow(w.log.filter((s) => s.at > w.t0 + 3_000)).count).to.be.at.most(100);
  });

  it('two owners that join at once, each unseen by the first read of the other, never both take it all', async () => {
    // Each exchange's snapshot is taken at once, and its write lands 100 ms later.
    const w = world(() => [0, 100]);
    const [a] = w.started(['a', 300], ['b', 300]);
    await w.runUntil(4_000, () => expect(a.shares.status().areas.loc?.limit).to.equal(150));
    w.expectWithin(300);
  });

  it('holds with late exchanges that see stale snapshots, and owners that come, go, die and meet 429s (property)', async () => {
    const event = fc.record({
      join: fc.integer({ min: 0, max: 4_000 }),
      end: fc.option(fc.record({ after: fc.integer({ min: 0, max: 6_000 }), kill: fc.boolean() }), {
        nil: undefined,
      }),
      cut: fc.option(
        fc.record({ after: fc.integer({ min: 0, max: 6_000 }), ms: fc.integer({ min: 100, max: 5_000 }) }),
        {
          nil: undefined,
        },
      ),
      throttleAt: fc.option(fc.integer({ min: 0, max: 9_000 }), { nil: undefined }),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 8, max: 60 }),
        fc.array(event, { minLength: 2, maxLength: 5 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        async (budget, owners, seed) => {
          let s = seed;
          // Up to 150 ms before the snapshot and after it, for each exchange: writes land out of order.
          const delays = (): [number, number] => {
            s = (s * 1103515245 + 12345) % 2 ** 31;
            return [s % 151, (s >> 8) % 151];
          };
          const w = world(delays);
          owners.forEach((o, i) => {
            const x = w.owner(`o${i}`, budget, { concurrency: 5 });
            w.at(o.join, () => x.start());
            if (o.end) w.at(o.join + o.end.after, () => (o.end?.kill ? x.kill() : x.stop()));
            if (o.cut) {
              w.at(o.join + o.cut.after, () => w.board.unreachable.add(x.id));
              w.at(o.join + o.cut.after + o.cut.ms, () => !o.end?.kill && w.board.unreachable.delete(x.id));
            }
            if (o.throttleAt !== undefined) w.at(o.throttleAt, () => x.area.throttled(500));
          });
          await w.runUntil(12_000);
          w.expectWithin(budget);
        },
      ),
      { numRuns: 60 },
    );
  });
});
