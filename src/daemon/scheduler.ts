/**
 * The cron scheduler of the daemon (product.md sections 1 and 5). Each schedule is a timer on the injected clock
 * to its next occurrence, which the cron engine of src/playbook/cron.ts computes: the same engine that
 * `validate` asks whether an expression fires at all. The store keeps when each schedule last fired, and a
 * fire's queued run is stored with its fire time in one transaction. When a timer runs, and when the daemon
 * starts, the scheduler lists the occurrences since the last one it handled with one function
 * (`occurrences`): the latest is fired, the earlier ones are missed runs, to which the schedule's `missed` policy
 * applies. So the runs a restarted daemon fires for its downtime are exactly those a running one would have.
 */
import { isoTime, systemClock, type Clock } from '../clock.js';
import { silentLogger, type Logger } from '../log.js';
import { backoffDelay } from '../retry.js';
import type { Playbook } from '../playbook/schema.js';
import { compileCron, occurrences, type CronSchedule } from '../playbook/cron.js';
import { isTimeZone, scheduleKey } from '../playbook/schedule.js';
import { versionOf } from '../playbook/version.js';
import { newRunId } from '../runner/run-id.js';
import { triggerText } from '../store/run-views.js';
import type { RunRecord, Store } from '../store/store.js';

export interface ScheduleEntry {
  /** Unique key of this schedule, e.g. `${playbook}#${timezone}#${cron}`: what the store keys fire times by. */
  key: string;
  /**
   * The key versions before this one kept its last fire under, `${playbook}#${index}`: read once, when `key` has
   * none, so that the runs missed while upgrading are made up.
   */
  formerKey?: string;
  playbook: string;
  /** 5 or 6 fields (seconds first), or a nickname such as `@daily`: the dialect of src/playbook/cron.ts. */
  cron: string;
  /** IANA time zone. @default 'UTC' */
  timezone?: string;
  /** What to do with the occurrences missed while the daemon was down. @default 'latest' */
  missed?: 'latest' | 'all' | 'none';
  /** Allow a fire while the previous run of this schedule is unfinished. @default false */
  overlap?: boolean;
}

/**
 * The schedules of a playbook's `on.schedule`, as the scheduler takes them. Each is keyed by what it is, its
 * time zone and expression, not by its place in the list: a schedule removed from or added to the list leaves
 * the others' fire times theirs, and an expression edited between two starts is a new schedule, with no runs
 * missed before it existed.
 */
export function schedulesOf(pb: Playbook): ScheduleEntry[] {
  const s = pb.on.schedule;
  const list = s === undefined ? [] : Array.isArray(s) ? s : [s];
  return list.map((x, i) => ({
    key: scheduleKey(pb.name, x),
    formerKey: `${pb.name}#${i}`,
    playbook: pb.name,
    ...x,
    missed: x.missed as ScheduleEntry['missed'],
  }));
}

/**
 * Why a schedule's run was made: its fire on time, one missed while the daemon was down (or the process
 * frozen), or a backfill by hand (`fleetbook run --scheduled-at`) of a fire time the daemon did not run.
 */
export type FireReason = 'schedule' | 'missed' | 'backfill';

/**
 * The trigger of the run a fire of `entry` at `at` starts: which schedule fired, for which occurrence, and why;
 * `through`, for a missed run fired with later ones, the latest time of its fire (fireThrough).
 */
export function scheduleTrigger(
  entry: ScheduleEntry,
  at: Date,
  reason: FireReason,
  through?: Date,
): Record<string, unknown> {
  return {
    type: 'schedule',
    schedule: entry.key,
    cron: entry.cron,
    scheduledAt: at.toISOString(),
    reason,
    ...(through && through > at ? { through: through.toISOString() } : {}),
  };
}

/**
 * The queued run a fire of `entry` at `at` starts, made at `now` (ms) by owner `owner`: the trigger that says
 * which schedule fired for which occurrence (and, given `through`, the latest time of its fire), and no inputs of
 * its own (the runner gives it their defaults).
 * The daemon's fires and `fleetbook test`'s scheduled cases both make their runs here; `fleetbook run
 * --scheduled-at` gives its run the same trigger.
 */
