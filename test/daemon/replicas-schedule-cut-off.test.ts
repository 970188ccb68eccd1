/**
 * A schedule's fire of several runs (`missed: all` after a downtime) stores them one by one, each with its fire
 * time. One replica's fire cut off after its first run (its store gone a moment), or still going on, was gone on
 * with by another replica, which found that run unfinished and took it for a previous run still running: it
 * skipped the fire and recorded it as handled, and the first replica's retry was refused by the store. The nights
 * after the first were never run. Two schedulers, each on its own store of one PostgreSQL database, as two
 * replicas; their clock is a fake one of their own (the store's client keeps the real timers), moved by the test.
 */
import { createClock } from '@sinonjs/fake-timers';
import { expect } from 'chai';
import type { Clock } from '../../src/clock.js';
import { unfinishedScheduled } from '../../src/daemon/fire-time.js';
import { Scheduler, type ScheduleEntry, type SchedulerOptions } from '../../src/daemon/scheduler.js';
import type { Logger } from '../../src/log.js';
import type { Store } from '../../src/store/store.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { postgresUrl } from '../helpers/postgres.js';
import { daemonRun } from '../helpers/scheduled.js';

const NIGHTLY: ScheduleEntry = { key: 'nightly#0', playbook: 'nightly', cron: '0 6 * * *', missed: 'all' };
/** The daemon's last fire, before a downtime of three nights. */
const LAST = '2026-03-07T06:00:00.000Z';
const NIGHTS = ['2026-03-08T06:00:00.000Z', '2026-03-09T06:00:00.000Z', '2026-03-10T06:00:00.000Z'];
const away = () => Promise.reject(new Error('connection terminated unexpectedly'));

/** A replica's scheduler, and what the test waits for: its first wait at or after a time (ms). */
interface Replica {
  scheduler: Scheduler;
  waits: { at: number; done: () => void }[];
}

describe('daemon scheduler: a fire of several runs cut off part way, gone on with by another replica', function () {
  // The first test starts the PostgreSQL server.
  this.timeout(60_000);
  let fake: ReturnType<typeof createClock>;
  let replicas: Replica[];
  /** The two replicas' stores: one database. */
  let first: Store;
  let second: Store;
  /** The log lines of both, `message` and the fire time. */
  let lines: string[];
  /** `key at` of each fire a scheduler reported skipped. */
  let skipped: string[];

  beforeEach(async () => {
    const url = await postgresUrl();
    first = await openPostgresStore(url);
    second = await openPostgresStore(url);
    await first.recordFire(NIGHTLY.key, LAST);
    fake = createClock(Date.parse('2026-03-10T12:00:00.000Z'));
    replicas = [];
    lines = [];
    skipped = [];
  });

  afterEach(async () => {
    for (const r of replicas) r.scheduler.stop();
    await first.close();
    await second.close();
  });

  /** A replica's clock: the fake one's time and timers; each wait says so to those of `waits` it is for. */
  const clockOf = (waits: Replica['waits']): Clock => ({
    now: () => fake.now,
    sleep: (ms, signal) =>
      new Promise((resolve, reject) => {
        for (const w of waits.filter((x) => fake.now >= x.at)) {
          waits.splice(waits.indexOf(w), 1);
          w.done();
        }
        const stop = () => {
          fake.clearTimeout(id);
          reject(signal?.reason as Error);
        };
        const id = fake.setTimeout(() => {
          signal?.removeEventListener('abort', stop);
          resolve();
        }, ms);
        signal?.addEventListener('abort', stop, { once: true });
      }),
    timer: (ms, fire) => {
      const id = fake.setTimeout(fire, ms);
      return () => fake.clearTimeout(id);
    },
  });

  const logger: Logger = {
    debug: () => undefined,
    info: (m, meta) => lines.push(`${m} ${String(meta?.scheduledAt)}`),
    warn: (m, meta) => lines.push(`${m} ${String(meta?.scheduledAt)}`),
    error: (m) => lines.push(m),
    child: () => logger,
  };

  /** A replica's scheduler of the nightly schedule on `store` (its fires' store: `fires`), started. */
  async function replica(store: Store, fires: SchedulerOptions['store'] = store): Promise<Replica> {
    const waits: Replica['waits'] = [];
    const s = new Scheduler({
      clock: clockOf(waits),
      store: fires,
      entries: [NIGHTLY],
      makeRun: daemonRun,
      // As the daemon's: the scheduled runs queued or running in the store (none of these is executed).
      unfinished: (e) => unfinishedScheduled(store, e.playbook),
      started: () => undefined,
      skipped: (e, at) => skipped.push(`${e.key} ${at.toISOString()}`),
      logger,
    });
    const r = { scheduler: s, waits };
    replicas.push(r);
    await s.start();
    return r;
  }

  /** Moves the clock by `ms`, and waits until each of `of` waits again after it: its fires then are done. */
  async function pass(ms: number, ...of: Replica[]): Promise<void> {
    const at = fake.now + ms;
    const done = of.map((r) => new Promise<void>((resolve) => r.waits.push({ at, done: resolve })));
    await fake.tickAsync(ms);
    await Promise.all(done);
  }

  /** The fire time of each run in the store, in order. */
  async function nights(store: Store): Promise<string[]> {
    return (await store.listRuns({ limit: 100 }))
      .map((r) => (r.trigger as { scheduledAt: string }).scheduledAt)
      .sort();
  }

  it("the other replica's retry first: every night's run stored once, none skipped", async () => {
    // The first replica's store goes away after the first of its three runs is stored.
    let runs = 0;
    const partway: SchedulerOptions['store'] = {
      lastFire: (key) => first.lastFire(key),
      recordFire: (key, at, run) => (run && ++runs === 2 ? away() : first.recordFire(key, at, run)),
    };
    const a = await replica(first, partway);
    expect(await nights(first)).to.deep.equal(NIGHTS.slice(0, 1));
    // The second replica starts before the first tries again.
    const b = await replica(second);
    expect(await nights(second)).to.deep.equal(NIGHTS);
    // The first one's retry finds the nights stored.
    await pass(5_000, a);
    expect(await nights(first)).to.deep.equal(NIGHTS);
    expect(lines.filter((l) => l.startsWith('skipped'))).to.deep.equal([]);
    expect(skipped).to.deep.equal([]);
    expect(await first.lastFire(NIGHTLY.key)).to.equal(NIGHTS[2]);
    // Its runs, the fire stored through its end, hold the next night back as any previous run, on both.
    await pass(Date.parse('2026-03-11T06:00:00.000Z') - fake.now, a, b);
    expect(await nights(first)).to.deep.equal(NIGHTS);
    expect(skipped).to.deep.equal(['nightly#0 2026-03-11T06:00:00.000Z']);
  });

  it("a replica's catch-up in the middle of the other's fire: every night's run stored once", async () => {
    // The second replica starts between the first one's first and second runs' writes.
    let runs = 0;
    const between: SchedulerOptions['store'] = {
      lastFire: (key) => first.lastFire(key),
      recordFire: async (key, at, run) => {
        if (run && ++runs === 2) await replica(second);
        return first.recordFire(key, at, run);
      },
    };
    await replica(first, between);
    expect(await nights(first)).to.deep.equal(NIGHTS);
    expect(lines.filter((l) => l.startsWith('skipped'))).to.deep.equal([]);
    expect(skipped).to.deep.equal([]);
  });
});
