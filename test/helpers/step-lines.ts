/**
 * The step lines of a run's summary as `fleetbook run` and `fleetbook runs show` print it (cli/runs.ts
 * formatSummary), taken apart for the tests: the indented id, the status, the time (how long the step took, so far
 * for the one in progress; `-` for a step with no times) and what follows its calls.
 */
import { formatDuration } from '../../src/cli/runs.js';
import type { StepSummary } from '../../src/store/store.js';

export const stepLines = (out: string): string[][] =>
  out
    .split('\n')
    .filter((l) => / calls \d+/.test(l))
    .map((l) => {
      const m = /^(\s+\S+)\s+(\S+)\s+(\S.*?)\s+calls \d+(.*)$/.exec(l);
      if (!m) throw new Error(`not a step line: ${l}`);
      return [m[1]!, m[2]!, m[3]!, m[4]!.trim()];
    });

/**
 * How long step `s` took as its line says it, from its times (`--json`): `850ms`, `42s`, `1m 05s`, `2h 03m 05s`,
 * `3d 04h 12m`, as the console's run page says it; `-` without both.
 */
export function took(s: Pick<StepSummary, 'startedAt' | 'endedAt'> | undefined): string {
  if (!s?.startedAt || !s.endedAt) return '-';
  return formatDuration(Date.parse(s.endedAt) - Date.parse(s.startedAt));
}

/** A duration as a step's line says it (took), for one whose length the test does not know: one in progress. */
export const DURATION = /^(\d+ms|\d+s|\d+m \d\ds|\d+h \d\dm \d\ds|\d+d \d\dh \d\dm)$/;