export function scheduledRun(
  entry: ScheduleEntry,
  pb: Playbook,
  at: Date,
  reason: FireReason,
  o: { owner: string; now: number; through?: Date },
): RunRecord {
  return {
    id: newRunId(),
    owner: o.owner,
    playbook: entry.playbook,
    version: versionOf(pb).version,
    status: 'queued',
    trigger: scheduleTrigger(entry, at, reason, o.through),
    inputs: {},
    startedAt: isoTime(o.now),
  };
}

/** An unfinished scheduled run, as the scheduler asks whether it holds a fire back. */
export type UnfinishedRun = Pick<RunRecord, 'id' | 'trigger'>;

/**
 * The latest time (ms) of the fire of `entry` that stored `run`, when it was a missed run fired with later ones
 * (its trigger's `through`). A fire of several runs stores them one by one, each with its fire time: while the
 * schedule's last fire in the store is before this time, the fire was cut off part way (its store gone, or
 * another replica's fire of the same times going on beside it), and the next fire of the schedule, on any
 * replica, goes on with it: the run is part of that fire, not a previous run holding it back. Once its fire is
 * stored through its end, the run holds the next fire back as any other.
 */
export function fireThrough(entry: ScheduleEntry, run: UnfinishedRun): number | undefined {
  const t = (run.trigger ?? {}) as { schedule?: unknown; through?: unknown };
  return t.schedule === entry.key && typeof t.through === 'string' ? Date.parse(t.through) : undefined;
}

export interface SchedulerOptions {
  store: Pick<Store, 'lastFire' | 'recordFire'>;
  entries: ScheduleEntry[];
  /**
   * Builds the queued run for a fire; the scheduler stores it with the fire time in one transaction. `through`,
   * for a missed run fired with later ones, is the latest time of its fire: its trigger keeps it (scheduledRun).
   */
  makeRun(entry: ScheduleEntry, scheduledAt: Date, reason: FireReason, through?: Date): RunRecord;
  /**
   * The unfinished (queued or running) scheduled runs of the entry's playbook, which hold its fires back (no
   * overlap unless allowed): in this process, in another replica on the store, a backfill's (`fleetbook run
   * --scheduled-at`). Taken until the first that holds a fire back, which the log line of the fire skipped
   * names; those of a fire of the entry cut off part way hold none (fireThrough).
   */
  unfinished(entry: ScheduleEntry): Iterable<UnfinishedRun> | AsyncIterable<UnfinishedRun>;
  /**
   * Of the times of missed fires of `entry`, those a run of the schedule was already for (a backfill, `fleetbook
   * run --scheduled-at`), by ISO time, with the run's id: they are not made up again. @default none
   */
  ranAlready?(entry: ScheduleEntry, times: Date[]): Promise<Map<string, string>>;
  /** Called after a fire's run is stored: the daemon hands it to its runner pool. */
  started(run: RunRecord): void;
  /** Called for a fire skipped while the previous run is unfinished, by the process that claimed the fire. */
  skipped?(entry: ScheduleEntry, at: Date): void;
  logger?: Logger;
  /** Max missed runs fired for policy `all` (the rest are logged and dropped). @default 100 */
  maxCatchUp?: number;
  /** What the timers read and wait on. @default systemClock */
  clock?: Clock;
  /**
   * The longest single wait, in ms: a timer to a later occurrence wakes up this often to read the clock again.
   * Node's timers follow a monotonic clock, which stands still while the machine sleeps and ignores a step of
   * the wall clock; waking up every minute bounds how late a fire can be after either. At most 2^31 - 1.
   * @default 60000
   */
  maxWait?: number;
}

interface Fire {
  at: Date;
  reason: FireReason;
}

/** A started schedule. */
interface Armed {
  /** The entry it fires: one of the same key, the latest given (`update`). */
  entry: ScheduleEntry;
  schedule: CronSchedule;
  /** The occurrences up to this time (ms) are handled: fired, or dropped by the policy. */
  cursor: number;
  /** The occurrence its timer waits for. */
  next: number | undefined;
  stop: AbortController;
}

