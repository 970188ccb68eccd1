/**
 * A playbook's schedules edited between two starts of the daemon. The store keeps each schedule's last fire by
 * the schedule's key; the key was its position in `on.schedule`, so that removing the first of two schedules
 * handed the second one the first one's last fire: with `missed: all`, the restarted daemon fired again every
 * hourly run since the nightly one's fire (seven runs that had run already), and an expression edited in place
 * was caught up from the old expression's last fire, with runs that were never due. A schedule is now keyed by
 * what it is (its expression and time zone): an edited one starts afresh, an untouched one keeps its history.
 * A real SqliteStore, the daemon's own entries (`schedulesOf`), and fake timers.
 */
import { install, type Clock } from '@sinonjs/fake-timers';
import { expect } from 'chai';
import { Scheduler, schedulesOf } from '../../src/daemon/scheduler.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import { memoryStore, playbook } from '../runner/helpers.js';
import { daemonRun } from '../helpers/scheduled.js';

const HOUR = 3_600_000;

const withSchedules = (schedules: string) =>
  playbook(`
version: 1
name: reports
on:
  schedule:
${schedules}
steps:
  - id: hello
    uses: log
    with: { message: hello }
`);

const NIGHTLY = `    - { cron: '0 2 * * *' }`;
const HOURLY = `    - { cron: '0 * * * *', missed: all }`;

describe('a schedule edited between two starts keeps its own history, not its position', () => {
  let clock: Clock;
  let store: SqliteStore;
  let scheduler: Scheduler | undefined;
  let fired: string[];

  beforeEach(() => {
    clock = install({
      now: Date.parse('2026-03-10T00:30:00.000Z'),
      toFake: ['Date', 'setTimeout', 'clearTimeout'],
    });
    store = memoryStore();
    fired = [];
  });

  afterEach(async () => {
    scheduler?.stop();
    clock.uninstall();
    await store.close();
  });

  /** Stops the daemon's scheduler, lets `ms` pass, and starts one on `schedules`. */
  async function restart(ms: number, schedules: string): Promise<void> {
    scheduler?.stop();
    await clock.tickAsync(ms);
    await start(schedules);
  }

  async function start(schedules: string): Promise<void> {
    scheduler = new Scheduler({
      store,
      entries: schedulesOf(withSchedules(schedules)),
      makeRun: daemonRun,
      unfinished: () => [],
      started: (run) => {
        const t = run.trigger as { cron: string; scheduledAt: string };
        fired.push(`${t.cron} ${t.scheduledAt}`);
      },
    });
    await scheduler.start();
  }

  it('removing the first of two schedules fires none of the second one again', async () => {
    await start(`${NIGHTLY}\n${HOURLY}`);
    await clock.tickAsync(9 * HOUR); // to 09:30: the hourly one fired 01:00 to 09:00, the nightly one 02:00
    expect(fired).to.have.length(10);
    fired = [];

    await restart(HOUR / 12, HOURLY); // a restart at 09:35, the nightly schedule removed
    expect(fired, 'runs fired again').to.deep.equal([]);
    await clock.tickAsync(HOUR / 2);
    expect(fired).to.deep.equal(['0 * * * * 2026-03-10T10:00:00.000Z']);
  });

  it('an expression edited in place is not caught up from the old one', async () => {
    await start(NIGHTLY);
    await clock.tickAsync(9 * HOUR); // to 09:30: fired 02:00
    fired = [];

    await restart(HOUR / 12, HOURLY); // a restart at 09:35, now hourly: it was not due at 03:00 to 09:00
    expect(fired, 'runs that were never due').to.deep.equal([]);
  });

  it('after an upgrade, the last fire kept under its place in the list is taken over', async () => {
    // As a version that kept fires by place left it: the hourly schedule, first in the list, fired at 00:00.
    await store.recordFire('reports#0', '2026-03-10T00:00:00.000Z');
    await restart(3 * HOUR, HOURLY); // the upgraded daemon starts at 03:30
    expect(fired).to.deep.equal([
      '0 * * * * 2026-03-10T01:00:00.000Z',
      '0 * * * * 2026-03-10T02:00:00.000Z',
      '0 * * * * 2026-03-10T03:00:00.000Z',
    ]);
    fired = [];
    await restart(HOUR, HOURLY); // and again at 04:30: from its own key, 04:00 only
    expect(fired).to.deep.equal(['0 * * * * 2026-03-10T04:00:00.000Z']);
  });

  it('a schedule left as it was still has its missed runs made up', async () => {
    await start(`${NIGHTLY}\n${HOURLY}`);
    await clock.tickAsync(4 * HOUR); // to 04:30: the hourly one last fired at 04:00
    fired = [];

    await restart(2 * HOUR, HOURLY); // down until 06:30, the nightly schedule removed meanwhile
    expect(fired).to.deep.equal(['0 * * * * 2026-03-10T05:00:00.000Z', '0 * * * * 2026-03-10T06:00:00.000Z']);
  });
});
