/**
 * The cron dialect of src/playbook/cron.ts: what `validate` accepts, what it says of what it refuses, and the
 * occurrence lists the scheduler fires from. The corpus test (test/daemon/cron-corpus.test.ts) checks, for some
 * 450 expressions, that the verdicts and the fires agree; these pin the messages and the dialect's choices.
 */
import { expect } from 'chai';
import { checkCron, compileCron, occurrences, type CronSchedule } from '../../src/playbook/cron.js';
import { scheduleProblems } from '../../src/playbook/schedule.js';

const FROM = Date.parse('2026-01-01T00:00:00.000Z');

/** What `validate` says is wrong with a schedule's cron expression (its `cron` error), or undefined. */
function cronProblem(expression: string): string | undefined {
  return scheduleProblems({ cron: expression }).find((p) => p.rule === 'cron')?.message;
}

function schedule(expression: string, timezone = 'UTC'): CronSchedule {
  const c = compileCron(expression, timezone);
  if (!c.ok) throw new Error(c.problem);
  return c.schedule;
}

/** The first `n` occurrences after FROM, as ISO strings. */
function firstFires(expression: string, n: number, timezone = 'UTC', from = FROM): string[] {
  const s = schedule(expression, timezone);
  const out: string[] = [];
  for (let t = s.next(from); t !== undefined && out.length < n; t = s.next(t))
    out.push(new Date(t).toISOString());
  return out;
}

