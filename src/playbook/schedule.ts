/** Checks of `on.schedule`: cron syntax, that the schedule fires, time zone, and frequency. */
import { cronProblem as findCronProblem } from './cron.js';
import type { Rule, Severity } from './diagnostics.js';

/** A problem of one schedule, at its `cron` or its `timezone`. */
export interface ScheduleProblem {
  key: 'cron' | 'timezone';
  rule: Rule;
  message: string;
  severity: Severity;
}

/** The problems of one `on.schedule` entry. */
export function scheduleProblems(s: Record<string, unknown>): ScheduleProblem[] {
  const out: ScheduleProblem[] = [];
  const badZone = typeof s.timezone === 'string' && !isTimeZone(s.timezone);
  if (typeof s.cron === 'string') {
    // In the schedule's zone: DST decides whether some expressions ever fire.
    const zone = typeof s.timezone === 'string' && !badZone ? s.timezone : 'UTC';
    const problem = cronProblem(s.cron, zone);
    if (problem) out.push({ key: 'cron', rule: 'cron', message: problem, severity: 'error' });
    else if (firesMoreThanOncePerMinute(s.cron))
      out.push({
        key: 'cron',
        rule: 'schedule-frequency',
        message: `schedule ${JSON.stringify(s.cron)} fires more than once a minute`,
        severity: 'warning',
      });
  }
  if (badZone)
    out.push({
      key: 'timezone',
      rule: 'timezone',
      message: `unknown time zone ${JSON.stringify(s.timezone)} (use an IANA name such as America/New_York)`,
      severity: 'error',
    });
  return out;
}

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
