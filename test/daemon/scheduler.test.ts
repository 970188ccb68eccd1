/**
 * The daemon's cron scheduler: time zones, the missed-run policies after downtime, overlap, and a fire's run
 * stored with its fire time. A real SqliteStore; the scheduler waits on fake timers.
 *
 * Each schedule arms one setTimeout on its clock (systemClock unless a test injects one), up to its next
 * occurrence or `maxWait` (a minute by default), and reads the time from the clock. `Date`, `setTimeout` and
 * `clearTimeout` are faked, with no `shouldAdvanceTime`: time moves only when a test moves it. A fire happens a
 * promise hop after its timer, so tests use `tickAsync`, which lets promise callbacks run between timers, or
 * `jump` (a frozen process resuming) followed by `tickAsync(0)`. Promise jobs and `process.nextTick` stay real
 * (fake-timers leaves them alone by default).
 */
import { install, type Clock } from '@sinonjs/fake-timers';
import { expect } from 'chai';
import { VirtualClock, type Clock as EngineClock } from '../../src/clock.js';
import {
  Scheduler,
  type FireReason,
  type ScheduleEntry,
  type SchedulerOptions,
} from '../../src/daemon/scheduler.js';
import { unfinishedScheduled } from '../../src/daemon/fire-time.js';
import type { Logger } from '../../src/log.js';
import { checkCron, compileCron } from '../../src/playbook/cron.js';
import { scheduleProblems } from '../../src/playbook/schedule.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { RunRecord } from '../../src/store/store.js';
import { daemonRun } from '../helpers/scheduled.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  message: string;
  meta?: Record<string, unknown>;
}

function recordingLogger(lines: LogLine[]): Logger {
  const at =
    (level: LogLine['level']) =>
    (message: string, meta?: Record<string, unknown>): void => {
      lines.push({ level, message, meta });
    };
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: () => recordingLogger(lines),
  };
}

/** The trigger scheduledRun stores, to read back when and why a run was fired. */
interface Trigger {
  type: 'schedule';
  schedule: string;
  cron: string;
  scheduledAt: string;
  reason: FireReason;
}

