/** Durations as playbooks write them: `500ms`, `2s`, `5m`, `2h`, `1d`, or sums such as `1h30m`. */

/** What a duration looks like. */
export const DURATION_PATTERN = '^([0-9]+(ms|s|m|h|d))+$';

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const PART = /([0-9]+)(ms|s|m|h|d)/g;
const DURATION = new RegExp(DURATION_PATTERN);

/** Milliseconds, or undefined when `text` is not a duration. */
export function parseDuration(text: string): number | undefined {
  if (!DURATION.test(text)) return undefined;
  let total = 0;
  for (const m of text.matchAll(PART)) total += Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
  return total;
}
