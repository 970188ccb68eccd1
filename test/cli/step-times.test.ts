/**
 * The time on each step's line of a run's summary (`fleetbook run`, `fleetbook runs show`: cli/runs.ts
 * formatSummary): how long the step took, as the console says it, from seconds to days; for the step a run in
 * progress is in, how long so far and since when; `-` for a step without times. Before, the text had none.
 */
import { expect } from 'chai';
import { formatSummary } from '../../src/cli/runs.js';
import { emptyCounts, type StepSummary } from '../../src/store/store.js';
import { stepLines } from '../helpers/step-lines.js';

const T0 = Date.parse('2026-11-30T19:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms).toISOString();
const step = (id: string, status: StepSummary['status'], from?: number, to?: number): StepSummary => ({
  id,
  status,
  attempts: 1,
  calls: 0,
  devices: emptyCounts(),
  ...(from === undefined ? {} : { startedAt: at(from) }),
  ...(to === undefined ? {} : { endedAt: at(to) }),
});

describe('cli: the time on a step line', () => {
  it('says how long each step took, so far and since when for the one in progress, `-` without times', () => {
    const text = formatSummary(
      {
        runId: 'r',
        playbook: 'p',
        status: 'running',
        startedAt: at(0),
        devices: emptyCounts(),
        steps: [
          step('quick', 'succeeded', 0, 850),
          step('secs', 'succeeded', 0, 42_400),
          step('mins', 'failed', 0, 65_000),
          step('hours', 'succeeded', 0, (2 * 3600 + 3 * 60 + 5) * 1000),
          step('days', 'succeeded', 0, ((3 * 24 + 4) * 3600 + 12 * 60 + 59) * 1000),
          step('quiet', 'skipped'),
          { ...step('inner', 'succeeded', 0), within: 'days' },
          step('hold', 'running', 1000),
          step('after', 'pending'),
        ],
      },
      T0 + 1000 + 252_000,
    );
    expect(stepLines(text)).to.deep.equal([
      ['  quick', 'succeeded', '850ms', ''],
      ['  secs', 'succeeded', '42s', ''],
      ['  mins', 'failed', '1m 05s', ''],
      ['  hours', 'succeeded', '2h 03m 05s', ''],
      ['  days', 'succeeded', '3d 04h 12m', ''],
      ['  quiet', 'skipped', '-', ''],
      ['    inner', 'succeeded', '-', ''],
      ['  hold', 'running', '4m 12s', `(since ${at(1000)})`],
      ['  after', 'pending', '-', ''],
    ]);
    // One column, as wide as the longest time: the calls line up.
    const calls = text
      .split('\n')
      .filter((l) => l.includes(' calls '))
      .map((l) => l.indexOf(' calls '));
    expect(new Set(calls).size, text).to.equal(1);
  });
});
