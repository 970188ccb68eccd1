/**
 * The step lines of a run's summary as `fleetbook run` and `fleetbook runs show` print it (cli/runs.ts
 * formatSummary), taken apart for the tests: the indented id, the status, the time (how long the step took, so far
 * for the one in progress; `-` for a step with no times) and what follows its calls.
 */
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
  const ms = Date.parse(s.endedAt) - Date.parse(s.startedAt);
  if (ms < 1000) return `${ms}ms`;
  const t = Math.floor(ms / 1000);
  const pad = (n: number) => String(n).padStart(2, '0');
  const [d, h, m, sec] = [
    Math.floor(t / 86400),
    Math.floor((t % 86400) / 3600),
    Math.floor((t % 3600) / 60),
    t % 60,
  ];
  if (d) return `${d}d ${pad(h)}h ${pad(m)}m`;
  if (h) return `${h}h ${pad(m)}m ${pad(sec)}s`;
  if (m) return `${m}m ${pad(sec)}s`;
  return `${sec}s`;
}

/** A duration as a step's line says it (took), for one whose length the test does not know: one in progress. */
export const DURATION = /^(\d+ms|\d+s|\d+m \d\ds|\d+h \d\dm \d\ds|\d+d \d\dh \d\dm)$/;