const MAX_TIMEOUT = 2 ** 31 - 1;
/** How long after a fire (or a start's catch-up) that failed it is tried again; twice as long each time after. */
export const FIRE_RETRY_FIRST_MS = 5_000;
/** The longest wait between two tries of a fire that fails. */
export const FIRE_RETRY_MAX_MS = 5 * 60_000;
const FIRE_BACKOFF = {
  baseDelayMs: FIRE_RETRY_FIRST_MS,
  maxDelayMs: FIRE_RETRY_MAX_MS,
  jitter: 'none',
} as const;

export class Scheduler {
  private readonly log: Logger;
  private readonly maxCatchUp: number;
  private readonly clock: Clock;
  private readonly maxWait: number;
  private readonly armed = new Map<string, Armed>();
  private entries: ScheduleEntry[];
  private stopped = false;

  constructor(private readonly o: SchedulerOptions) {
    this.entries = o.entries;
    this.log = o.logger ?? silentLogger;
    this.maxCatchUp = o.maxCatchUp ?? 100;
    this.clock = o.clock ?? systemClock;
    this.maxWait = Math.min(Math.max(1, o.maxWait ?? 60_000), MAX_TIMEOUT);
  }

  /**
   * Applies the missed-run policy from each entry's persisted last fire time, then starts the timers; resolves
   * once every entry's missed runs are handled.
   */
  async start(): Promise<void> {
    const arming: Promise<void>[] = [];
    for (const entry of this.entries) {
      if (this.stopped || this.armed.has(entry.key)) continue;
      this.attempt(entry, 'schedule not started', () => {
        const timezone = entry.timezone ?? 'UTC';
        if (!isTimeZone(timezone)) throw new Error(`unknown time zone ${JSON.stringify(entry.timezone)}`);
        // The schedule the playbook's check compiled: compileCron keeps each, once in the process.
        const compiled = compileCron(entry.cron, timezone);
        if (!compiled.ok) throw new Error(compiled.problem);
        const now = this.clock.now();
        const armed: Armed = {
          entry,
          schedule: compiled.schedule,
          cursor: now,
          next: undefined,
          stop: new AbortController(),
        };
        this.armed.set(entry.key, armed);
        arming.push(
          this.attemptAsync(entry, 'missed runs not applied; trying again', () =>
            this.catchUp(entry, armed, now),
          ).then((caughtUp) => void this.run(armed, caughtUp)),
        );
      });
    }
    await Promise.all(arming);
  }

  stop(): void {
    this.stopped = true;
    for (const armed of this.armed.values()) armed.stop.abort();
    this.armed.clear();
  }

  /**
   * Takes the schedules of a reloaded set of playbooks. A schedule of the same key (playbook, time zone and
   * expression) goes on as it is, its timer and its last fire untouched: it fires no occurrence twice and misses
   * none; it fires by the entry given now (its `missed` and `overlap`). One no longer given stops; one new is
   * started as at start (its missed runs, by its stored last fire). Resolves once the new ones are started.
   */
  async update(entries: ScheduleEntry[]): Promise<void> {
    const keys = new Set(entries.map((e) => e.key));
    for (const [key, armed] of this.armed) {
      if (keys.has(key)) continue;
      armed.stop.abort();
      this.armed.delete(key);
    }
    for (const entry of entries) {
      const armed = this.armed.get(entry.key);
      if (armed) armed.entry = entry;
    }
    this.entries = entries;
    await this.start();
  }

  /** Next fire time of each entry (for the daemon's /status); undefined when it is not scheduled. */
  next(): { key: string; playbook: string; next: string | undefined }[] {
    return this.entries.map((e) => {
      const at = this.armed.get(e.key)?.next;
      return {
        key: e.key,
        playbook: e.playbook,
        next: at === undefined ? undefined : new Date(at).toISOString(),
      };
    });
  }

