/**
 * A daemon down across a DST fall-back ran a daily job twice with `missed: all`: the missed-run list held the
 * repeated wall-clock time twice, while the live scheduler fired it once. Now one engine gives both, and a
 * wall-clock time that DST repeats fires once, at its first occurrence.
 *
 * The time zones: America/New_York falls back one hour on 2026-11-01 (02:00 EDT → 01:00 EST, at 06:00Z) and
 * springs forward on 2026-03-08 (02:00 EST → 03:00 EDT, at 07:00Z); Australia/Lord_Howe falls back half an hour
 * on 2026-04-05 (02:00 +11 → 01:30 +10:30, at 2026-04-04T15:00Z) and springs forward on 2026-10-04
 * (02:00 +10:30 → 02:30 +11, at 2026-10-03T15:30Z).
 *
 * A wall-clock time that DST skips: a schedule that names its times (no `*` or step in its seconds, minutes and
 * hours, like `30 2 * * *`) fires once when the clock jumps, at the end of the gap, so that a daily job still
 * runs that day; a repeating one (`*\/30 * * * *`) has no fires in the gap.
 */
import { install, type Clock } from '@sinonjs/fake-timers';
import { expect } from 'chai';
import { Scheduler, type ScheduleEntry } from '../../src/daemon/scheduler.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { daemonRun } from '../helpers/scheduled.js';

const KEY = 'daily#0';

interface Case {
  cron: string;
  timezone: string;
  /** The last fire the store holds when the daemon restarts (and when the live scheduler starts). */
  from: string;
  /** When the daemon restarts (and how long the live scheduler runs). */
  to: string;
  fires: string[];
}

const FALL_BACK: Record<string, Case> = {
  'America/New_York, daily at 01:30 (repeated 2026-11-01)': {
    cron: '30 1 * * *',
    timezone: 'America/New_York',
    from: '2026-10-31T05:30:00.000Z', // 10-31 01:30 EDT
    to: '2026-11-02T12:00:00.000Z',
    fires: ['2026-11-01T05:30:00.000Z', '2026-11-02T06:30:00.000Z'], // 01:30 EDT, then 01:30 EST the next day
  },
  'Australia/Lord_Howe, daily at 01:45 (repeated 2026-04-05, a 30-minute shift)': {
    cron: '45 1 * * *',
    timezone: 'Australia/Lord_Howe',
    from: '2026-04-03T14:45:00.000Z', // 04-04 01:45 +11
    to: '2026-04-06T00:00:00.000Z',
    fires: ['2026-04-04T14:45:00.000Z', '2026-04-05T15:15:00.000Z'], // 04-05 01:45 +11, 04-06 01:45 +10:30
  },
  'America/New_York, daily at midnight (@daily, not in the repeated hour)': {
    cron: '@daily',
    timezone: 'America/New_York',
    from: '2026-10-31T04:00:00.000Z',
    to: '2026-11-02T12:00:00.000Z',
    fires: ['2026-11-01T04:00:00.000Z', '2026-11-02T05:00:00.000Z'],
  },
  'America/New_York, hourly: 01:00 fires once': {
    cron: '0 * * * *',
    timezone: 'America/New_York',
    from: '2026-11-01T03:30:00.000Z',
    to: '2026-11-01T08:30:00.000Z',
    // 00:00 EDT, 01:00 EDT, (01:00 EST repeats it), 02:00 EST, 03:00 EST
    fires: [
      '2026-11-01T04:00:00.000Z',
      '2026-11-01T05:00:00.000Z',
      '2026-11-01T07:00:00.000Z',
      '2026-11-01T08:00:00.000Z',
    ],
  },
  'Australia/Lord_Howe, every 15 minutes: 01:30 to 01:45 fire once': {
    cron: '*/15 * * * *',
    timezone: 'Australia/Lord_Howe',
    from: '2026-04-04T14:20:00.000Z', // 01:20 +11
    to: '2026-04-04T15:40:00.000Z', // 02:10 +10:30
    // 01:30 +11, 01:45 +11, (01:30 and 01:45 +10:30 repeat them), 02:00 +10:30
    fires: ['2026-04-04T14:30:00.000Z', '2026-04-04T14:45:00.000Z', '2026-04-04T15:30:00.000Z'],
  },
};

