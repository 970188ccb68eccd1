/**
 * An area's budget under a ceiling that changes (its process's share of a budget that several processes
 * share, issue 20), on a virtual clock: a start never makes a window hold more than the highest ceiling set
 * during it, a ceiling holds only until the time it was given for, a raised ceiling wakes the waiting request
 * at once, and another process's 429 pauses and halves the area as its own does.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { VirtualClock } from '../../src/clock.js';
import { AreaBudget, DEFAULT_WINDOW_MS } from '../../src/rate/area.js';

const WINDOW = DEFAULT_WINDOW_MS;

/** Keeps `n` requests at a time asking for starts until `stop()`; each start's time is logged. */
function busy(area: AreaBudget, clock: VirtualClock, n: number) {
  const starts: number[] = [];
  let on = true;
  const loop = async () => {
    while (on) await area.run(async () => void starts.push(clock.now()));
  };
  for (let i = 0; i < n; i++) void loop();
  return { starts, stop: () => (on = false) };
}

describe('rate budget of an area under a changing ceiling (virtual clock)', () => {
  it('a lowered ceiling holds from one window after it; no window ever holds more than the higher one', async () => {
    const clock = new VirtualClock();
    const t0 = clock.now();
    const area = new AreaBudget('loc', { requestsPerSecond: 40, concurrency: 10 }, clock);
    const b = busy(area, clock, 10);
    await clock.sleep(3_000);
    area.setLimit(10);
    await clock.sleep(5_000);
    b.stop();
    const inWindow = (from: number) => b.starts.filter((s) => s >= from && s < from + WINDOW).length;
    expect(inWindow(t0 + 1_000)).to.equal(40);
    for (let t = t0 + 3_000; t < t0 + 7_000; t += 50) expect(inWindow(t)).to.be.at.most(40);
    for (let t = t0 + 3_000 + WINDOW; t < t0 + 7_000; t += 50) expect(inWindow(t)).to.be.at.most(10);
    expect(inWindow(t0 + 6_000)).to.equal(10);
    expect(area.currentRate).to.equal(10);
    expect(area.budget, 'the budget as configured').to.equal(40);
  });

  it('a ceiling of 0 stops the area; the next ceiling starts the waiting request at once', async () => {
    const clock = new VirtualClock();
    const area = new AreaBudget('loc', { requestsPerSecond: 20, concurrency: 5 }, clock);
    area.setLimit(0);
    let started: number | undefined;
    const req = area.run(async () => void (started = clock.now()));
    await clock.sleep(5_000);
    expect(started).to.equal(undefined);
    const raised = clock.now();
    area.setLimit(20);
    await req;
    expect(started).to.equal(raised);
  });

  it('a ceiling holds only until the time it was given for, then nothing starts until the next', async () => {
    const clock = new VirtualClock();
    const t0 = clock.now();
    const area = new AreaBudget('loc', { requestsPerSecond: 20, concurrency: 5 }, clock);
    area.setLimit(20, t0 + 2_000);
    const b = busy(area, clock, 5);
    await clock.sleep(4_000);
    expect(Math.max(...b.starts)).to.be.below(t0 + 2_000);
    const n = b.starts.length;
    area.setLimit(20, t0 + 6_000);
    await clock.sleep(3_000);
    b.stop();
    expect(b.starts[n], 'the waiting request, at once').to.equal(t0 + 4_000);
    expect(Math.max(...b.starts)).to.be.below(t0 + 6_000);
  });

  it('a raised ceiling lifts a full rate at once, and a throttled one only by recovery', async () => {
    const clock = new VirtualClock();
    const area = new AreaBudget('loc', { requestsPerSecond: 300, concurrency: 5 }, clock);
    area.setLimit(100);
    area.setLimit(150);
    expect(area.currentRate).to.equal(150);
    area.throttled(0);
    expect(area.currentRate).to.equal(75);
    area.setLimit(300);
    expect(area.currentRate, 'still throttled').to.equal(75);
    area.setLimit(40);
    expect(area.currentRate).to.equal(40);
  });

  it("slowDown(): another process's 429 pauses and halves the area, without counting as its own", async () => {
    const clock = new VirtualClock();
    const area = new AreaBudget('loc', { requestsPerSecond: 20, concurrency: 5 }, clock);
    const seen: number[] = [];
    area.onThrottled = () => seen.push(clock.now());
    const t = clock.now();
    area.slowDown(t + 1_500);
    expect(area.currentRate).to.equal(10);
    expect(area.pausedUntil).to.equal(t + 1_500);
    expect(area.stats.throttled).to.equal(0);
    expect(seen, 'not its own 429').to.deep.equal([]);
    let started = 0;
    await area.run(async () => void (started = clock.now()));
    expect(started).to.equal(t + 1_500);
    area.throttled(1_000);
    expect(seen).to.deep.equal([clock.now()]);
    expect(area.stats.throttled).to.equal(1);
  });

  it('any sequence of ceilings: no window holds more starts than the highest ceiling in it (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({ after: fc.integer({ min: 1, max: 1_500 }), limit: fc.integer({ min: 0, max: 30 }) }),
          {
            minLength: 1,
            maxLength: 12,
          },
        ),
        fc.integer({ min: 1, max: 10 }),
        async (changes, concurrency) => {
          const clock = new VirtualClock();
          const area = new AreaBudget('m2m', { requestsPerSecond: 30, concurrency }, clock);
          const ceilings: [number, number][] = [[clock.now(), 30]];
          const b = busy(area, clock, concurrency);
          for (const c of changes) {
            await clock.sleep(c.after);
            area.setLimit(c.limit);
            ceilings.push([clock.now(), c.limit]);
          }
          await clock.sleep(WINDOW);
          b.stop();
          // The requests still waiting start under a last ceiling.
          area.setLimit(30);
          ceilings.push([clock.now(), 30]);
          await clock.sleep(WINDOW);
          for (const start of b.starts) {
            const window = b.starts.filter((s) => s >= start && s < start + WINDOW).length;
            const highest = Math.max(
              ...ceilings
                .filter(([at], i) => at < start + WINDOW && (ceilings[i + 1]?.[0] ?? Infinity) > start)
                .map(([, l]) => l),
            );
            expect(window, `from ${start}`).to.be.at.most(Math.max(highest, 0));
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});
