/**
 * The rate budget of an area on a virtual clock: N requests at R per second never exceed R starts in any
 * sliding one-second window, and finish in about N/R seconds; concurrency bounds the requests in flight;
 * `throttled()` pauses the area and halves its rate, which then recovers additively, a twentieth of the budget
 * per window without a 429, up to the budget and no further.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { VirtualClock } from '../../src/clock.js';
import { AreaBudget, DEFAULT_WINDOW_MS } from '../../src/rate/area.js';

const WINDOW = DEFAULT_WINDOW_MS;

/** The most starts found in any window of `width` ms (sliding, not aligned). */
function maxInWindow(starts: number[], width: number): number {
  const s = [...starts].sort((a, b) => a - b);
  let best = 0;
  let lo = 0;
  for (let hi = 0; hi < s.length; hi++) {
    while (s[hi]! - s[lo]! >= width) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}

async function runAll(area: AreaBudget, clock: VirtualClock, n: number, taskMs = 0): Promise<number[]> {
  const starts: number[] = [];
  await Promise.all(
    Array.from({ length: n }, () =>
      area.run(async () => {
        starts.push(clock.now());
        if (taskMs) await clock.sleep(taskMs);
      }),
    ),
  );
  return starts;
}

describe('rate budget of an area (virtual clock)', () => {
  it('100 requests at 10/s: never more than 10 starts in any one-second window, done in about 10 s', async () => {
    const clock = new VirtualClock();
    const area = new AreaBudget('loc', { requestsPerSecond: 10, concurrency: 10 }, clock);
    const t0 = clock.now();
    const starts = await runAll(area, clock, 100);
    expect(starts).to.have.length(100);
    expect(maxInWindow(starts, 1000)).to.be.at.most(10);
    expect(maxInWindow(starts, WINDOW)).to.be.at.most(10);
    const elapsed = clock.now() - t0;
    // N/R = 10 s: the last start is due at (N - 1) spacings of WINDOW / R; allow the window's margin.
    expect(elapsed).to.be.within(9_000, 10 * WINDOW);
    expect(area.stats.started).to.equal(100);
  });

  it('holds for any N, R and concurrency, with tasks that take time (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 150 }),
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 0, max: 300 }),
        async (n, rate, concurrency, taskMs) => {
          const clock = new VirtualClock();
          const area = new AreaBudget('m2m', { requestsPerSecond: rate, concurrency }, clock);
          const t0 = clock.now();
          const starts = await runAll(area, clock, n, taskMs);
          expect(maxInWindow(starts, 1000)).to.be.at.most(rate);
          // Finishing takes about N/R seconds (or longer when concurrency is the bound), never much less.
          const lastStart = Math.max(...starts) - t0;
          expect(lastStart).to.be.at.least(Math.floor((n - 1) / rate) * 1000);
          const byRate = ((n - 1) / rate) * WINDOW;
          const byConcurrency = Math.ceil(n / concurrency) * taskMs;
          expect(lastStart).to.be.at.most(Math.max(byRate, byConcurrency) + WINDOW + taskMs);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('bounds the requests in flight by its concurrency', async () => {
    const clock = new VirtualClock();
    const area = new AreaBudget('dm', { requestsPerSecond: 1000, concurrency: 3 }, clock);
    let inFlight = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 30 }, () =>
        area.run(async () => {
          most = Math.max(most, ++inFlight);
          await clock.sleep(100);
          inFlight--;
        }),
      ),
    );
    expect(most).to.equal(3);
  });

  it('throttled(): pauses for Retry-After, halves the rate, and recovers additively up to the budget', async () => {
    const clock = new VirtualClock();
    const area = new AreaBudget('loc', { requestsPerSecond: 20, concurrency: 5 }, clock);
    await runAll(area, clock, 1);
    const t429 = clock.now();
    area.throttled(2_000);
    expect(area.currentRate).to.equal(10);
    expect(area.stats.throttled).to.equal(1);

    // Nothing starts during the pause.
    const [first] = await runAll(area, clock, 1);
    expect(first! - t429).to.be.at.least(2_000);

    // One window after the pause: +1 (a twentieth of 20). Rates are read when a request asks for a start.
    const rates: number[] = [area.currentRate];
    for (let w = 0; w < 12; w++) {
      await clock.sleep(WINDOW);
      await runAll(area, clock, 1);
      rates.push(area.currentRate);
    }
    expect(rates[0]).to.equal(10);
    for (let i = 1; i < rates.length; i++) {
      expect(rates[i]! - rates[i - 1]!, `step ${i}: ${rates.join(', ')}`).to.be.oneOf([0, 1]);
    }
    expect(rates.at(-1), 'whole again, and no more').to.equal(20);
    expect(Math.max(...rates)).to.equal(20);
    // Additive: it took about ten windows, not one.
    expect(rates.filter((r) => r < 20).length).to.be.at.least(9);
  });

  it('after throttled() the gate really runs at the lower rate', async () => {
    const clock = new VirtualClock();
    const area = new AreaBudget('loc', { requestsPerSecond: 20, concurrency: 20 }, clock);
    area.throttled(0);
    const starts = await runAll(area, clock, 30);
    expect(maxInWindow(starts.slice(0, 10), 1000)).to.be.at.most(10);
    // Some windows later the rate has recovered somewhat, but never past the budget.
    expect(maxInWindow(starts, 1000)).to.be.at.most(20);
  });

  it('429s in separate windows halve the rate down to the floor, never below it', async () => {
    const clock = new VirtualClock();
    const area = new AreaBudget(
      'subsc',
      { requestsPerSecond: 16, concurrency: 1, minRequestsPerSecond: 2 },
      clock,
    );
    const seen: number[] = [];
    for (let i = 0; i < 6; i++) {
      area.throttled(0);
      seen.push(area.currentRate);
      await clock.sleep(WINDOW);
      // Recovery adds a twentieth of the budget per window; throttle again before reading it back.
    }
    expect(seen.slice(0, 3)).to.deep.equal([8, 4, 2]);
    expect(Math.min(...seen)).to.equal(2);
  });

  it('429s from requests in flight together halve the rate once, not once each', () => {
    const area = new AreaBudget('m2m', { requestsPerSecond: 64, concurrency: 50 }, new VirtualClock());
    for (let i = 0; i < 50; i++) area.throttled(1000);
    expect(area.currentRate).to.equal(32);
  });

  it('starts a request in the turn it is asked for when a slot and the budget are free', () => {
    // 5,000/s: starts 0.2 ms apart, within the clock's millisecond.
    const area = new AreaBudget('m2m', { requestsPerSecond: 5000, concurrency: 2 }, new VirtualClock());
    const started: number[] = [];
    for (let i = 0; i < 3; i++) void area.run(async () => void started.push(i));
    // The third waits for a slot, not for the event loop.
    expect(started).to.deep.equal([0, 1]);
    expect(area.pending).to.equal(3);
  });

  it('a request asked for while others wait for the budget starts after them, in order', async () => {
    const clock = new VirtualClock();
    const area = new AreaBudget('loc', { requestsPerSecond: 2, concurrency: 10 }, clock);
    const order: string[] = [];
    const run = (name: string) => area.run(async () => void order.push(name));
    const first = [run('a'), run('b'), run('c')];
    // 'c' waits for the window; once it is free again, a new request must not start before 'c'.
    await first[1];
    expect(order).to.deep.equal(['a', 'b']);
    await clock.sleep(1_100);
    await Promise.all([...first, run('d')]);
    expect(order).to.deep.equal(['a', 'b', 'c', 'd']);
    expect(area.pending).to.equal(0);
  });

  it('a request cancelled while it waits frees its slot and does not hold those behind it', async () => {
    const clock = new VirtualClock();
    const area = new AreaBudget('dm', { requestsPerSecond: 1, concurrency: 1 }, clock);
    await area.run(async () => undefined);
    const cancel = new AbortController();
    const waiting = area.run(async () => 'never', cancel.signal);
    const behind = area.run(async () => 'ran');
    cancel.abort(new Error('cancelled'));
    const error = await waiting.then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error?.message).to.equal('cancelled');
    expect(await behind).to.equal('ran');
    expect(area.pending).to.equal(0);
  });

  it('refuses bad options with a clear message', () => {
    expect(() => new AreaBudget('x', { requestsPerSecond: 0, concurrency: 1 })).to.throw(
      /Expected `requestsPerSecond` for area x to be a number from 1 and up, got `0`/,
    );
    expect(() => new AreaBudget('x', { requestsPerSecond: 1, concurrency: 1.5 })).to.throw(
      /Expected `concurrency` for area x to be an integer from 1 and up, got `1.5`/,
    );
  });
});
