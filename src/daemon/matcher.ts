/**
 * The matcher: takes stored callback events in order of arrival, matches each against the playbooks'
 * `on.callback` clauses, and stores the runs it starts with the event marked processed, in one transaction.
 */
import { randomUUID } from 'node:crypto';
import { selectsEvent } from '../expressions/template.js';
import type { Logger } from '../log.js';
import type { Playbook } from '../playbook/schema.js';
import type { EventHub } from '../runner/events.js';
import type { InboxEvent, RunRecord, Store } from '../store/store.js';
import type { Json } from './callbacks.js';
import type { RunPool } from './pool.js';

export function callbacksOf(pb: Playbook): { service: string; if?: string }[] {
  const c = pb.on.callback;
  return c === undefined ? [] : Array.isArray(c) ? c : [c];
}

/**
 * Processes stored callback events in order: each is matched against every playbook's `on.callback`, and the
 * runs it starts are stored with the event marked processed, in one transaction; only then are they handed
 * to the pool. Every event also reaches the steps waiting for one.
 */
export class Matcher {
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private lastId = 0;

  constructor(
    private readonly store: Store,
    private readonly playbooks: ReadonlyMap<string, Playbook>,
    private readonly pool: RunPool,
    private readonly events: EventHub,
    private readonly log: Logger,
    /** The daemon's lease: the owner of the runs events start. */
    private readonly owner: string,
  ) {}

  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain()
      .catch((e: unknown) => {
        // The event stays pending in the store; it is tried again on the next kick, or in a second.
        this.log.error('processing callbacks failed; retrying', { error: (e as Error).message });
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

  stop(): void {
    this.stopped = true;
  }

  async idle(): Promise<void> {
    await this.running;
  }

  private async drain(): Promise<void> {
    for (;;) {
      // Memory stays bounded: events wait in the store while the pool has plenty queued.
      if (this.stopped) return;
      if (this.pool.queued > 1000) {
        setTimeout(() => this.kick(), 100).unref();
        return;
      }
      const batch = this.store.pendingInbox(100, this.lastId);
      if (!batch.length) return;
      // The batch is processed in one transaction; only once it is committed do its runs start.
      const matched = batch.map((ev) => ({ ev, eventId: ev.id, runs: this.match(ev) }));
      const started = this.store.completeInbox(matched);
      for (const { ev, runs } of matched) {
        this.lastId = ev.id;
        this.log.info('callback processed', {
          service: ev.service,
          kind: ev.kind,
          requestId: ev.requestId,
          runs: runs.map((r) => ({ runId: r.id, playbook: r.playbook })),
        });
        this.events.publish(ev.service, ev.payload);
      }
      for (const r of started) this.pool.submit(r);
      // Lets the listener and the runs have the event loop between batches.
      await new Promise((r) => setImmediate(r));
    }
  }

  /** The runs an event starts: one per playbook whose `on.callback` matches it. */
  private match(ev: InboxEvent): RunRecord[] {
    const runs: RunRecord[] = [];
    const payload = ev.payload as Json;
    for (const pb of this.playbooks.values()) {
      const hit = callbacksOf(pb).some(
        (c) => c.service === ev.service && (c.if === undefined || selectsEvent(c.if, { event: payload })),
      );
      if (!hit) continue;
      runs.push({
        id: randomUUID(),
        owner: this.owner,
        playbook: pb.name,
        status: 'queued',
        trigger: {
          type: 'callback',
          service: ev.service,
          kind: ev.kind,
          requestId: ev.requestId,
          inboxId: ev.id,
        },
        inputs: {},
        event: payload,
        startedAt: new Date().toISOString(),
      });
    }
    return runs;
  }
}