describe('daemon scheduler', () => {
  let clock: Clock;
  let store: SqliteStore;
  let scheduler: Scheduler | undefined;
  let started: RunRecord[];
  /** `key at` of each fire the scheduler reported skipped. */
  let skipped: string[];
  let logs: LogLine[];

  beforeEach(() => {
    store = new SqliteStore(':memory:');
    started = [];
    skipped = [];
    logs = [];
  });

  afterEach(async () => {
    scheduler?.stop();
    scheduler = undefined;
    clock?.uninstall();
    await store.close();
  });

  function at(iso: string): void {
    clock = install({ now: Date.parse(iso), toFake: ['Date', 'setTimeout', 'clearTimeout'] });
  }

  function entry(e: Partial<ScheduleEntry> & Pick<ScheduleEntry, 'cron'>): ScheduleEntry {
    return { key: 'nightly#0', playbook: 'nightly', ...e };
  }

  /** A scheduler of `entries`, started: the missed runs are handled once this resolves. */
  async function startScheduler(
    entries: ScheduleEntry[],
    o: {
      unfinished?: SchedulerOptions['unfinished'];
      makeRun?: (e: ScheduleEntry, at: Date, reason: FireReason) => RunRecord;
      maxCatchUp?: number;
      clock?: EngineClock;
      maxWait?: number;
      store?: SchedulerOptions['store'];
    } = {},
  ): Promise<Scheduler> {
    const s = new Scheduler({
      ...(o.clock ? { clock: o.clock } : {}),
      ...(o.maxWait ? { maxWait: o.maxWait } : {}),
      store: o.store ?? store,
      entries,
      makeRun: o.makeRun ?? daemonRun,
      unfinished: o.unfinished ?? (() => []),
      started: (run) => started.push(run),
      skipped: (e, at) => skipped.push(`${e.key} ${at.toISOString()}`),
      logger: recordingLogger(logs),
      maxCatchUp: o.maxCatchUp,
    });
    scheduler = s;
    await s.start();
    return s;
  }

  /** [scheduledAt, reason] of each run handed to the pool (of one playbook when given), in order. */
  function fired(playbook?: string): [string, FireReason][] {
    return started
      .filter((r) => playbook === undefined || r.playbook === playbook)
      .map((r) => {
        const t = r.trigger as Trigger;
        return [t.scheduledAt, t.reason];
      });
  }

  /** [scheduledAt, status] of each run handed to the pool, as the store holds it. */
  async function stored(): Promise<[string, string | undefined][]> {
    return Promise.all(
      started.map(async (r): Promise<[string, string | undefined]> => {
        const run = await store.getRun(r.id);
        return [(run?.trigger as Trigger | undefined)?.scheduledAt ?? 'not stored', run?.status];
      }),
    );
  }

  describe('time zones', () => {
    it('fires 0 2 * * * in America/New_York at 07:00Z in winter, not at 02:00Z', async () => {
      at('2026-01-15T00:00:00.000Z');
      const s = await startScheduler([entry({ cron: '0 2 * * *', timezone: 'America/New_York' })]);
      expect(s.next()).to.deep.equal([
        { key: 'nightly#0', playbook: 'nightly', next: '2026-01-15T07:00:00.000Z' },
      ]);

      await clock.tickAsync(3 * HOUR); // past 02:00Z
      expect(fired()).to.deep.equal([]);
      expect(await store.lastFire('nightly#0')).to.equal('2026-01-15T00:00:00.000Z');

      await clock.tickAsync(4 * HOUR); // 07:00Z
      expect(fired()).to.deep.equal([['2026-01-15T07:00:00.000Z', 'schedule']]);
      expect(await store.lastFire('nightly#0')).to.equal('2026-01-15T07:00:00.000Z');
    });

    it('fires it at 06:00Z in summer (EDT)', async () => {
      at('2026-07-15T00:00:00.000Z');
      await startScheduler([entry({ cron: '0 2 * * *', timezone: 'America/New_York' })]);
      await clock.tickAsync(6 * HOUR - 1);
      expect(fired()).to.deep.equal([]);
      await clock.tickAsync(1);
      expect(fired()).to.deep.equal([['2026-07-15T06:00:00.000Z', 'schedule']]);
    });

    it('defaults to UTC', async () => {
      at('2026-01-15T00:00:00.000Z');
      await startScheduler([entry({ cron: '0 2 * * *' })]);
      await clock.tickAsync(2 * HOUR);
      expect(fired()).to.deep.equal([['2026-01-15T02:00:00.000Z', 'schedule']]);
    });
  });

  describe('missed runs after downtime', () => {
    // Daily at 06:00 UTC, last fired three occurrences ago.
    const lastFire = '2026-03-07T06:00:00.000Z';
    const now = '2026-03-10T12:00:00.000Z';

    async function downFor3Days(missed: ScheduleEntry['missed'], maxCatchUp?: number): Promise<void> {
      at(now);
      await store.recordFire('nightly#0', lastFire);
      await startScheduler([entry({ cron: '0 6 * * *', missed })], { maxCatchUp });
    }

    it('latest (the default) fires one run, for the latest occurrence', async () => {
      await downFor3Days(undefined);
      expect(fired()).to.deep.equal([['2026-03-10T06:00:00.000Z', 'missed']]);
      expect(await store.lastFire('nightly#0')).to.equal('2026-03-10T06:00:00.000Z');
      expect(await stored()).to.deep.equal([['2026-03-10T06:00:00.000Z', 'queued']]);
      const line = logs.find((l) => l.message === 'runs missed while down');
      expect(line?.meta).to.include({ playbook: 'nightly', policy: 'latest', missed: 3, fired: 1 });
    });

    it('all fires one run per occurrence, oldest first', async () => {
      await downFor3Days('all');
      expect(fired()).to.deep.equal([
        ['2026-03-08T06:00:00.000Z', 'missed'],
        ['2026-03-09T06:00:00.000Z', 'missed'],
        ['2026-03-10T06:00:00.000Z', 'missed'],
      ]);
      expect(await store.lastFire('nightly#0')).to.equal('2026-03-10T06:00:00.000Z');
      expect(await stored()).to.deep.equal([
        ['2026-03-08T06:00:00.000Z', 'queued'],
        ['2026-03-09T06:00:00.000Z', 'queued'],
        ['2026-03-10T06:00:00.000Z', 'queued'],
      ]);
    });

    it('all fires at most maxCatchUp runs: the most recent, and drops the older ones', async () => {
      await downFor3Days('all', 2);
      expect(fired()).to.deep.equal([
        ['2026-03-09T06:00:00.000Z', 'missed'],
        ['2026-03-10T06:00:00.000Z', 'missed'],
      ]);
      expect(await store.lastFire('nightly#0')).to.equal('2026-03-10T06:00:00.000Z');
      const line = logs.find((l) => l.message === 'runs missed while down');
      expect(line?.meta).to.include({ policy: 'all', missed: 'more than 2', fired: 2 });
    });

    it('none fires nothing, and records the latest occurrence as the last fire', async () => {
      await downFor3Days('none');
      expect(fired()).to.deep.equal([]);
      expect(await store.listRuns()).to.deep.equal([]);
      expect(await store.lastFire('nightly#0')).to.equal('2026-03-10T06:00:00.000Z');
    });

    it('lists the missed occurrences in the time zone of the schedule', async () => {
      at('2026-01-15T12:00:00.000Z');
      await store.recordFire('nightly#0', '2026-01-13T07:00:00.000Z');
      await startScheduler([entry({ cron: '0 2 * * *', timezone: 'America/New_York', missed: 'all' })]);
      expect(fired()).to.deep.equal([
        ['2026-01-14T07:00:00.000Z', 'missed'],
        ['2026-01-15T07:00:00.000Z', 'missed'],
      ]);
    });

    it('when day of month and day of week are both set, lists the days that match both', async () => {
      // 06:00 on a 1st that is a Monday: 2026-06-01; not the other Mondays (05-25, 06-08), as Vixie cron would.
      at('2026-06-10T00:00:00.000Z');
      await store.recordFire('nightly#0', '2026-05-20T00:00:00.000Z');
      await startScheduler([entry({ cron: '0 6 1 * 1', missed: 'all' })]);
      expect(fired()).to.deep.equal([['2026-06-01T06:00:00.000Z', 'missed']]);
    });

    it('fires nothing when nothing was missed', async () => {
      at(now);
      await store.recordFire('nightly#0', '2026-03-10T06:00:00.000Z');
      await startScheduler([entry({ cron: '0 6 * * *', missed: 'all' })]);
      expect(fired()).to.deep.equal([]);
      expect(await store.lastFire('nightly#0')).to.equal('2026-03-10T06:00:00.000Z');
    });
  });

  it('on first start fires nothing and records now as the baseline', async () => {
    at('2026-03-10T12:34:56.789Z');
    await startScheduler([entry({ cron: '* * * * *', missed: 'all' })]);
    expect(fired()).to.deep.equal([]);
    expect(await store.listRuns()).to.deep.equal([]);
    expect(await store.lastFire('nightly#0')).to.equal('2026-03-10T12:34:56.789Z');
    // The baseline is the start of history: the next start counts from it.
    await clock.tickAsync(4 * 1000);
    expect(fired()).to.deep.equal([['2026-03-10T12:35:00.000Z', 'schedule']]);
  });

  describe('overlap', () => {
    /** An unfinished run of the schedule, of the night before. */
    const previous = daemonRun(
      entry({ cron: '* * * * *' }),
      new Date('2026-03-09T12:00:00.000Z'),
      'schedule',
    );

    it('a tick while the previous run is unfinished stores no run, and records the fire', async () => {
      at('2026-03-10T12:00:00.000Z');
      await startScheduler([entry({ cron: '* * * * *' })], { unfinished: () => [previous] });
      await clock.tickAsync(MINUTE);
      expect(fired()).to.deep.equal([]);
      expect(await store.listRuns()).to.deep.equal([]);
      expect(await store.lastFire('nightly#0')).to.equal('2026-03-10T12:01:00.000Z');
      const line = logs.find((l) => l.level === 'warn');
      expect(line?.message).to.equal('skipped: previous run still running');
      expect(line?.meta).to.include({
        playbook: 'nightly',
        scheduledAt: '2026-03-10T12:01:00.000Z',
        runId: previous.id,
        previous: 'schedule',
      });
      // Counted (fleetbook_schedule_fires_skipped_total) by the process that claimed the fire.
      expect(skipped).to.deep.equal(['nightly#0 2026-03-10T12:01:00.000Z']);
    });

    it("a skipped fire another process claimed first is that process's to count", async () => {
      at('2026-03-10T12:00:00.000Z');
      await startScheduler([entry({ cron: '* * * * *' })], { unfinished: () => [previous] });
      // A replica skipped the 12:01 fire and recorded it first.
      await store.recordFire('nightly#0', '2026-03-10T12:01:00.000Z');
      await clock.tickAsync(MINUTE);
      expect(logs.filter((l) => l.level === 'warn')).to.have.length(1);
      expect(skipped).to.deep.equal([]);
    });

    it('with overlap: true, the tick stores and starts a run anyway', async () => {
      at('2026-03-10T12:00:00.000Z');
      await startScheduler([entry({ cron: '* * * * *', overlap: true })], { unfinished: () => [previous] });
      await clock.tickAsync(MINUTE);
      expect(fired()).to.deep.equal([['2026-03-10T12:01:00.000Z', 'schedule']]);
      expect(await stored()).to.deep.equal([['2026-03-10T12:01:00.000Z', 'queued']]);
    });

    it('also holds back the missed runs on start', async () => {
      at('2026-03-10T12:00:00.000Z');
      await store.recordFire('nightly#0', '2026-03-08T06:00:00.000Z');
      await startScheduler([entry({ cron: '0 6 * * *', missed: 'all' })], { unfinished: () => [previous] });
      expect(fired()).to.deep.equal([]);
      expect(await store.lastFire('nightly#0')).to.equal('2026-03-10T06:00:00.000Z');
    });
  });

  describe('a fire', () => {
    it('stores its run (queued) in the same transaction as the fire time, then starts it', async () => {
      at('2026-03-10T12:00:00.000Z');
      await startScheduler([entry({ cron: '* * * * *' })]);
      await clock.tickAsync(MINUTE);
      expect(await store.lastFire('nightly#0')).to.equal('2026-03-10T12:01:00.000Z');
      expect(started).to.have.length(1);
      const run = await store.getRun((started[0] as RunRecord).id);
      expect(run?.status).to.equal('queued');
      expect(run?.playbook).to.equal('nightly');
      expect(run?.owner).to.equal('scheduler-test');
      expect(run?.inputs).to.deep.equal({});
      expect(run?.startedAt).to.equal('2026-03-10T12:01:00.000Z');
      expect(run?.trigger).to.deep.equal({
        type: 'schedule',
        schedule: 'nightly#0',
        cron: '* * * * *',
        scheduledAt: '2026-03-10T12:01:00.000Z',
        reason: 'schedule',
      });
    });

    it('records the occurrence, not the moment a late timer ran', async () => {
      at('2026-03-10T12:00:00.000Z');
      await startScheduler([entry({ cron: '* * * * *' })]);
      // The process resumes 1.7 s after the occurrence (a busy event loop): the fire happens late, and keeps its
      // occurrence as its time.
      clock.jump(MINUTE + 1700);
      await clock.tickAsync(0);
      expect(fired()).to.deep.equal([['2026-03-10T12:01:00.000Z', 'schedule']]);
      expect(await store.lastFire('nightly#0')).to.equal('2026-03-10T12:01:00.000Z');
    });

    it('applies the missed policy to occurrences passed while the process was frozen', async () => {
      at('2026-03-10T12:00:00.000Z');
      await startScheduler([
        entry({ cron: '* * * * *', missed: 'all' }),
        entry({ key: 'other#0', playbook: 'other', cron: '* * * * *' }), // latest
      ]);
      clock.jump(3.5 * MINUTE);
      await clock.tickAsync(0);
      // Each schedule fires in order; the two schedules' fires, each awaiting the store, may interleave.
      expect(fired('nightly')).to.deep.equal([
        ['2026-03-10T12:01:00.000Z', 'missed'],
        ['2026-03-10T12:02:00.000Z', 'missed'],
        ['2026-03-10T12:03:00.000Z', 'schedule'],
      ]);
      expect(fired('other')).to.deep.equal([['2026-03-10T12:03:00.000Z', 'schedule']]);
      expect(started).to.have.length(4);
      expect(await store.lastFire('other#0')).to.equal('2026-03-10T12:03:00.000Z');
    });

    it('never throws out of the task: a failing makeRun is logged, and its fire tried again', async () => {
      at('2026-03-10T12:00:00.000Z');
      let fail = true;
      await startScheduler([entry({ cron: '* * * * *' })], {
        makeRun: (e, at, reason) => {
          if (fail) throw new Error('boom');
          return daemonRun(e, at, reason);
        },
      });
      await clock.tickAsync(MINUTE);
      expect(logs.find((l) => l.level === 'error')?.meta).to.include({ playbook: 'nightly', error: 'boom' });
      expect(await store.lastFire('nightly#0')).to.equal('2026-03-10T12:00:00.000Z');
      fail = false;
      await clock.tickAsync(MINUTE);
      expect(fired()).to.deep.equal([
        ['2026-03-10T12:01:00.000Z', 'schedule'],
        ['2026-03-10T12:02:00.000Z', 'schedule'],
      ]);
    });
  });

  it('stop() stops every task and leaves no timer', async () => {
    at('2026-03-10T12:00:00.000Z');
    const s = await startScheduler([
      entry({ cron: '* * * * *' }),
      entry({ key: 'other#0', playbook: 'other', cron: '0 2 * * *', timezone: 'Europe/Paris' }),
    ]);
    expect(clock.countTimers()).to.equal(2);
    s.stop();
    expect(clock.countTimers()).to.equal(0);
    expect(s.next().map((n) => n.next)).to.deep.equal([undefined, undefined]);
    await clock.tickAsync(HOUR);
    expect(fired()).to.deep.equal([]);
  });

  describe('the clock', () => {
    it('waits on the injected clock, waking up at least every maxWait to read it again', async () => {
      at('2026-03-10T12:00:00.000Z'); // fake timers, which this scheduler does not use
      const virtual = new VirtualClock(Date.parse('2026-03-10T12:00:00.000Z'));
      await startScheduler([entry({ cron: '0 6 * * *' })], { clock: virtual });
      for (let i = 0; i < 10_000 && !started.length; i++) await new Promise((r) => setImmediate(r));
      expect(fired()).to.deep.equal([['2026-03-11T06:00:00.000Z', 'schedule']]);
      expect(virtual.now()).to.equal(Date.parse('2026-03-11T06:00:00.000Z'));
      // 18 h in waits of at most a minute (the default maxWait).
      expect(virtual.sleeps.slice(0, 1080).reduce((a, b) => a + b, 0)).to.equal(18 * HOUR);
      expect(Math.max(...virtual.sleeps)).to.equal(MINUTE);
    });

    it('a step of the wall clock past an occurrence fires it within maxWait, and the policy applies to the others', async () => {
      at('2026-03-10T12:00:00.000Z');
      await startScheduler([entry({ cron: '0 * * * *', missed: 'all' })]);
      // The wall clock jumps 3 hours ahead while the timer (on a monotonic clock) is mid-wait.
      clock.setSystemTime(Date.parse('2026-03-10T15:00:30.000Z'));
      await clock.tickAsync(MINUTE);
      expect(fired()).to.deep.equal([
        ['2026-03-10T13:00:00.000Z', 'missed'],
        ['2026-03-10T14:00:00.000Z', 'missed'],
        ['2026-03-10T15:00:00.000Z', 'schedule'],
      ]);
    });

    it('a schedule that never fires arms no timer, and says so', async () => {
      at('2026-03-10T12:00:00.000Z');
      const s = await startScheduler([entry({ cron: '0 0 30 2 *' })]);
      expect(clock.countTimers()).to.equal(0);
      expect(s.next()[0]?.next).to.equal(undefined);
      expect(logs.find((l) => l.level === 'warn')?.message).to.equal('schedule has no further occurrence');
    });
  });

  describe('a store that fails for a while', () => {
    /** While set, each of the scheduler's calls to the store fails, as a database that went away. */
    let down = false;
    const away = () => Promise.reject(new Error('connection terminated unexpectedly'));
    const flaky = (): SchedulerOptions['store'] => ({
      lastFire: (key) => (down ? away() : store.lastFire(key)),
      recordFire: (key, at, run) => (down ? away() : store.recordFire(key, at, run)),
    });
    const failures = (what: string) => logs.filter((l) => l.level === 'error' && l.message === what).length;
    beforeEach(() => (down = false));

    it('fires an occurrence whose fire failed once the store answers again: tried at 5 s, then 10 s more', async () => {
      at('2026-01-15T00:00:00.000Z');
      await startScheduler([entry({ cron: '0 2 * * *' })], { store: flaky() });
      down = true;
      await clock.tickAsync(2 * HOUR + 10_000); // 02:00 fails, and 02:00:05
      expect(fired()).to.deep.equal([]);
      expect(failures('schedule fire failed; trying again')).to.equal(2);
      down = false;
      await clock.tickAsync(4_999);
      expect(fired(), 'before 02:00:15').to.deep.equal([]);
      await clock.tickAsync(1);
      expect(fired()).to.deep.equal([['2026-01-15T02:00:00.000Z', 'schedule']]);
      expect(await store.lastFire('nightly#0')).to.equal('2026-01-15T02:00:00.000Z');
      expect(await stored()).to.deep.equal([['2026-01-15T02:00:00.000Z', 'queued']]);
      // And on at the next occurrence, once.
      await clock.tickAsync(24 * HOUR);
      expect(fired().map(([t]) => t)).to.deep.equal(['2026-01-15T02:00:00.000Z', '2026-01-16T02:00:00.000Z']);
    });

    it("makes up a start's missed runs once the store answers again", async () => {
      at('2026-03-10T12:00:00.000Z');
      await store.recordFire('nightly#0', '2026-03-07T06:00:00.000Z');
      down = true;
      await startScheduler([entry({ cron: '0 6 * * *' })], { store: flaky() });
      expect(fired()).to.deep.equal([]);
      expect(failures('missed runs not applied; trying again')).to.equal(1);
      down = false;
      await clock.tickAsync(5_000);
      expect(fired()).to.deep.equal([['2026-03-10T06:00:00.000Z', 'missed']]);
      expect(await store.lastFire('nightly#0')).to.equal('2026-03-10T06:00:00.000Z');
    });

    it('applies the policy to an occurrence passed while its fire kept failing', async () => {
      at('2026-01-15T00:00:00.000Z');
      await startScheduler([entry({ cron: '*/10 * * * *', missed: 'all' })], { store: flaky() });
      down = true;
      // 00:10 fails, and its tries after 5, 10, 20, 40, 80, 160 s, then 00:15:15 (5 minutes after it, at most).
      await clock.tickAsync(21 * MINUTE);
      expect(fired()).to.deep.equal([]);
      down = false;
      await clock.tickAsync(5 * MINUTE);
      expect(fired()).to.deep.equal([
        ['2026-01-15T00:10:00.000Z', 'missed'],
        ['2026-01-15T00:20:00.000Z', 'schedule'],
      ]);
    });
    const nightly = entry({ cron: '0 6 * * *', missed: 'all' });
    const nights: [string, FireReason][] = [
      ['2026-03-08T06:00:00.000Z', 'missed'],
      ['2026-03-09T06:00:00.000Z', 'missed'],
      ['2026-03-10T06:00:00.000Z', 'missed'],
    ];
    /** As the daemon's: the scheduled runs queued or running in the store (none of these is executed). */
    const inStore: SchedulerOptions['unfinished'] = (e) => unfinishedScheduled(store, e.playbook);

    /**
     * The nightly schedule started after three nights down (`missed: all`), its store gone after the first of the
     * three runs is stored (its second run's write fails).
     */
    async function cutAfterFirst(): Promise<Scheduler> {
      at('2026-03-10T12:00:00.000Z');
      await store.recordFire('nightly#0', '2026-03-07T06:00:00.000Z');
      let runs = 0;
      const partway: SchedulerOptions['store'] = {
        lastFire: (key) => store.lastFire(key),
        recordFire: (key, at, run) => (run && ++runs === 2 ? away() : store.recordFire(key, at, run)),
      };
      const s = await startScheduler([nightly], { store: partway, unfinished: inStore });
      expect(fired()).to.deep.equal(nights.slice(0, 1));
      return s;
    }

    it('a fire stopped part way fires the rest when tried again, not held back by its own runs', async () => {
      await cutAfterFirst();
      await clock.tickAsync(5_000);
      expect(fired()).to.deep.equal(nights);
      expect(skipped).to.deep.equal([]);
      // Its own runs hold back no later fire: the next one on time is skipped while the first still runs.
      await clock.tickAsync(DAY);
      expect(fired()).to.have.length(3);
      expect(skipped).to.deep.equal(['nightly#0 2026-03-11T06:00:00.000Z']);
    });

    it('a fire stopped part way is held back when tried again by a backfill queued meanwhile', async () => {
      await cutAfterFirst();
      // `fleetbook run --scheduled-at` of the next night, queued before the fire is tried again.
      const backfill = daemonRun(nightly, new Date('2026-03-09T06:00:00.000Z'), 'backfill');
      store.createRun(backfill);
      await clock.tickAsync(5_000);
      expect(fired()).to.have.length(1);
      const line = logs.find((l) => l.message === 'skipped: previous run still running');
      expect(line?.meta).to.include({
        runId: backfill.id,
        previous: 'schedule, backfill for 2026-03-09T06:00:00Z',
      });
      expect(skipped).to.deep.equal(['nightly#0 2026-03-10T06:00:00.000Z']);
    });

    it('a fire cut off part way by a stop is gone on with by the next start, not held back by its runs', async () => {
      (await cutAfterFirst()).stop();
      // The next start finds that run unfinished (resumed), and the schedule's last fire at its night.
      await startScheduler([nightly], { unfinished: inStore });
      expect(fired()).to.deep.equal(nights);
      expect(skipped).to.deep.equal([]);
      expect(logs.filter((l) => l.message === 'skipped: previous run still running')).to.deep.equal([]);
    });
  });

  it('logs a schedule that cannot start and starts the others', async () => {
    at('2026-03-10T12:00:00.000Z');
    const s = await startScheduler([
      entry({ cron: '* * * * *', timezone: 'Mars/Olympus_Mons' }),
      entry({ key: 'other#0', playbook: 'other', cron: '* * * * *' }),
    ]);
    expect(logs.filter((l) => l.level === 'error').map((l) => l.meta?.playbook)).to.include('nightly');
    expect(s.next()[1]?.next).to.equal('2026-03-10T12:01:00.000Z');
    await clock.tickAsync(MINUTE);
    expect(started.map((r) => r.playbook)).to.deep.equal(['other']);
  });

  it("fires from the schedule the playbook's check compiled: each cron compiled once per process", () => {
    // A pair no other test uses: the check of the playbook (validate, the daemon's load) compiles it first.
    const cron = '17 3 * * 1-5';
    const timezone = 'Europe/Paris';
    expect(scheduleProblems({ cron, timezone })).to.deep.equal([]);
    const checked = checkCron(cron, timezone);
    // What the scheduler compiles when it arms the schedule: the same schedule, not a second compile.
    const armed = compileCron(cron, timezone);
    expect(checked.ok && armed.ok).to.equal(true);
    expect(armed.ok && armed.schedule).to.equal(checked.ok && checked.schedule);
    expect(compileCron(cron, timezone)).to.equal(armed);
  });
});
