/**
 * The cron scheduler of the daemon (product.md sections 1 and 5). node-cron fires each schedule in its time
 * zone. The store keeps when each schedule last fired, and a fire's queued run is stored with its fire time in
 * one transaction, so that a restarted daemon knows exactly which occurrences it missed while down and applies
 * the schedule's `missed` policy to them (cron-parser lists them: node-cron only looks forward).
 */
import type { ScheduledTask } from 'node-cron';
import { CronExpressionParser } from 'cron-parser';
import { silentLogger, type Logger } from '../log.js';
import { isTimeZone, nodeCron } from '../playbook/schedule.js';
import type { RunRecord, Store } from '../store/store.js';

export interface ScheduleEntry {
  /** Unique key of this schedule, e.g. `${playbook}#${index}`: what the store keys fire times by. */
  key: string;
  playbook: string;
  /** 5 or 6 fields (seconds first). */
  cron: string;
  /** IANA time zone. @default 'UTC' */
  timezone?: string;
  /** What to do with the occurrences missed while the daemon was down. @default 'latest' */
  missed?: 'latest' | 'all' | 'none';
  /** Allow a fire while the previous run of this schedule is unfinished. @default false */
  overlap?: boolean;
}

export type FireReason = 'schedule' | 'missed';

export interface SchedulerOptions {
  store: Pick<Store, 'lastFire' | 'recordFire'>;
  entries: ScheduleEntry[];
  /** Builds the queued run for a fire; the scheduler stores it with the fire time in one transaction. */
  makeRun(entry: ScheduleEntry, scheduledAt: Date, reason: FireReason): RunRecord;
  /** Whether the playbook has an unfinished run started by this schedule (no overlap unless allowed). */
  isRunning(entry: ScheduleEntry): boolean;
  /** Called after a fire's run is stored: the daemon hands it to its runner pool. */
  started(run: RunRecord): void;
  logger?: Logger;
  /** Max missed runs fired for policy `all` (the rest are logged and dropped). @default 100 */
  maxCatchUp?: number;
}

interface Fire {
  at: Date;
  reason: FireReason;
}

export class Scheduler {
  private readonly log: Logger;
  private readonly maxCatchUp: number;
  private readonly tasks = new Map<string, ScheduledTask>();
  /** Occurrences node-cron skipped because the process was frozen past them, until its next fire. */
  private readonly skipped = new Map<string, Date[]>();

  constructor(private readonly o: SchedulerOptions) {
    this.log = o.logger ?? silentLogger;
    this.maxCatchUp = o.maxCatchUp ?? 100;
  }

  /** Applies the missed-run policy from each entry's persisted last fire time, then starts the cron tasks. */
  start(): void {
    for (const entry of this.o.entries) {
      if (this.tasks.has(entry.key)) continue;
      this.attempt(entry, 'schedule not started', () => {
        // node-cron would only fail on an unknown zone at its first use, leaving a task it cannot destroy.
        if (!isTimeZone(zoneOf(entry)))
          throw new Error(`unknown time zone ${JSON.stringify(entry.timezone)}`);
        const task = nodeCron().createTask(entry.cron, (ctx) => this.tick(entry, ctx.date), {
          name: entry.key,
          timezone: zoneOf(entry),
          // By default node-cron drops an occurrence whose timer runs more than a second late (a busy event
          // loop, a suspended machine). Fire it late instead: when several were passed, node-cron fires the
          // latest and reports the others as missed, to which the entry's policy then applies.
          missedExecutionTolerance: Infinity,
        });
        task.on('execution:missed', (ctx) => {
          this.skipped.set(entry.key, [...(this.skipped.get(entry.key) ?? []), ctx.date]);
        });
        this.tasks.set(entry.key, task);
        // Synchronous, so no tick can interleave; the task then fires only occurrences after now.
        this.attempt(entry, 'missed runs not applied', () => this.catchUp(entry, task));
        task.start();
      });
    }
  }

  stop(): void {
    // destroy() clears the task's timer and removes it from node-cron's global registry.
    for (const task of this.tasks.values()) void task.destroy();
    this.tasks.clear();
    this.skipped.clear();
  }

  /** Next fire time of each entry (for the daemon's /status); undefined when it is not scheduled. */
  next(): { key: string; playbook: string; next: string | undefined }[] {
    return this.o.entries.map((e) => ({
      key: e.key,
      playbook: e.playbook,
      next: this.tasks.get(e.key)?.getNextRun()?.toISOString(),
    }));
  }

