/** Checks of `on.schedule`: cron syntax, that the schedule fires, time zone, and frequency. */
import { checkCron, type CronSchedule } from './cron.js';
import type { Rule, Severity } from './diagnostics.js';

/** A problem of one schedule, at its `cron` or its `timezone`. */
export interface ScheduleProblem {
  key: 'cron' | 'timezone';
  rule: Rule;
  message: string;
  severity: Severity;
}

/**
 * What a schedule is, for the daemon (its fires are stored under it) and for validate (a playbook may not give
 * one twice): its playbook, time zone and expression.
 */
export function scheduleKey(playbook: string, s: { cron: string; timezone?: string | undefined }): string {
  return `${playbook}#${s.timezone ?? 'UTC'}#${s.cron}`;
}

/** The problems of one `on.schedule` entry. */
export function scheduleProblems(s: Record<string, unknown>): ScheduleProblem[] {
  const out: ScheduleProblem[] = [];
  const badZone = typeof s.timezone === 'string' && !isTimeZone(s.timezone);
  if (typeof s.cron === 'string') {
    // In the schedule's zone: DST decides whether some expressions ever fire.
    const zone = typeof s.timezone === 'string' && !badZone ? s.timezone : 'UTC';
    const { problem, frequent } = cronCheck(s.cron, zone);
    if (problem) out.push({ key: 'cron', rule: 'cron', message: problem, severity: 'error' });
    else if (frequent)
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

/** What the check of a cron expression found: what is wrong with it, else whether it fires too often. */
interface CronCheck {
  problem?: string;
  frequent: boolean;
}

/** Answers by expression and zone: an expression that never fires takes croner up to ~0.3 s to rule out. */
const cronChecks = new Map<string, CronCheck>();

/** A schedule's cron expression in its time zone, compiled once for both checks (checkCron), and kept. */
function cronCheck(expression: string, timezone: string): CronCheck {
  const key = `${timezone}\n${expression}`;
  let check = cronChecks.get(key);
  if (check) return check;
  const checked = checkCron(expression, timezone);
  check = checked.ok
    ? { frequent: firesMoreThanOncePerMinute(checked.schedule) }
    : { problem: checked.problem, frequent: false };
  if (cronChecks.size >= 10_000) cronChecks.clear();
  cronChecks.set(key, check);
  return check;
}

/**
 * What is wrong with a schedule's cron expression in its time zone (default UTC), or undefined: the expression
 * is valid exactly when the daemon's scheduler will fire it (src/playbook/cron.ts).
 */
export function cronProblem(expression: string, timezone = 'UTC'): string | undefined {
  return cronCheck(expression, timezone).problem;
}

/**
 * True when a schedule fires more than once in some minute: its expression has a seconds field that gives more
 * than one second (`*\/60` and `0-0` give one). Every second of a minute that matches fires, so the first two
 * occurrences from the start of a minute are in one minute exactly when that is so.
 */
export function firesMoreThanOncePerMinute(schedule: CronSchedule): boolean {
  if (schedule.expression.trim().split(/\s+/).length !== 6) return false;
  const first = schedule.next(Date.UTC(2026, 0, 1) - 1);
  const second = first === undefined ? undefined : schedule.next(first);
  return second !== undefined && second - (first as number) < 60_000;
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
