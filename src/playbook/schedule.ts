/** Checks of `on.schedule`: cron syntax, that the schedule fires, time zone, and frequency. */
import { cronProblem as findCronProblem } from './cron.js';

/** Answers by expression and zone: an expression that never fires takes croner up to ~0.3 s to rule out. */
const cronProblems = new Map<string, string | undefined>();

/**
 * What is wrong with a schedule's cron expression in its time zone (default UTC), or undefined: the expression
 * is valid exactly when the daemon's scheduler will fire it (src/playbook/cron.ts).
 */
export function cronProblem(expression: string, timezone = 'UTC'): string | undefined {
  const key = `${timezone}\n${expression}`;
  if (cronProblems.has(key)) return cronProblems.get(key);
  const problem = findCronProblem(expression, timezone);
  if (cronProblems.size >= 10_000) cronProblems.clear();
  cronProblems.set(key, problem);
  return problem;
}

/** True when a valid cron expression fires more than once a minute (a seconds field that is not one value). */
export function firesMoreThanOncePerMinute(expression: string): boolean {
  const fields = expression.trim().split(/\s+/);
  return fields.length === 6 && !/^[0-9]+$/.test(fields[0] as string);
}

const zones = new Set(Intl.supportedValuesOf('timeZone'));

export function isTimeZone(name: string): boolean {
  if (zones.has(name) || name === 'UTC') return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}
