/** Durations as playbooks write them: `500ms`, `2s`, `5m`, `2h`, `1d`, or sums such as `1h30m`. */
import { isObject } from '../util/json.js';

/**
 * What a duration looks like: each unit at most once, the largest first, so that `5m5m1s1h` (which means
 * something, but not what it looks like) is refused. `5m` is minutes, `5ms` milliseconds.
 */
export const DURATION_PATTERN = '^(?=[0-9])([0-9]+d)?([0-9]+h)?([0-9]+m(?!s))?([0-9]+s)?([0-9]+ms)?$';

/** How a duration is described in schemas and messages. */
export const DURATION_TEXT =
  'A duration: 500ms, 2s, 5m, 2h, 1d, or a sum such as 1h30m (each unit once, largest first).';

/**
 * The longest duration a playbook may give: a step's timeout, a retry's delay and a poll's interval are each one
 * timer, and a Node.js timer longer than 2^31-1 ms (24.8 days) fires at once. Anything longer is a typo.
 */
export const MAX_DURATION = '24d';

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

export const MAX_DURATION_MS = parseDuration(MAX_DURATION) as number;

/**
 * Why the duration `text`, given as `name`, cannot work: zero where `zero` says why zero cannot, or longer than
 * MAX_DURATION. Undefined when it can, or when it is no duration (the schema says so).
 */
export function durationProblem(name: string, text: string, zero?: string): string | undefined {
  const ms = parseDuration(text);
  if (ms === 0 && zero) return `${name} is zero: ${zero}; give a duration above zero`;
  if (ms !== undefined && ms > MAX_DURATION_MS)
    return `${name} ${text} is longer than ${MAX_DURATION}, the most a duration may be (a timer, such as a step's timeout, cannot wait longer than 24.8 days)`;
  return undefined;
}

type Seg = string | number;
type Json = Record<string, unknown>;

/** The durations of a step that cannot be zero, and why. */
const NOT_ZERO: [Seg[], string][] = [
  [['timeout'], 'the step would time out at once'],
  [['wait', 'timeout'], 'the wait would time out at once'],
  [['wait', 'pollInterval'], 'it would ask the service again without a pause'],
  [['wait', 'poll', 'interval'], 'it would call the service again without a pause'],
  [['confirm', 'timeout'], 'every device would be unconfirmed at once'],
  [['confirm', 'pollInterval'], 'it would ask the service again without a pause'],
];

/** A step's durations longer than MAX_DURATION, or zero where zero cannot work: where each is in the step, and why. */
export function stepDurationProblems(step: Json): { at: Seg[]; message: string }[] {
  const retries = isObject(step.devices) && Array.isArray(step.devices.retry) ? step.devices.retry : [];
  const durations: [Seg[], string | undefined][] = [
    ...NOT_ZERO,
    [['wait'], undefined],
    [['retry', 'delay'], undefined],
    [['retry', 'maxDelay'], undefined],
    ...retries.map((_, i): [Seg[], undefined] => [['devices', 'retry', i, 'delay'], undefined]),
  ];
  const out: { at: Seg[]; message: string }[] = [];
  for (const [at, zero] of durations) {
    const text = at.reduce<unknown>(
      (v, k) => (isObject(v) || Array.isArray(v) ? (v as Json)[k] : undefined),
      step,
    );
    if (typeof text !== 'string') continue;
    const name = at.filter((k) => typeof k === 'string').join('.');
    const problem = durationProblem(name, text, zero);
    if (problem) out.push({ at, message: problem });
  }
  return out;
}