  /** On start: fires (per policy) the occurrences since the persisted last fire, or records the first baseline. */
  private async catchUp(entry: ScheduleEntry, armed: Armed, now: number): Promise<void> {
    let last = await this.o.store.lastFire(entry.key);
    if (last === undefined && entry.formerKey) {
      // Taken over once: a schedule edited in the very restart that upgrades is caught up from the old one's.
      last = await this.o.store.lastFire(entry.formerKey);
      if (last !== undefined) await this.o.store.recordFire(entry.key, last);
    }
    if (last === undefined) {
      await this.o.store.recordFire(entry.key, new Date(now).toISOString());
      // Said, since a schedule whose expression or time zone changed starts here too, with no missed runs.
      this.log.info('schedule registered: it fires from now on', {
        playbook: entry.playbook,
        schedule: entry.key,
      });
      return;
    }
    const since = Date.parse(last);
    // A clock set back since the last fire must not fire its occurrences again.
    armed.cursor = Math.max(now, since);
    const { times, more } = occurrences(armed.schedule, since, now, this.maxCatchUp + 1);
    const latest = times.at(-1);
    if (latest === undefined) return;
    const missed = times.map((t) => new Date(t));
    const fired = await this.fire(
      entry,
      this.select(entry, missed, false).map((at) => ({ at, reason: 'missed' })),
      new Date(latest),
    );
    this.log.info('runs missed while down', {
      playbook: entry.playbook,
      schedule: entry.key,
      policy: entry.missed ?? 'latest',
      missed: more || times.length > this.maxCatchUp ? `more than ${this.maxCatchUp}` : times.length,
      fired,
      since: last,
      latest: new Date(latest).toISOString(),
    });
  }

  /**
   * Waits for each next occurrence in turn and fires it, until stopped. A fire that failed (the store away, say)
   * is tried again, FIRE_RETRY_FIRST_MS after, then twice as long each time up to FIRE_RETRY_MAX_MS, until it is
   * stored: its occurrences stay due meanwhile, and one passed in the wait is a missed run, to which the
   * entry's policy applies. So is the start's catch-up (`caughtUp` false: it failed).
   */
  private async run(armed: Armed, caughtUp: boolean): Promise<void> {
    const { signal } = armed.stop;
    let { entry } = armed;
    let failures = caughtUp ? 0 : 1;
    try {
      while (!signal.aborted) {
        entry = armed.entry;
        const retryAt = failures ? this.clock.now() + backoffDelay(failures, FIRE_BACKOFF) : 0;
        const next = caughtUp ? armed.schedule.next(armed.cursor) : retryAt;
        armed.next = next === undefined ? undefined : Math.max(next, retryAt);
        if (armed.next === undefined) {
          this.log.warn('schedule has no further occurrence', {
            playbook: entry.playbook,
            schedule: entry.key,
          });
          return;
        }
        const until = armed.next;
        for (
          let wait = until - this.clock.now();
          wait > 0 && !signal.aborted;
          wait = until - this.clock.now()
        ) {
          await this.clock.sleep(Math.min(wait, this.maxWait), signal);
        }
        if (signal.aborted) return;
        const now = this.clock.now();
        const ok = caughtUp
          ? await this.tick(armed.entry, armed)
          : await this.attemptAsync(entry, 'missed runs not applied; trying again', () =>
              this.catchUp(entry, armed, now),
            );
        caughtUp ||= ok;
        failures = ok ? 0 : failures + 1;
      }
    } catch (e) {
      if (!signal.aborted) {
        this.log.error('schedule stopped', {
          playbook: entry.playbook,
          schedule: entry.key,
          error: (e as Error).message,
        });
      }
    }
  }

