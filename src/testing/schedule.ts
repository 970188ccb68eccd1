/**
 * A case's runs started as the playbook's schedule starts them (`schedule: true`, `schedule: { at }`): the
 * queued run the daemon's scheduler makes for a fire (scheduledRun), at the fire's time. A case that gives one
 * runs on its own clock (CaseClock), which starts at its first scheduled time, as does the emulator's: the run's
 * `run.startedAt` and `run.date` are the fire's, and the service's time at the start is the run's, as in
 * production.
 */
import { parseIsoTime, systemClock, type Clock } from '../clock.js';
import { compiled, fireAt, firingAt, noSchedule } from '../daemon/fire-time.js';
import { scheduledRun, schedulesOf, type ScheduleEntry } from '../daemon/scheduler.js';
import type { Playbook } from '../playbook/schema.js';
import type { RunRecord } from '../store/store.js';
import type { Seg } from './load.js';

type Json = Record<string, unknown>;

/** One of the runs of a case: one of its `before`, or (last) its own. */
export interface CaseRun {
  /** Where it is in the test file: `['cases', i, 'before', j]` or `['cases', i]`. */
  path: Seg[];
  /** What the test file says of it: `event`, `inputs`, `schedule`. */
  start: Json;
  playbook: Playbook;
}

/** The time (ms) of `schedule.at`, when the run gives one that is a time; undefined otherwise. */
function atOf(start: Json): number | undefined {
  const s = start.schedule;
  if (!s || typeof s !== 'object' || typeof (s as Json).at !== 'string') return undefined;
  return parseIsoTime((s as Json).at as string);
}

/**
 * What is wrong with the `schedule` of the runs of a case that only their playbooks tell: a playbook without
 * `on.schedule`, a time none of its schedules fires at. Each as [path, message, at the key].
 */
export function scheduleProblems(runs: CaseRun[]): [Seg[], string, boolean][] {
  const out: [Seg[], string, boolean][] = [];
  for (const { path, start, playbook } of runs) {
    if (start.schedule === undefined) continue;
    if (!schedulesOf(playbook).length) {
      out.push([
        [...path, 'schedule'],
        `${noSchedule(playbook)} (give it inputs, or nothing for the inputs' defaults)`,
        true,
      ]);
      continue;
    }
    const at = atOf(start);
    if (at === undefined) continue;
    const fire = fireAt(playbook, at, String((start.schedule as Json).at));
    if ('problem' in fire) out.push([[...path, 'schedule', 'at'], fire.problem, false]);
  }
  return out;
}

/** A run's fire: the schedule that fires, and when. */
export interface Fire {
  entry: ScheduleEntry;
  at: number;
}

/**
 * The fire of each run of a case (undefined for a run the schedule does not start), in order: `at`'s, or for
 * `schedule: true` the schedule's next fire after the one before (after `now` for the first). The test file
 * and the playbooks are checked (scheduleProblems): each such run has one.
 */
export function firesOf(runs: CaseRun[], now: number): (Fire | undefined)[] {
  let after = now;
  return runs.map(({ start, playbook }) => {
    if (start.schedule === undefined) return undefined;
    const entries = schedulesOf(playbook);
    const at = atOf(start);
    let fire: Fire | undefined;
    if (at !== undefined) fire = { entry: firingAt(entries, at) ?? (entries[0] as ScheduleEntry), at };
    else
      for (const entry of entries) {
        const next = compiled(entry)?.next(after);
        if (next !== undefined && (!fire || next < fire.at)) fire = { entry, at: next };
      }
    if (!fire)
      throw new Error(
        `no schedule of playbook ${playbook.name} fires after ${new Date(after).toISOString()}`,
      );
    after = fire.at;
    return fire;
  });
}

/**
 * The clock of a case's runs: the machine's, or when `start` is given, one that reads `start` when its first run
 * starts and moves with the machine's. A scheduled run moves it on to its time; it never goes back.
 */
export class CaseClock implements Clock {
  /** Set at the first read: the emulator and the receivers start before any run. */
  private offset: number | undefined;

  constructor(private readonly start?: number) {}

  now(): number {
    this.offset ??= this.start === undefined ? 0 : this.start - Date.now();
    return Date.now() + this.offset;
  }

  /**
   * Moves the clock to `t`, unless it is past it already (earlier runs of the case ran past it): the time the
   * run starts, `t` or later.
   */
  startAt(t: number): number {
    const now = this.now();
    if (t > now) this.offset = (this.offset as number) + (t - now);
    return Math.max(t, now);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return systemClock.sleep(ms, signal);
  }

  timer(ms: number, fire: () => void): () => void {
    return systemClock.timer(ms, fire);
  }
}

/** The queued run `fire` starts, made as the daemon's scheduler makes it, at the case clock's time for it. */
export function firedRun(fire: Fire, pb: Playbook, clock: CaseClock, owner: string): RunRecord {
  return scheduledRun(fire.entry, pb, new Date(fire.at), 'schedule', { owner, now: clock.startAt(fire.at) });
}
