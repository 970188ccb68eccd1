/** Checks of `on.schedule`: cron syntax, time zone, and frequency. */
import type * as NodeCron from 'node-cron';
import { onFirstUse } from '../util/on-first-use.js';

/**
 * node-cron, loaded by the first schedule to check or to fire: most playbooks have none. The daemon's scheduler
 * takes it from here too, so that the process has one node-cron (it keeps a registry of its tasks).
 */
export const nodeCron = onFirstUse<typeof NodeCron>(import.meta.url, 'node-cron');

/** Answers by expression: node-cron's check is slow, and playbooks repeat their schedules. */
const cronProblems = new Map<string, string | undefined>();

export function cronProblem(expression: string): string | undefined {
  if (cronProblems.has(expression)) return cronProblems.get(expression);
  const problem = findCronProblem(expression);
  if (cronProblems.size >= 10_000) cronProblems.clear();
  cronProblems.set(expression, problem);
  return problem;
}

function findCronProblem(expression: string): string | undefined {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) {
    return `cron expression ${JSON.stringify(expression)} has ${fields.length} fields; it needs 5 (minute hour day month weekday) or 6 (seconds first)`;
  }
  return nodeCron().validate(expression)
    ? undefined
    : `invalid cron expression ${JSON.stringify(expression)}`;
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
