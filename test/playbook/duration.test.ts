/**
 * Durations as docs/playbook.md promises them: `500ms`, `2s`, `5m`, `2h`, `1d`, or sums such as `1h30m` (each unit
 * once, the largest first), none longer than `24d` (a timer cannot wait longer than 24.8 days); a timeout, a poll
 * interval or a confirm's timeout cannot be zero, a `wait` or a retry's `delay` can. src/playbook/duration.ts
 * holds the grammar, and the checks `fleetbook validate` makes of a step's durations.
 */
import { expect } from 'chai';
import {
  DURATION_PATTERN,
  DURATION_TEXT,
  MAX_DURATION,
  MAX_DURATION_MS,
  durationProblem,
  parseDuration,
  stepDurationProblems,
} from '../../src/playbook/duration.js';
import { loadPlaybook } from '../../src/playbook/load.js';

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const TOO_LONG = (name: string, text: string) =>
  `${name} ${text} is longer than 24d, the most a duration may be (a timer, such as a step's timeout, cannot wait longer than 24.8 days)`;

describe('playbook durations (src/playbook/duration.ts)', () => {
  describe('parseDuration', () => {
    it('reads each unit: ms, s, m, h, d (5m is minutes, 5ms milliseconds)', () => {
      const read = ['500ms', '2s', '5m', '5ms', '2h', '1d'].map((t) => [t, parseDuration(t)]);
      expect(read).to.deep.equal([
        ['500ms', 500],
        ['2s', 2 * SECOND],
        ['5m', 5 * MINUTE],
        ['5ms', 5],
        ['2h', 2 * HOUR],
        ['1d', DAY],
      ]);
    });

    it('adds up a sum: 1h30m, and every unit at once', () => {
      expect(parseDuration('1h30m')).to.equal(90 * MINUTE);
      expect(parseDuration('1m1ms')).to.equal(MINUTE + 1);
      expect(parseDuration('1d2h3m4s5ms')).to.equal(DAY + 2 * HOUR + 3 * MINUTE + 4 * SECOND + 5);
      // A part may be larger than the next unit: it is only written out of order that is refused.
      expect(parseDuration('90m')).to.equal(90 * MINUTE);
      expect(parseDuration('1500ms')).to.equal(1500);
    });

    it('refuses a unit written twice, or a smaller unit before a larger one', () => {
      for (const text of ['5m5m', '1s1s', '1h1d', '1s1m', '30m1h', '5ms1s', '5m5m1s1h'])
        expect(parseDuration(text), text).to.equal(undefined);
    });

    it('refuses fractions, signs, exponents, spaces and units it does not know', () => {
      for (const text of [
        '1.5s',
        '0.5h',
        '.5s',
        '1,5s',
        '-1s',
        '+1s',
        '1e3ms',
        '1h 30m',
        ' 1s',
        '1s ',
        '1s\n',
        '1S',
        '5M',
        '1w',
        '1y',
        '1us',
      ])
        expect(parseDuration(text), JSON.stringify(text)).to.equal(undefined);
    });

    it('refuses a number without a unit, a unit without a number, and nothing at all', () => {
      for (const text of ['0', '30', 'ms', 's', 'h', ''])
        expect(parseDuration(text), JSON.stringify(text)).to.equal(undefined);
    });

    it('reads zero in any unit, and in a sum', () => {
      for (const text of ['0ms', '0s', '0m', '0h', '0d', '0h0m'])
        expect(parseDuration(text), text).to.equal(0);
    });

    it('has its pattern (the schemas check durations with it) agree with what it reads', () => {
      const pattern = new RegExp(DURATION_PATTERN);
      for (const text of ['500ms', '1h30m', '1d2h3m4s5ms', '0s', '5m5m', '1.5s', '1h 30m', '', '30'])
        expect(pattern.test(text), text).to.equal(parseDuration(text) !== undefined);
    });
  });

  describe('the maximum', () => {
    it('is 24d: one timer, whose Node.js limit is 2^31-1 ms (24.8 days)', () => {
      expect(MAX_DURATION).to.equal('24d');
      expect(MAX_DURATION_MS).to.equal(24 * DAY);
      expect(MAX_DURATION_MS).to.be.at.most(2 ** 31 - 1);
    });

    it('lets 24d through, however written, and refuses a millisecond more', () => {
      for (const text of ['24d', '576h', '23d24h', `${24 * DAY}ms`])
        expect(durationProblem('timeout', text, 'the step would time out at once'), text).to.equal(undefined);
      for (const text of ['24d1ms', '25d', `${24 * DAY + 1}ms`, '99999999999999999999d'])
        expect(durationProblem('timeout', text), text).to.equal(TOO_LONG('timeout', text));
    });
  });

  describe('durationProblem', () => {
    it('refuses zero where it is told why zero cannot work, in words that say what to give', () => {
      expect(durationProblem('timeout', '0s', 'the step would time out at once')).to.equal(
        'timeout is zero: the step would time out at once; give a duration above zero',
      );
      expect(durationProblem('timeout', '0d0ms', 'the step would time out at once')).to.equal(
        'timeout is zero: the step would time out at once; give a duration above zero',
      );
      expect(durationProblem('wait', '0s'), 'a zero that can work').to.equal(undefined);
      expect(durationProblem('timeout', '1ms', 'the step would time out at once')).to.equal(undefined);
    });

    it('leaves text that is no duration to the schema', () => {
      expect(durationProblem('timeout', '1.5s', 'the step would time out at once')).to.equal(undefined);
      expect(DURATION_TEXT).to.equal(
        'A duration: 500ms, 2s, 5m, 2h, 1d, or a sum such as 1h30m (each unit once, largest first).',
      );
    });
  });

  describe('stepDurationProblems', () => {
    it('refuses zero for a timeout, a poll interval and a confirm timeout; lets a wait and a retry delay be zero', () => {
      const step = {
        timeout: '0s',
        wait: { timeout: '0m', pollInterval: '0ms', poll: { interval: '0s' } },
        confirm: { timeout: '0s', pollInterval: '0h' },
        retry: { delay: '0s', maxDelay: '0s' },
        devices: { retry: [{ delay: '0s' }] },
      };
      expect(stepDurationProblems(step).map((p) => [p.at.join('.'), p.message])).to.deep.equal([
        ['timeout', 'timeout is zero: the step would time out at once; give a duration above zero'],
        ['wait.timeout', 'wait.timeout is zero: the wait would time out at once; give a duration above zero'],
        [
          'wait.pollInterval',
          'wait.pollInterval is zero: it would ask the service again without a pause; give a duration above zero',
        ],
        [
          'wait.poll.interval',
          'wait.poll.interval is zero: it would call the service again without a pause; give a duration above zero',
        ],
        [
          'confirm.timeout',
          'confirm.timeout is zero: every device would be unconfirmed at once; give a duration above zero',
        ],
        [
          'confirm.pollInterval',
          'confirm.pollInterval is zero: it would ask the service again without a pause; give a duration above zero',
        ],
      ]);
      expect(stepDurationProblems({ wait: '0s' }), 'a wait of zero').to.deep.equal([]);
    });

    it('refuses any duration of a step longer than 24d, a retry of devices by its index', () => {
      const step = {
        wait: '25d',
        retry: { delay: '24d', maxDelay: '24d1s' },
        devices: { retry: [{ delay: '1s' }, { delay: '30d' }] },
      };
      expect(stepDurationProblems(step)).to.deep.equal([
        { at: ['wait'], message: TOO_LONG('wait', '25d') },
        { at: ['retry', 'maxDelay'], message: TOO_LONG('retry.maxDelay', '24d1s') },
        { at: ['devices', 'retry', 1, 'delay'], message: TOO_LONG('devices.retry.delay', '30d') },
      ]);
    });
  });

  describe('in a playbook (fleetbook validate)', () => {
    const head = 'version: 1\nname: durations\non:\n  manual: true\nsteps:\n  - id: a\n    uses: log\n';
    const diagnostics = (timeout: string) =>
      loadPlaybook(
        `${head}    timeout: ${timeout}\n    with: { message: hi }\n`,
        'durations.yaml',
      ).diagnostics.map((d) => `${d.line}:${d.column}: ${d.message} [${d.rule}]`);

    it('says what a duration looks like when it is given something else', () => {
      for (const text of ['1.5s', '5m5m', '1h 30m', '5 minutes'])
        expect(diagnostics(text), text).to.deep.equal([
          `8:14: timeout ${JSON.stringify(text)} is not valid: ${DURATION_TEXT} [duration]`,
        ]);
      expect(diagnostics("'30'"), 'a number in quotes').to.deep.equal([
        `8:14: timeout "30" is not valid: ${DURATION_TEXT} [duration]`,
      ]);
      expect(diagnostics('30'), 'a number, which YAML reads as one').to.deep.equal([
        '8:14: timeout must be a duration such as 30s or 30m, not the number 30: a number alone has no unit [duration]',
      ]);
    });

    it('takes 1h30m and 24d; refuses zero and more than 24d, saying why', () => {
      expect(diagnostics('1h30m')).to.deep.equal([]);
      expect(diagnostics('24d')).to.deep.equal([]);
      expect(diagnostics('0s')).to.deep.equal([
        '8:14: timeout is zero: the step would time out at once; give a duration above zero [duration]',
      ]);
      expect(diagnostics('25d')).to.deep.equal([`8:14: ${TOO_LONG('timeout', '25d')} [duration]`]);
    });
  });
});
