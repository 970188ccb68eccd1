/**
 * The matcher: takes stored callback events in order of arrival, matches each against the playbooks'
 * `on.callback` clauses, and stores the runs it starts with the event marked processed, in one transaction.
 */
import { isoTime } from '../clock.js';
import { condition, render } from '../expressions/template.js';
import type { Logger } from '../log.js';
import type { Playbook } from '../playbook/schema.js';
import { versionOf } from '../playbook/version.js';
import type { InboxEvent, InboxMessage, RunRecord, Store } from '../store/store.js';
import type { Json } from './callbacks.js';
import type { DaemonMetrics } from './metrics.js';
import type { RunPool } from './pool.js';
import { newRunId } from '../runner/run-id.js';

export function callbacksOf(pb: Playbook): { service: string; if?: string }[] {
  const c = pb.on.callback;
  return c === undefined ? [] : Array.isArray(c) ? c : [c];
}

/**
 * Whether `pb`'s `on.callback` selects an event of `service`. A filter that fails on the event selects
 * nothing; `onError` hears why.
 */
export function selects(
  pb: Playbook,
  service: string,
  event: Json,
  onError: (filter: string, error: Error) => void,
): boolean {
  return callbacksOf(pb).some((c) => {
    if (c.service !== service) return false;
    if (c.if === undefined) return true;
    try {
      return condition(render(c.if, { event }), '`if`');
    } catch (e) {
      onError(c.if, e as Error);
      return false;
    }
  });
}

/** The trigger and the event of the runs a callback starts, whoever starts them. */
export function callbackRun(ev: InboxMessage & { id?: number }): { trigger: Json; event: Json } {
  return {
    trigger: {
      type: 'callback',
      service: ev.service,
      kind: ev.kind,
      requestId: ev.requestId,
      ...(ev.id !== undefined ? { inboxId: ev.id } : {}),
    },
    event: ev.payload as Json,
  };
}

/**
 * Just-committed events held for the matcher, at most: one batch, as many as it reads from the store at once,
 * so that a flood still waits in the store, not in memory.
 */
const HELD = 100;

export interface MatcherOptions {
  store: Store;
  playbooks: ReadonlyMap<string, Playbook>;
  pool: RunPool;
  log: Logger;
  metrics: DaemonMetrics;
  /** The daemon's lease: the owner of the runs events start. */
  owner: string;
  /**
   * How long the matcher works before it commits what it matched and gives the event loop back (the listener
   * and `/healthz` answer between slices). @default 5
   */
  sliceMs?: number;
}

/**
 * Processes stored callback events in order: each is matched against every playbook's `on.callback`, and the
 * runs it starts are stored with the event marked processed, in one transaction; only then are they handed
 * to the pool. (The steps waiting for an event, and the runs confirming a request, get it at its commit.) The work comes in slices of a few
 * milliseconds (each expression is bounded by its evaluation budget), so the event loop is never held long.
 *
 * The events a commit has just stored are handed over (`offer`) and taken as they are, instead of being read
 * back from the inbox and parsed again; but only from the next id to process on: events stored while the
 * matcher was behind (more than it holds), or before a restart, are read from the store, in order. Whichever
 * way an event comes, `completeInbox` processes it once.
 */
export class Matcher {
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private lastId = 0;
  /** Events a commit stored and the matcher has not taken: consecutive ids, at most HELD. */
  private held: InboxEvent[] = [];
  /**
   * The store may have pending events that are not held: at start (stored before it), and once an offered
   * event was not held. Cleared when a read of the store finds nothing more.
   */
  private behind = true;
  /** Counts the offers that set `behind`: a read of the store clears it only when none came while it was out. */
  private missed = 0;
  /**
   * Messages were claimed (`claimOrphans`): the next read starts again from the first id. A flag, not `lastId = 0` at
   * once: a read or a commit in flight would set `lastId` past the claimed messages when it ends.
   */
  private rescanning = false;
  private readonly sliceMs: number;