  /**
   * A timer ran: fires the occurrences since the last tick. The latest is on time; the earlier ones were passed
   * while the process was blocked or suspended, and the entry's policy applies to them. Never throws: false when
   * the fire failed, its occurrences left due.
   */
  private async tick(entry: ScheduleEntry, armed: Armed): Promise<boolean> {
    const since = armed.cursor;
    const ok = await this.attemptAsync(entry, 'schedule fire failed; trying again', async () => {
      const now = this.clock.now();
      armed.cursor = Math.max(armed.cursor, now);
      const { times, more } = occurrences(armed.schedule, since, now, this.maxCatchUp + 1);
      const latest = times.at(-1);
      if (latest === undefined) return;
      const skipped = times.slice(0, -1).map((t) => new Date(t));
      const due = this.select(entry, skipped, true).map((at): Fire => ({ at, reason: 'missed' }));
      const at = new Date(latest);
      const fired = await this.fire(entry, [...due, { at, reason: 'schedule' }], at);
      if (skipped.length) {
        this.log.warn('runs missed while the process was blocked', {
          playbook: entry.playbook,
          schedule: entry.key,
          policy: entry.missed ?? 'latest',
          missed: more ? `more than ${skipped.length}` : skipped.length,
          fired,
        });
      }
    });
    // Fires already stored are not fired again: the store refuses a fire time it holds (recordFire).
    if (!ok) armed.cursor = since;
    return ok;
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
   * fires, when there are any) ends up recorded as the last fire. A fire another process on the store claimed
   * first (a replica) is its own: this one starts nothing for it; nor for a missed fire a run of the schedule was
   * already for (a backfill). Returns how many runs this process fired. A fire that fails part way is tried
   * again whole, by this process or another on the store: those of its fires stored are refused by the store, and
   * its runs stored hold none of the rest back (fireThrough).
   */
  private async fire(entry: ScheduleEntry, fires: Fire[], latest: Date): Promise<number> {
    const meta = { playbook: entry.playbook, schedule: entry.key, scheduledAt: latest.toISOString() };
    const holder = fires.length > 0 && !entry.overlap ? await this.holder(entry) : undefined;
    const skipped = holder !== undefined;
    if (holder) {
      this.log.warn('skipped: previous run still running', {
        ...meta,
        runId: holder.id,
        previous: triggerText(holder.trigger),
      });
      fires = [];
    }
    const missed = fires.filter((f) => f.reason === 'missed').map((f) => f.at);
    const done = (missed.length && (await this.o.ranAlready?.(entry, missed))) || new Map<string, string>();
    let fired = 0;
    for (const { at, reason } of fires) {
      // Stopped, or removed by a reload, while this fire was being decided: its playbook may be gone.
      if (!this.armed.has(entry.key)) return fired;
      const by = reason === 'missed' ? done.get(at.toISOString()) : undefined;
      if (by) {
        this.log.info('not made up: a run of the schedule was for it', {
          ...meta,
          scheduledAt: at.toISOString(),
          runId: by,
        });
        continue;
      }
      const run = this.o.makeRun(entry, at, reason, latest);
      if (!(await this.o.store.recordFire(entry.key, at.toISOString(), run))) {
        this.log.debug('fired by another process on the store', { ...meta, scheduledAt: at.toISOString() });
        continue;
      }
      fired++;
      this.log.info('schedule fired', { ...meta, scheduledAt: at.toISOString(), reason, runId: run.id });
      // The run is stored (queued): if the pool refuses it, a restarted daemon resumes it.
      this.attempt(entry, 'scheduled run not started', () => this.o.started(run));
    }
    // No run recorded it (none due, the fires skipped, or the latest was run already): recorded as handled.
    if (
      (!fires.length || done.size) &&
      (await this.o.store.recordFire(entry.key, latest.toISOString())) &&
      skipped
    )
      this.o.skipped?.(entry, latest);
    return fired;
  }

  /** The first unfinished scheduled run of the playbook that holds a fire of `entry` back, if any. */
  private async holder(entry: ScheduleEntry): Promise<UnfinishedRun | undefined> {
    // Read once, and only for a run that says how far its fire goes.
    let last: Promise<string | undefined> | undefined;
    for await (const run of this.o.unfinished(entry)) {
      const through = fireThrough(entry, run);
      if (through === undefined) return run;
      const lastFire = await (last ??= this.o.store.lastFire(entry.key));
      if (lastFire !== undefined && Date.parse(lastFire) >= through) return run;
    }
    return undefined;
  }

  /** Runs `fn`; an error is logged as `what`. Whether it succeeded. */
  private async attemptAsync(entry: ScheduleEntry, what: string, fn: () => Promise<void>): Promise<boolean> {
    try {
      await fn();
      return true;
    } catch (e) {
      this.log.error(what, { playbook: entry.playbook, schedule: entry.key, error: (e as Error).message });
      return false;
    }
  }

  private attempt(entry: ScheduleEntry, what: string, fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.log.error(what, { playbook: entry.playbook, schedule: entry.key, error: (e as Error).message });
    }
  }
}
