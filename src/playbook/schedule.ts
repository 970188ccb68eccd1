/** Checks of `on.schedule`: cron syntax, that the schedule fires, time zone, and frequency. */
import { checkCron } from './cron.js';
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
    const checked = checkCron(s.cron, zone);
    if (!checked.ok) out.push({ key: 'cron', rule: 'cron', message: checked.problem, severity: 'error' });
    else if (checked.frequent)
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
