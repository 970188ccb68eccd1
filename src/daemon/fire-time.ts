/**
 * Which schedule of a playbook fires at a given time, or, in one wording, why none does: a playbook without
 * `on.schedule`, a time its schedules never fire at (saying when they do). `fleetbook test` asks it of a case's
 * `schedule: { at }`, `fleetbook run --scheduled-at` of the fire it makes up.
 */
import { compileCron, occurrences, type CronSchedule } from '../playbook/cron.js';
import type { Playbook } from '../playbook/schema.js';
import type { RunListQuery, RunRecord, RunStore } from '../store/store.js';
import { schedulesOf, type ScheduleEntry } from './scheduler.js';

/** The compiled schedule of an entry (validate checked it: undefined only for one that cannot fire). */
export function compiled(entry: ScheduleEntry): CronSchedule | undefined {
  const c = compileCron(entry.cron, entry.timezone ?? 'UTC');
  return c.ok ? c.schedule : undefined;
}

/** The first of `entries` that fires at `at` (ms). */
export function firingAt(entries: ScheduleEntry[], at: number): ScheduleEntry | undefined {
  return entries.find((e) => compiled(e)?.next(at - 1) === at);
}

/** The latest occurrence of `s` before `at`, looked for up to a year back. */
function latestBefore(s: CronSchedule, at: number): number | undefined {
  return occurrences(s, at - 366 * 86_400_000, at - 1, 1).times[0];
}

/** Said of a playbook no schedule starts, asked for a scheduled run. */
export function noSchedule(pb: Playbook): string {
  return `playbook ${pb.name} has no on.schedule: no schedule starts it`;
}

export type FireAt =
  | { entry: ScheduleEntry }
  /** `unscheduled`: the playbook has no `on.schedule` at all. */
  | { problem: string; unscheduled: boolean };

/**
 * The schedule of `pb` that fires at `at` (ms), or what is wrong. `text` is the time as it was given, to be
 * said back as it was written.
 */
export function fireAt(pb: Playbook, at: number, text: string): FireAt {
  const entries = schedulesOf(pb);
  if (!entries.length) return { problem: noSchedule(pb), unscheduled: true };
  const entry = firingAt(entries, at);
  if (entry) return { entry };
  const [first] = entries as [ScheduleEntry];
  const s = compiled(first);
  const before = s && latestBefore(s, at);
  const next = s?.next(at);
  const iso = (t: number | undefined) => (t === undefined ? 'never' : new Date(t).toISOString());
  const of = entries.length > 1 ? `its first schedule, ${first.cron}` : first.cron;
  return {
    problem: `the schedule of ${pb.name} (${of} in ${first.timezone ?? 'UTC'}) does not fire at ${text}: it fires ${before === undefined ? '' : `at ${iso(before)} and `}next at ${iso(next)}`,
    unscheduled: false,
  };
}

/**
 * Of the fire `times` of `entry`, those a run of the schedule in the store was for, by ISO time, with its id: a
 * backfill (`fleetbook run --scheduled-at`) of a night the daemon had not run yet, which it is not to make up
 * again. A run for a fire started after it: the runs started since the first of `times` are read.
 */
export async function runsForFires(
  store: Pick<RunStore, 'listRuns'>,
  entry: ScheduleEntry,
  times: Date[],
): Promise<Map<string, string>> {
  const wanted = new Set(times.map((t) => t.toISOString()));
  const from = new Date(Math.min(...times.map((t) => t.getTime()))).toISOString();
  const found = new Map<string, string>();
  for await (const r of everyRun(store, { playbook: entry.playbook, trigger: 'schedule', from })) {
    const t = (r.trigger ?? {}) as { schedule?: unknown; scheduledAt?: unknown };
    if (t.schedule === entry.key && typeof t.scheduledAt === 'string' && wanted.has(t.scheduledAt))
      found.set(t.scheduledAt, r.id);
  }
  return found;
}

/** Every run of `query` in the store, newest first, read a page at a time as they are taken. */
export async function* everyRun(
  store: Pick<RunStore, 'listRuns'>,
  query: Omit<RunListQuery, 'before' | 'limit'>,
): AsyncGenerator<RunRecord> {
  const PAGE = 500;
  for (let before: { startedAt: string; id: string } | undefined; ;) {
    const page = await store.listRuns({ ...query, limit: PAGE, ...(before ? { before } : {}) });
    yield* page;
    const last = page.at(-1);
    if (page.length < PAGE || !last) return;
    before = { startedAt: last.startedAt, id: last.id };
  }
}

/**
 * The scheduled runs of `playbook` in the store not ended, running then queued, newest first: those of every
 * replica on the store, and the backfills, as a fire asks which one holds it back (Scheduler `unfinished`).
 */
export async function* unfinishedScheduled(
  store: Pick<RunStore, 'listRuns'>,
  playbook: string,
): AsyncGenerator<RunRecord> {
  for (const status of ['running', 'queued'] as const)
    yield* everyRun(store, { playbook, trigger: 'schedule', status });
}
