/**
 * A step's duration reads the same in `fleetbook runs show` (cli/runs.ts formatDuration) and on the console's run
 * page (console/format.js, plain JavaScript the browser runs): two copies of one rule, held together here.
 */
import { expect } from 'chai';
import { formatDuration, formatSummary } from '../../src/cli/runs.js';
import { emptyCounts } from '../../src/store/store.js';
import { stepLines } from '../helpers/step-lines.js';

const moduleUrl = new URL('../../console/format.js', import.meta.url).href;
const consoleFormat = (await import(moduleUrl)) as {
  formatDuration(ms: number): string;
  durationBetween(start: string, end?: string): string;
};

describe('durations: the CLI and the console write them alike', () => {
  it('agrees on every unit and its boundaries', () => {
    const cases = [0, 1, 850, 999, 1000, 42_000, 59_999, 60_000, 65_000, 3_599_000, 3_600_000, 7_385_000];
    const more = [86_399_000, 86_400_000, 274_320_000, 1_000 * 86_400 * 400];
    const written = [...cases, ...more].map((ms) => [ms, formatDuration(ms)]);
    expect(written).to.deep.equal([...cases, ...more].map((ms) => [ms, consoleFormat.formatDuration(ms)]));
    expect(written.slice(0, 9).map(([, w]) => w)).to.deep.equal([
      '0ms',
      '1ms',
      '850ms',
      '999ms',
      '1s',
      '42s',
      '59s',
      '1m 00s',
      '1m 05s',
    ]);
  });

  it('write `-` for what is no duration: negative, not a number, or endless', () => {
    const bad = [-1, -60_000, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY];
    expect(bad.map((ms) => [formatDuration(ms), consoleFormat.formatDuration(ms)])).to.deep.equal(
      bad.map(() => ['-', '-']),
    );
  });

  it('a step under way, its start ahead of the clock that reads it, shows 0ms so far in both', () => {
    const now = Date.now();
    const started = new Date(now + 60_000).toISOString();
    const text = formatSummary(
      {
        runId: 'r',
        playbook: 'p',
        status: 'running',
        startedAt: started,
        devices: emptyCounts(),
        steps: [
          {
            id: 'hold',
            status: 'running',
            attempts: 1,
            calls: 0,
            devices: emptyCounts(),
            startedAt: started,
          },
        ],
      },
      now,
    );
    expect(stepLines(text)).to.deep.equal([['  hold', 'running', '0ms', `(since ${started})`]]);
    expect(consoleFormat.durationBetween(started)).to.equal('0ms');
  });
});
