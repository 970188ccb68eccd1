/**
 * The cron corpus: every expression of node-cron's, cron-parser's and croner's own test suites
 * (test/fixtures/cron/corpus.json). For each one:
 * - `validate`'s verdict is the one the corpus records, and the expression is valid exactly when the daemon's
 *   scheduler, left running on a fake clock, fires it;
 * - the times it fires are exactly the runs its missed-run policy (`missed: all`) lists for the same span after
 *   a restart.
 *
 * Before one engine did all three, 44 of these passed `validate` and fired but had no missed-run list (so runs
 * missed while the daemon was down were dropped), and 3 passed `validate` and never fired.
 *
 * The zone is America/New_York and the span starts 30 s before the fall-back of 2026-11-01, so that the
 * frequent schedules meet the repeated hour. A span ends at the 8th fire, or 30 years on for the rare ones
 * (Feb 29 on a Monday: 2044). To update the recorded verdicts after a deliberate change of the dialect:
 *
 *     UPDATE_CORPUS=1 npx mocha test/daemon/cron-corpus.test.ts
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { install, type Clock as FakeClock } from '@sinonjs/fake-timers';
import { expect } from 'chai';
import { systemClock, type Clock } from '../../src/clock.js';
import { Scheduler, type ScheduleEntry } from '../../src/daemon/scheduler.js';
import { scheduleProblems } from '../../src/playbook/schedule.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { daemonRun } from '../helpers/scheduled.js';

interface CorpusEntry {
  cron: string;
  source: string;
  valid?: boolean;
}

const FILE = new URL('../fixtures/cron/corpus.json', import.meta.url);
const corpus = JSON.parse(readFileSync(FILE, 'utf8')) as { about: string; expressions: CorpusEntry[] };
const UPDATE = process.env.UPDATE_CORPUS === '1';

const ZONE = 'America/New_York';
const START = Date.parse('2026-11-01T05:59:30.000Z'); // 01:59:30 EDT
const HORIZON = START + 30 * 366 * 86_400_000;
const FIRES = 8;
/** Timers of up to 24 days (the most setTimeout takes), so that a rare schedule crosses 30 years in few steps. */
const MAX_WAIT = 2 ** 31 - 1;

/**
 * The scheduler's clock: the fake one's time, and waits on the fake setTimeout. `Date` stays real, for speed
 * (croner makes many, and a faked Date is much slower): the scheduler reads the time from its clock only.
 */
function injected(fake: FakeClock): Clock {
  return {
    now: () => fake.now,
    sleep: (ms, signal) => systemClock.sleep(ms, signal),
    timer: (ms, fire) => systemClock.timer(ms, fire),
  };
}

/** A scheduler of one schedule, `key`, that records the fire time of each run it starts into `fired`. */
function scheduler(
  fake: FakeClock,
  store: SqliteStore,
  key: string,
  cron: string,
  fired: string[],
): Scheduler {
  const entry: ScheduleEntry = { key, playbook: 'corpus', cron, timezone: ZONE, missed: 'all' };
  return new Scheduler({
    clock: injected(fake),
    store,
    entries: [entry],
    makeRun: daemonRun,
    unfinished: () => [],
    started: (run) => fired.push((run.trigger as { scheduledAt: string }).scheduledAt),
    maxCatchUp: 10_000,
    maxWait: MAX_WAIT,
  });
}

/**
 * The live scheduler from START, on a fake clock: its first FIRES fire times (fewer by HORIZON), and when it
 * stopped. The first start of a schedule records START as its baseline.
 */
async function live(
  store: SqliteStore,
  key: string,
  cron: string,
): Promise<{ fired: string[]; end: number }> {
  const clock = install({ now: START, toFake: ['setTimeout', 'clearTimeout'] });
  const fired: string[] = [];
  const s = scheduler(clock, store, key, cron, fired);
  try {
    await s.start();
    while (fired.length < FIRES && clock.now < HORIZON && clock.countTimers() > 0) await clock.nextAsync();
    return { fired, end: clock.now };
  } finally {
    s.stop();
    clock.uninstall();
  }
}

/** What a daemon restarted at `end`, whose schedule `key` last fired at START, fires for the runs it missed. */
async function missedList(store: SqliteStore, key: string, cron: string, end: number): Promise<string[]> {
  const clock = install({ now: end, toFake: ['setTimeout', 'clearTimeout'] });
  const fired: string[] = [];
  await store.recordFire(key, new Date(START).toISOString());
  const s = scheduler(clock, store, key, cron, fired);
  try {
    await s.start();
    await clock.tickAsync(0);
    return fired;
  } finally {
    s.stop();
    clock.uninstall();
  }
}

describe('cron corpus: validate, the live scheduler and the missed-run list agree', function () {
  const verdicts = new Map<string, boolean>();
  let store: SqliteStore;

  before(() => {
    store = new SqliteStore(':memory:');
  });

  after(async () => {
    await store.close();
    if (!UPDATE) return;
    const lines = corpus.expressions.map((e) => {
      const o = { cron: e.cron, source: e.source, valid: verdicts.get(e.cron) ?? e.valid };
      return `    { ${JSON.stringify(o)
        .slice(1, -1)
        .replace(/","/g, '", "')
        .replace(/":/g, '": ')
        .replace(/,"valid"/, ', "valid"')} }`;
    });
    writeFileSync(
      FILE,
      `{\n  "about": ${JSON.stringify(corpus.about)},\n  "expressions": [\n${lines.join(',\n')}\n  ]\n}\n`,
    );
  });

  it('holds the expressions of the three suites, each once', () => {
    const sources = new Set(corpus.expressions.map((e) => e.source.split(' ')[0]));
    expect([...sources].sort()).to.deep.equal([
      'Hexagon/croner',
      'harrisiirak/cron-parser',
      'issue',
      'node-cron/node-cron',
    ]);
    expect(new Set(corpus.expressions.map((e) => e.cron)).size).to.equal(corpus.expressions.length);
    expect(corpus.expressions.length).to.be.greaterThan(400);
  });

  for (const [i, { cron, source, valid }] of corpus.expressions.entries()) {
    it(`${JSON.stringify(cron)} (${source})`, async () => {
      const problem = scheduleProblems({ cron, timezone: ZONE }).find((p) => p.rule === 'cron')?.message;
      verdicts.set(cron, problem === undefined);
      if (!UPDATE)
        expect(problem === undefined, `recorded verdict; validate says: ${problem}`).to.equal(valid);
      const { fired, end } = await live(store, `live#${i}`, cron);
      expect(fired.length > 0, `fires; validate says: ${problem ?? 'valid'}`).to.equal(problem === undefined);
      if (problem !== undefined) expect(problem).to.match(/\S/);
      expect(
        await missedList(store, `missed#${i}`, cron, end),
        'the missed-run list over the span of the live fires',
      ).to.deep.equal(fired);
    });
  }
});