  constructor(private readonly o: MatcherOptions) {
    this.sliceMs = o.sliceMs ?? 5;
  }

  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain()
      .catch((e: unknown) => {
        // The event stays pending in the store; it is tried again on the next kick, or in a second.
        this.o.log.error('processing callbacks failed; retrying', { error: (e as Error).message });
        setTimeout(() => this.kick(), 1000).unref();
      })
      .finally(() => {
        this.running = undefined;
        if (this.again && !this.stopped) {
          this.again = false;
          this.kick();
        }
      });
  }

  /**
   * Events a commit has just stored (on disk), in order of id. Each is held only while it continues the ids
   * held, up to HELD; what is not held is read from the store when the matcher gets there.
   */
  offer(events: readonly InboxEvent[]): void {
    for (const ev of events) {
      const last = this.held.at(-1);
      if (this.held.length < HELD && (last === undefined || ev.id === last.id + 1)) this.held.push(ev);
      else {
        this.behind = true;
        this.missed++;
      }
    }
  }

  stop(): void {
    this.stopped = true;
  }

  /**
   * Takes the stored callbacks of owners that are gone (at start, and at each lease renewal), and reads the store
   * again from the first id: callbacks this daemon stored meanwhile may have moved it past the ids just claimed.
   * Returns how many it took.
   */
  async claimOrphans(): Promise<number> {
    const taken = await this.o.store.claimInbox(this.o.owner, Date.now());
    if (taken) {
      this.rescanning = true;
      this.kick();
    }
    return taken;
  }

  async idle(): Promise<void> {
    await this.running;
  }

  private async drain(): Promise<void> {
    for (;;) {
      // Memory stays bounded: events wait in the store while the pool has plenty queued.
      if (this.stopped) return;
      if (this.o.pool.queued > 1000) {
        setTimeout(() => this.kick(), 100).unref();
        return;
      }
      const batch = await this.next(100);
      if (!batch.length) return;
      let slice: { ev: InboxEvent; eventId: number; runs: RunRecord[] }[] = [];
      let began = performance.now();
      for (const [i, ev] of batch.entries()) {
        slice.push({ ev, eventId: ev.id, runs: this.match(ev) });
        if (i === batch.length - 1 || performance.now() - began >= this.sliceMs) {
          await this.commit(slice);
          slice = [];
          // Lets the listener and the runs have the event loop between slices.
          await new Promise((r) => setImmediate(r));
          if (this.stopped) return;
          began = performance.now();
        }
      }
    }
  }

  /** The next events to process: the held ones when they start at the next id, else the store's. */
  private async next(limit: number): Promise<InboxEvent[]> {
    if (this.rescanning) {
      this.rescanning = false;
      this.lastId = 0;
      this.behind = true;
    }
    let done = 0;
    while (done < this.held.length && (this.held[done] as InboxEvent).id <= this.lastId) done++;
    if (done) this.held.splice(0, done);
    if (this.held[0]?.id === this.lastId + 1) return this.held.splice(0, limit);
    if (!this.behind && !this.held.length) return [];
    const missed = this.missed;
    const read = await this.o.store.pendingInbox(this.o.owner, limit, this.lastId);
    // Nothing after these on disk (a commit being synced is offered once it is): only offers from now on. Unless
    // a commit offered events it could not hold while the read was out: the read may not have seen them.
    if (read.length < limit && missed === this.missed) this.behind = false;
    return read;
  }

  /** Stores a slice's runs with its events marked processed, in one transaction; only then do the runs start. */
  private async commit(matched: { ev: InboxEvent; eventId: number; runs: RunRecord[] }[]): Promise<void> {
    const started = await this.o.store.completeInbox(matched);
    for (const { ev, runs } of matched) {
      this.lastId = ev.id;
      this.o.log.info('callback processed', {
        service: ev.service,
        kind: ev.kind,
        requestId: ev.requestId,
        runs: runs.map((r) => ({ runId: r.id, playbook: r.playbook })),
      });
    }
    for (const r of started) this.o.pool.submit(r);
  }

  /** The runs an event starts: one per playbook whose `on.callback` matches it. */
  private match(ev: InboxEvent): RunRecord[] {
    const runs: RunRecord[] = [];
    const { trigger, event } = callbackRun(ev);
    for (const pb of this.o.playbooks.values()) {
      if (!selects(pb, ev.service, event, (filter, e) => this.filterFailed(pb, filter, ev, e))) continue;
      runs.push({
        id: newRunId(),
        owner: this.o.owner,
        playbook: pb.name,
        version: versionOf(pb).version,
        status: 'queued',
        trigger,
        inputs: {},
        event,
        startedAt: isoTime(Date.now()),
      });
    }
    return runs;
  }

  /**
   * A filter that fails on an event (a member this event lacks, its evaluation budget spent) selects nothing,
   * and never silently: a warning names the event, the playbook, the expression and the error, and a metric
   * counts it.
   */
  private filterFailed(pb: Playbook, filter: string, ev: InboxEvent, e: Error): void {
    this.o.metrics.expressionErrors.inc({ playbook: pb.name, expression: 'filter' });
    this.o.log.warn('callback filter failed on an event; it starts no run of this playbook', {
      eventId: ev.id,
      service: ev.service,
      requestId: ev.requestId,
      playbook: pb.name,
      expression: filter,
      error: e.message,
    });
  }
}