describe('cron dialect', () => {
  describe('says why an expression is invalid', () => {
    const cases: [string, string][] = [
      ['30 25 * * *', 'hour 25 is out of range (0-23)'],
      ['61 2 * * *', 'minute 61 is out of range (0-59)'],
      ['0 0 32 * *', 'day of month 32 is out of range (1-31)'],
      ['0 0 * 13 *', 'month 13 is out of range (1-12)'],
      ['0 0 * * 8', 'day of week 8 is out of range (0-7)'],
      ['0 2 * *', 'it has 4 fields; it needs 5 (minute hour day month weekday) or 6 (seconds first)'],
      ['0 0 2 30 2 * *', 'it has 7 fields; it needs 5 (minute hour day month weekday) or 6 (seconds first)'],
      ['0 17-9 * * *', 'hour range 17-9 runs backwards: write 17-23,0-9 to wrap around, or 9-17'],
      ['0 0 * * FRI-MON', 'day of week range FRI-MON runs backwards: write 5-6,0-1 to wrap around, or 1-5'],
      [
        '0 0 * * 7-1',
        'day of week range 7-1 runs backwards: write 0-1 (Sunday is 0 as well as 7) to wrap around, or 1-7',
      ],
      ['0 0 * * 6-1', 'day of week range 6-1 runs backwards: write 6,0-1 to wrap around, or 1-6'],
      ['0 23-0 * * *', 'hour range 23-0 runs backwards: write 23,0 to wrap around, or 0-23'],
      ['*/0 * * * *', 'minute "*/0": the step must be a whole number from 1'],
      ['5/15 * * * *', 'minute "5/15": a step applies to * or a range, as in */15 or 5-59/15'],
      ['0 ? * * *', '? (no specific value) is only for day of month and day of week, not hour'],
      ['15 10 * * MON-TUR', 'day of week "TUR" is not a number or a name'],
      [
        '0 0 12 * * 2#6',
        'day of week 2#6: #6 is not an occurrence of a weekday in a month (1-5, or L for the last)',
      ],
      ['0 0 L-3 * *', 'day of month L-3: L-n (n days before the last) is not supported'],
      ['0 0 1W,LW * *', 'LW stands alone in day of month, not in a list ("1W,LW")'],
      ['0,,5 * * * *', 'minute "0,,5" has an empty list item'],
      ['@reboot', '@reboot is not supported: a schedule fires at times of day, not when the daemon starts'],
      [
        '@fortnightly',
        'unknown nickname @fortnightly (use @yearly, @annually, @monthly, @weekly, @daily, @midnight or @hourly)',
      ],
    ];
    for (const [expression, why] of cases) {
      it(`${expression}: ${why}`, () => {
        expect(cronProblem(expression)).to.equal(
          `invalid cron expression ${JSON.stringify(expression)}: ${why}`,
        );
      });
    }
  });

  it('a backwards range is told two ways to write it, both valid (7-1 was told 7-6,0-1: backwards again)', function () {
    // Every backwards range of every field, each hint compiled: 2 s on an idle machine, past the default 20 s
    // once on a loaded one.
    this.timeout(90_000);
    const fields: [string, number, number, (v: string) => string][] = [
      ['minute', 0, 59, (v) => `${v} * * * *`],
      ['hour', 0, 23, (v) => `0 ${v} * * *`],
      ['day of month', 1, 31, (v) => `0 0 ${v} * *`],
      ['month', 1, 12, (v) => `0 0 1 ${v} *`],
      ['day of week', 0, 7, (v) => `0 0 * * ${v}`],
    ];
    let backwards = 0;
    for (const [, min, max, expression] of fields)
      for (let from = min; from <= max; from++)
        for (let to = min; to < from; to++) {
          const problem = cronProblem(expression(`${from}-${to}`));
          if (problem === undefined) continue;
          backwards++;
          const [, wrap, reverse] = /write (\S+) .*to wrap around, or (\S+)$/.exec(problem) ?? [];
          expect([wrap, reverse], problem).to.not.include(undefined);
          for (const hint of [wrap, reverse] as string[])
            expect(compileCron(expression(hint), 'UTC').ok, `${problem}: ${hint}`).to.equal(true);
        }
    expect(backwards).to.be.greaterThan(1000);
  });

  describe('says why an expression never fires', () => {
    const cases: [string, string][] = [
      ['0 0 30 2 *', 'February has no day 30'],
      ['0 0 30W 2 *', 'February has no day 30'],
      ['0 0 31W 4 *', 'April has no day 31'],
      ['0 0 31 4,6 *', 'April and June have no day 31'],
      ['0 0 30,31 2 *', 'February has no day 30 or 31'],
      [
        '0 0 0 8 * 5#3',
        'no day is both day of month 8 and day of week 5#3 (when both are set, a day must match both)',
      ],
    ];
    for (const [expression, why] of cases) {
      it(`${expression}: ${why}`, () => {
        expect(cronProblem(expression)).to.equal(
          `cron expression ${JSON.stringify(expression)} never fires: ${why}`,
        );
      });
    }

    it('accepts what fires rarely: Feb 29, and Feb 29 on a Monday (2044)', () => {
      expect(cronProblem('0 0 29 2 *')).to.equal(undefined);
      expect(cronProblem('0 0 29 2 1')).to.equal(undefined);
      expect(firstFires('0 0 29 2 1', 1)).to.deep.equal(['2044-02-29T00:00:00.000Z']);
    });
  });

  describe('accepts', () => {
    it('the nicknames, in any case', () => {
      expect(firstFires('@daily', 2)).to.deep.equal(['2026-01-02T00:00:00.000Z', '2026-01-03T00:00:00.000Z']);
      expect(firstFires('@Midnight', 1)).to.deep.equal(['2026-01-02T00:00:00.000Z']);
      expect(firstFires('@hourly', 1)).to.deep.equal(['2026-01-01T01:00:00.000Z']);
      expect(firstFires('@weekly', 1)).to.deep.equal(['2026-01-04T00:00:00.000Z']); // a Sunday
      expect(firstFires('@monthly', 1)).to.deep.equal(['2026-02-01T00:00:00.000Z']);
      expect(firstFires('@YEARLY', 1)).to.deep.equal(['2027-01-01T00:00:00.000Z']);
      expect(firstFires('@annually', 1)).to.deep.equal(['2027-01-01T00:00:00.000Z']);
    });

    it('month and weekday names, short or full, in any case; Sunday as 0 or 7', () => {
      expect(firstFires('0 9 * jan-FEB Monday', 2)).to.deep.equal([
        '2026-01-05T09:00:00.000Z',
        '2026-01-12T09:00:00.000Z',
      ]);
      expect(firstFires('0 9 * * MON-SUN', 1)).to.deep.equal(['2026-01-01T09:00:00.000Z']);
      expect(firstFires('0 9 * * 7', 1)).to.deep.equal(firstFires('0 9 * * sun', 1));
    });

    it('a seconds field first', () => {
      expect(firstFires('*/20 * * * * *', 3)).to.deep.equal([
        '2026-01-01T00:00:20.000Z',
        '2026-01-01T00:00:40.000Z',
        '2026-01-01T00:01:00.000Z',
      ]);
    });

    it('L, LW and nW in the day of month', () => {
      expect(firstFires('0 0 L 2 *', 1)).to.deep.equal(['2026-02-28T00:00:00.000Z']);
      expect(firstFires('0 0 LW * *', 1)).to.deep.equal(['2026-01-30T00:00:00.000Z']); // the 31st is a Saturday
      expect(firstFires('0 0 1W 2 *', 1)).to.deep.equal(['2026-02-02T00:00:00.000Z']); // the 1st is a Sunday
      expect(firstFires('0 0 15W 1 *', 1)).to.deep.equal(['2026-01-15T00:00:00.000Z']);
    });

    it('nL, n#k and n#L in the day of week', () => {
      expect(firstFires('0 0 * * 5L', 1)).to.deep.equal(['2026-01-30T00:00:00.000Z']);
      expect(firstFires('0 0 * * FRI#3', 1)).to.deep.equal(['2026-01-16T00:00:00.000Z']);
      expect(firstFires('0 0 * * 5#L', 1)).to.deep.equal(['2026-01-30T00:00:00.000Z']);
    });

    it('? as * in the day fields', () => {
      expect(firstFires('0 0 12 ? * 1', 1)).to.deep.equal(firstFires('0 0 12 * * 1', 1));
    });

    it('both day fields set: a day must match both', () => {
      // The 1st of a month that is a Monday: 2026-06-01.
      expect(firstFires('0 6 1 * 1', 1)).to.deep.equal(['2026-06-01T06:00:00.000Z']);
    });

    it('a time zone', () => {
      expect(firstFires('0 2 * * *', 1, 'America/New_York')).to.deep.equal(['2026-01-01T07:00:00.000Z']);
    });
  });

  describe('occurrences', () => {
    it('lists all of them, oldest first, when there are at most `limit`', () => {
      const s = schedule('0 6 * * *');
      const r = occurrences(s, Date.parse('2026-03-07T06:00:00Z'), Date.parse('2026-03-10T12:00:00Z'), 5);
      expect(r.more).to.equal(false);
      expect(r.times.map((t) => new Date(t).toISOString())).to.deep.equal([
        '2026-03-08T06:00:00.000Z',
        '2026-03-09T06:00:00.000Z',
        '2026-03-10T06:00:00.000Z',
      ]);
    });

    it('lists only the most recent `limit` of many, without walking them all: a year of seconds', () => {
      const s = schedule('* * * * * *');
      const upTo = Date.parse('2026-12-31T23:59:59.500Z');
      const r = occurrences(s, FROM, upTo, 3);
      expect(r.more).to.equal(true);
      expect(r.times.map((t) => new Date(t).toISOString())).to.deep.equal([
        '2026-12-31T23:59:57.000Z',
        '2026-12-31T23:59:58.000Z',
        '2026-12-31T23:59:59.000Z',
      ]);
    });

    it('also when the first ones are sparse and the last ones dense', () => {
      // Every second of December, from the start of the year.
      const s = schedule('* * * * 12 *');
      const r = occurrences(s, FROM, Date.parse('2026-12-01T00:01:00Z'), 2);
      expect(r.more).to.equal(true);
      expect(r.times.map((t) => new Date(t).toISOString())).to.deep.equal([
        '2026-12-01T00:00:59.000Z',
        '2026-12-01T00:01:00.000Z',
      ]);
    });
  });

  describe('checked once', () => {
    it('gives the schedule of a valid expression with its verdict, and the problem of one that is not', () => {
      const valid = checkCron('0,30 0 2 * * *', 'UTC');
      if (!valid.ok) throw new Error(valid.problem);
      expect(valid.schedule.next(FROM)).to.equal(Date.parse('2026-01-01T02:00:00.000Z'));
      expect(valid.schedule).to.equal(schedule('0,30 0 2 * * *'));
      expect(checkCron('0,30 0 2 * * *', 'UTC')).to.equal(valid);
      for (const expression of ['30 25 * * *', '0 0 30 2 *'])
        expect(checkCron(expression, 'UTC')).to.deep.equal({
          ok: false,
          problem: cronProblem(expression),
        });
    });

    it('judges the frequency of a 6-field schedule on the schedule the check compiled', () => {
      const frequent = (expression: string) =>
        scheduleProblems({ cron: expression }).some((p) => p.rule === 'schedule-frequency');
      expect(
        ['*/10 * * * * *', '0,30 0 2 * * *', '0 * * * * *', '*/60 * * * * *', '* * * * *'].map(frequent),
      ).to.deep.equal([true, true, false, false, false]);
      expect(scheduleProblems({ cron: '0,30 0 2 * * *' }).map((p) => p.rule)).to.deep.equal([
        'schedule-frequency',
      ]);
      expect(scheduleProblems({ cron: '0 0 2 * * *', timezone: 'Europe/Paris' })).to.deep.equal([]);
    });
  });
});