const SPRING_FORWARD: Record<string, Case> = {
  'America/New_York, daily at 02:30 (skipped 2026-03-08): at 03:00 EDT that day': {
    cron: '30 2 * * *',
    timezone: 'America/New_York',
    from: '2026-03-07T07:30:00.000Z',
    to: '2026-03-09T12:00:00.000Z',
    fires: ['2026-03-08T07:00:00.000Z', '2026-03-09T06:30:00.000Z'],
  },
  'Australia/Lord_Howe, daily at 02:15 (skipped 2026-10-04): at 02:30 that day': {
    cron: '15 2 * * *',
    timezone: 'Australia/Lord_Howe',
    from: '2026-10-02T15:45:00.000Z', // 10-03 02:15 +10:30
    to: '2026-10-05T00:00:00.000Z',
    fires: ['2026-10-03T15:30:00.000Z', '2026-10-04T15:15:00.000Z'], // 10-04 02:30 +11, 10-05 02:15 +11
  },
  'America/New_York, every 30 minutes: nothing in the gap': {
    cron: '*/30 * * * *',
    timezone: 'America/New_York',
    from: '2026-03-08T06:00:00.000Z', // 01:00 EST
    to: '2026-03-08T08:00:00.000Z', // 04:00 EDT
    fires: [
      '2026-03-08T06:30:00.000Z',
      '2026-03-08T07:00:00.000Z',
      '2026-03-08T07:30:00.000Z',
      '2026-03-08T08:00:00.000Z',
    ],
  },
};

describe('DST: a wall-clock time fires once, live and in the missed-run list', () => {
  let clock: Clock | undefined;
  let store: SqliteStore;
  let scheduler: Scheduler | undefined;
  let fired: string[];

  beforeEach(() => {
    store = new SqliteStore(':memory:');
    fired = [];
  });

  afterEach(async () => {
    scheduler?.stop();
    scheduler = undefined;
    clock?.uninstall();
    clock = undefined;
    await store.close();
  });

  /** Starts the scheduler at `now`: resolves once the runs it missed are handled. */
  async function start(c: Case, now: string): Promise<void> {
    clock = install({ now: Date.parse(now), toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    const entry: ScheduleEntry = {
      key: KEY,
      playbook: 'daily',
      cron: c.cron,
      timezone: c.timezone,
      missed: 'all',
    };
    scheduler = new Scheduler({
      store,
      entries: [entry],
      makeRun: daemonRun,
      unfinished: () => [],
      started: (run) => fired.push((run.trigger as { scheduledAt: string }).scheduledAt),
    });
    await scheduler.start();
  }

  /** Down from `from` to `to`: the restart fires the missed runs. */
  async function restartAfterDowntime(c: Case): Promise<string[]> {
    await store.recordFire(KEY, c.from);
    await start(c, c.to);
    await clock?.tickAsync(0);
    return fired;
  }

  /** Up from `from` to `to`: the live fires. */
  async function runLive(c: Case): Promise<string[]> {
    await store.recordFire(KEY, c.from);
    await start(c, c.from);
    await clock?.tickAsync(Date.parse(c.to) - Date.parse(c.from));
    return fired;
  }

  describe('fall-back: a repeated time fires once (missed: all)', () => {
    for (const [name, c] of Object.entries(FALL_BACK)) {
      it(`${name}: a daemon down across it`, async () => {
        expect(await restartAfterDowntime(c)).to.deep.equal(c.fires);
        expect(await store.lastFire(KEY)).to.equal(c.fires.at(-1));
      });
      it(`${name}: a daemon running across it`, async () => {
        expect(await runLive(c)).to.deep.equal(c.fires);
      });
    }
  });

  describe('spring-forward: a skipped time named by the schedule fires at the end of the gap', () => {
    for (const [name, c] of Object.entries(SPRING_FORWARD)) {
      it(`${name}: a daemon down across it`, async () => {
        expect(await restartAfterDowntime(c)).to.deep.equal(c.fires);
      });
      it(`${name}: a daemon running across it`, async () => {
        expect(await runLive(c)).to.deep.equal(c.fires);
      });
    }
  });
});