  /** On start: fires (per policy) the occurrences since the persisted last fire, or records the first baseline. */
  private catchUp(entry: ScheduleEntry, task: ScheduledTask): void {
    const now = new Date();
    const last = this.o.store.lastFire(entry.key);
    if (last === undefined) {
      this.o.store.recordFire(entry.key, now.toISOString());
      this.log.debug('schedule registered', { playbook: entry.playbook, schedule: entry.key });
      return;
    }
    // Listing occurrences takes 10-30 µs each, so only the most recent are listed: one more than can be fired.
    const missed = occurrences(entry, task, new Date(last), now, this.maxCatchUp + 1);
    const latest = missed.at(-1);
    if (!latest) return;
    const fired = this.fire(
      entry,
      this.select(entry, missed, false).map((at) => ({ at, reason: 'missed' })),
      latest,
    );
    this.log.info('runs missed while down', {
      playbook: entry.playbook,
      schedule: entry.key,
      policy: entry.missed ?? 'latest',
      missed: missed.length > this.maxCatchUp ? `more than ${this.maxCatchUp}` : missed.length,
      fired,
      since: last,
      latest: latest.toISOString(),
    });
  }

  /** A node-cron fire. Never throws: node-cron would only log the error to the console. */
  private tick(entry: ScheduleEntry, date: Date): void {
    this.attempt(entry, 'schedule fire failed', () => {
      // node-cron passes the occurrence (not the moment its timer ran); the store keys fires by the second.
      const at = new Date(Math.floor(date.getTime() / 1000) * 1000);
      const skipped = this.skipped.get(entry.key) ?? [];
      this.skipped.delete(entry.key);
      const due = this.select(entry, skipped, true).map((d): Fire => ({ at: d, reason: 'missed' }));
      const fired = this.fire(entry, [...due, { at, reason: 'schedule' }], at);
      if (skipped.length) {
        this.log.warn('runs missed while the process was blocked', {
          playbook: entry.playbook,
          schedule: entry.key,
          policy: entry.missed ?? 'latest',
          missed: skipped.length,
          fired,
        });
      }
    });
  }

  /**
   * The missed occurrences (oldest first) that the entry's policy fires. With a fire on time after them,
   * `latest` fires none of them: the on-time one is the latest.
   */
  private select(entry: ScheduleEntry, missed: Date[], onTime: boolean): Date[] {
    switch (entry.missed ?? 'latest') {
      case 'none':
        return [];
      case 'latest':
        return onTime ? [] : missed.slice(-1);
      case 'all':
        return missed.slice(Math.max(0, missed.length - this.maxCatchUp));
    }
  }

  /**
   * Stores and starts a run for each fire, in order, each in one transaction with its fire time. Fires nothing
   * while a previous run is unfinished, unless the entry allows overlap. Either way `latest` (the last of the
   * fires, when there are any) ends up recorded as the last fire. Returns how many runs were fired.
   */
  private fire(entry: ScheduleEntry, fires: Fire[], latest: Date): number {
    const meta = { playbook: entry.playbook, schedule: entry.key, scheduledAt: latest.toISOString() };
    if (fires.length && !entry.overlap && this.o.isRunning(entry)) {
      this.log.warn('skipped: previous run still running', meta);
      fires = [];
    }
    for (const { at, reason } of fires) {
      const run = this.o.makeRun(entry, at, reason);
      this.o.store.recordFire(entry.key, at.toISOString(), run);
      this.log.info('schedule fired', { ...meta, scheduledAt: at.toISOString(), reason, runId: run.id });
      // The run is stored (queued): if the pool refuses it, a restarted daemon resumes it.
      this.attempt(entry, 'scheduled run not started', () => this.o.started(run));
    }
    if (!fires.length) this.o.store.recordFire(entry.key, latest.toISOString());
    return fires.length;
  }

  private attempt(entry: ScheduleEntry, what: string, fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.log.error(what, { playbook: entry.playbook, schedule: entry.key, error: (e as Error).message });
    }
  }
}

function zoneOf(entry: ScheduleEntry): string {
  return entry.timezone ?? 'UTC';
}

/** The entry's occurrences in (after, upTo], oldest first: the `limit` most recent of them. */
function occurrences(
  entry: ScheduleEntry,
  task: ScheduledTask,
  after: Date,
  upTo: Date,
  limit: number,
): Date[] {
  // Walk back from upTo: prev() excludes currentDate itself, hence the millisecond.
  const it = CronExpressionParser.parse(entry.cron, {
    currentDate: new Date(upTo.getTime() + 1),
    tz: zoneOf(entry),
  });
  const found: Date[] = [];
  while (found.length < limit) {
    const at = it.prev().toDate();
    if (at.getTime() <= after.getTime()) break;
    // When both day of month and day of week are restricted, cron-parser matches either (Vixie cron) but
    // node-cron requires both: node-cron, which fires the schedule, decides.
    if (task.match(at)) found.unshift(at);
  }
  return found;
}
