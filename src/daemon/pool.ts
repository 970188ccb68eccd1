/**
 * The runner pool: executes stored runs, at most `maxRuns` at once, with each playbook's `concurrency` key
 * (queue, skip or cancel) and the per-device locks shared by every run. A run is always in the store before
 * it reaches the pool, so a crash loses none: the next start hands the unfinished ones back here.
 */
import { isoTime } from '../clock.js';
import { render } from '../expressions/template.js';
import type { Playbook } from '../playbook/schema.js';
import { versionOf } from '../playbook/version.js';
import { startRun, type RunServices } from '../runner/factory.js';
import { Interrupted } from '../runner/runner.js';
import { DEVICE_OUTCOMES, emptyCounts, type RunRecord, type RunSummary } from '../store/store.js';
import type { DaemonMetrics } from './metrics.js';
import type { LargeRuns } from './large-runs.js';
import { schedulesOf } from './scheduler.js';

export interface PoolOptions {
  playbooks: ReadonlyMap<string, Playbook>;
  /**
   * A playbook of a version loaded before a reload: a run created with it (stored just before the swap, handed
   * over just after) executes its own version, not the one loaded now.
   */
  version?(version: string): Playbook | undefined;
  /** The daemon's client, store, locks, event hub, logger and engine settings: every run executes with them. */
  services: RunServices;
  metrics?: DaemonMetrics;
  maxRuns: number;
  /** Told of each run that ends, to have a large one's ledger grouped for the console. */
  largeRuns?: LargeRuns;
}

interface Entry {
  run: RunRecord;
  /** The playbook it executes: the loaded one, or the version it was created with (versions.ts). */
  pb: Playbook;
  group: string;
  /** Cancels the run. */
  controller: AbortController;
  /** Ends the `finally` of a cancelled run: a second cancel, or the pool stopping (RunOptions.stop). */
  stop: AbortController;
}

interface Group {
  limit: number;
  active: Set<Entry>;
  waiting: Entry[];
}

/**
 * The group of a scheduled run whose schedule does not allow overlap: the playbook's scheduled runs execute one
 * at a time, in the order they were fired. The scheduler fires nothing while one is unfinished, but `missed:
 * all` fires several at once (the missed runs of a downtime, or of a frozen process).
 */
function scheduleGroup(run: RunRecord, pb: Playbook): string | undefined {
  const t = run.trigger as { type?: string; schedule?: string } | undefined;
  if (t?.type !== 'schedule') return undefined;
  return schedulesOf(pb).find((e) => e.key === t.schedule)?.overlap
    ? undefined
    : `\u0000schedule\u0000${pb.name}`;
}

export class RunPool {
  private readonly groups = new Map<string, Group>();
  /** Runs free of their concurrency group, waiting for one of the `maxRuns` slots. */
  private readonly ready: Entry[] = [];
  private readonly executing = new Set<Entry>();
  private readonly settled = new Set<Promise<void>>();
  private stopping = false;
  private idleWaiters: (() => void)[] = [];
  /** The runs cancelled on another process's request (cancelRequested), while it stands. */
  private readonly asked = new Set<string>();
  /** The executing runs this pool cancelled, whose cancel it keeps in the store: not asked again by it. */
  private readonly cancelledHere = new Set<string>();

  constructor(private readonly o: PoolOptions) {}

  private loaded(run: RunRecord): Playbook | undefined {
    const now = this.o.playbooks.get(run.playbook);
    if (run.version === undefined || (now && versionOf(now).version === run.version)) return now;
    return this.o.version?.(run.version) ?? now;
  }

  /** Runs executing now. */
  get running(): number {
    return this.executing.size;
  }

  /** Runs accepted and not yet executing (waiting for a slot or their concurrency group). */
  get queued(): number {
    let n = this.ready.length;
    for (const g of this.groups.values()) n += g.waiting.length;
    return n;
  }

  /** The runs of the playbook started by `trigger` (e.g. 'schedule') accepted and not ended. */
  unfinished(playbook: string, trigger?: string): RunRecord[] {
    const started = (e: Entry) =>
      e.run.playbook === playbook &&
      (trigger === undefined || (e.run.trigger as { type?: string } | undefined)?.type === trigger);
    const runs: RunRecord[] = [];
    for (const g of this.groups.values())
      for (const e of [...g.active, ...g.waiting]) if (started(e)) runs.push(e.run);
    return runs;
  }

  /**
   * Takes a stored run (queued, or running before a restart), to execute `pb`: by default the playbook of its
   * name this daemon loads, or the one of its version it loaded before a reload.
   */
  submit(run: RunRecord, pb: Playbook | undefined = this.loaded(run)): void {
    // Stopping: the run stays queued in the store, and the next start resumes it.
    if (this.stopping) return;
    const log = this.o.services.logger.child({ runId: run.id, playbook: run.playbook });
    if (!pb) {
      this.end(run, 'failed', `playbook ${run.playbook} is not loaded by this daemon`);
      return;
    }
    const c = pb.concurrency;
    let key = '';
    if (c) {
      try {
        key = String(render(c.key ?? '', { event: run.event ?? {}, inputs: run.inputs ?? {} }));
      } catch (e) {
        // The run fails with the reason in its summary; the operator also sees it in the log and the metrics.
        this.o.metrics?.expressionErrors.inc({ playbook: pb.name, expression: 'concurrency.key' });
        log.warn('concurrency.key failed on the run; the run fails', {
          expression: c.key,
          error: (e as Error).message,
          ...(run.trigger ? { trigger: run.trigger } : {}),
        });
        this.end(run, 'failed', `concurrency.key: ${(e as Error).message}`);
        return;
      }
    }
    const group = c ? `${pb.name}\u0000${key}` : (scheduleGroup(run, pb) ?? `\u0000${run.id}`);
    let g = this.groups.get(group);
    if (!g) {
      g = { limit: c ? (c.limit ?? 1) : 1, active: new Set(), waiting: [] };
      this.groups.set(group, g);
    }
    const entry: Entry = { run, pb, group, controller: new AbortController(), stop: new AbortController() };
    // A cancel asked before a restart (of this process, or by another): the run resumes cancelled, sends
    // nothing more, and runs its `finally`.
    if (run.cancelRequested) {
      this.cancelledHere.add(run.id);
      entry.controller.abort(new Error(run.cancelRequested));
    }
    if (g.active.size < g.limit) {
      g.active.add(entry);
      this.ready.push(entry);
      this.pump();
      return;
    }
    const onConflict = c?.onConflict ?? 'queue';
    if (onConflict === 'skip') {
      log.info('run skipped: its concurrency group is busy', { key });
      this.end(
        run,
        'cancelled',
        `skipped: another run of ${pb.name} holds concurrency key ${JSON.stringify(key)}`,
      );
      return;
    }
    if (onConflict === 'cancel') {
      // The newest `limit` runs of a key go on: the oldest of the others, executing or still waiting, are
      // cancelled, so that of runs that come together only the last ones execute, not each in turn.
      const earlier = [...[...g.active].filter((e) => !e.controller.signal.aborted), ...g.waiting];
      for (const other of earlier.slice(0, earlier.length + 1 - g.limit)) {
        log.info('cancelling an earlier run of the same concurrency key', { cancelled: other.run.id, key });
        const reason = `cancelled by run ${run.id} (concurrency key ${JSON.stringify(key)})`;
        if (g.active.has(other)) this.abort(other, reason);
        else {
          g.waiting.splice(g.waiting.indexOf(other), 1);
          this.end(other.run, 'cancelled', reason);
        }
      }
    }
    log.info(
      c ? 'run queued behind its concurrency group' : 'run queued behind the previous run of its schedule',
      { key },
    );
    g.waiting.push(entry);
  }

  /**
   * Cancels a run this pool holds, with `reason` as its error: an executing or ready one is aborted (the runner
   * ends it cancelled, its step interrupted, after its `finally`), one waiting for its concurrency group ends
   * cancelled at once. Cancelled again, a run's `finally` is stopped too. False when the pool holds no such run
   * (it ended, or another process executes it).
   */
  cancel(runId: string, reason: string): boolean {
    const held = this.find(runId);
    if (!held) return false;
    const { entry, waiting } = held;
    if (waiting) {
      waiting.splice(waiting.indexOf(entry), 1);
      this.end(entry.run, 'cancelled', reason);
    } else if (entry.controller.signal.aborted) entry.stop.abort(new Error(reason));
    else this.abort(entry, reason);
    return true;
  }

  /**
   * Cancels an executing run, and keeps the cancel in the store while its `finally` runs: a crash then leaves
   * it cancelled (submit), not resumed as if never asked. Its own cancel, read back at a lease renewal, is not
   * a second one (cancelRequested).
   */
  private abort(entry: Entry, reason: string): void {
    entry.controller.abort(new Error(reason));
    this.cancelledHere.add(entry.run.id);
    this.o.services.store.requestCancel(entry.run.id, reason).catch((e: unknown) =>
      this.o.services.logger.warn(
        'the cancel could not be kept in the store: a crash now would resume the run',
        {
          runId: entry.run.id,
          error: (e as Error).message,
        },
      ),
    );
  }

  /** Whether this pool holds the run: executing it, or holding it ready or waiting for its concurrency group. */
  holds(runId: string): boolean {
    return this.find(runId) !== undefined;
  }

  /** The run's entry, if this pool holds it; with the queue of its concurrency group when it waits there. */
  private find(runId: string): { entry: Entry; waiting?: Entry[] } | undefined {
    for (const entry of [...this.executing, ...this.ready]) if (entry.run.id === runId) return { entry };
    for (const g of this.groups.values()) {
      const entry = g.waiting.find((e) => e.run.id === runId);
      if (entry) return { entry, waiting: g.waiting };
    }
    return undefined;
  }

  /**
   * Cancels, once each, the runs of `requests` (Ownership.cancelRequests) this pool holds: a request read again at
   * each lease renewal is one cancel, which lets the run's `finally` run.
   */
  cancelRequested(requests: readonly { runId: string; reason: string }[]): void {
    const current = new Set(requests.map((r) => r.runId));
    for (const id of this.asked) if (!current.has(id)) this.asked.delete(id);
    for (const { runId, reason } of requests)
      if (!this.asked.has(runId) && !this.cancelledHere.has(runId) && this.cancel(runId, reason))
        this.asked.add(runId);
  }

  private pump(): void {
    while (!this.stopping && this.executing.size < this.o.maxRuns && this.ready.length) {
      const entry = this.ready.shift() as Entry;
      this.executing.add(entry);
      const p: Promise<void> = this.execute(entry).finally(() => {
        this.settled.delete(p);
        this.executing.delete(entry);
        this.cancelledHere.delete(entry.run.id);
        const g = this.groups.get(entry.group) as Group;
        g.active.delete(entry);
        const next = g.waiting.shift();
        if (next) {
          g.active.add(next);
          this.ready.push(next);
        } else if (!g.active.size) this.groups.delete(entry.group);
        this.pump();
        if (!this.executing.size && !this.ready.length) for (const w of this.idleWaiters.splice(0)) w();
      });
      this.settled.add(p);
    }
  }

  private async execute({ run, pb, controller, stop }: Entry): Promise<void> {
    const began = Date.now();
    let summary: RunSummary;
    try {
      summary = await startRun(this.o.services, pb, {
        stored: run,
        signal: controller.signal,
        stop: stop.signal,
      });
    } catch (e) {
      if (e instanceof Interrupted) return;
      // The runner ends every run it can; this is a defect, kept visible rather than lost.
      this.o.services.logger.error('run crashed', {
        runId: run.id,
        playbook: run.playbook,
        error: String(e),
      });
      this.end(run, 'failed', `internal error: ${(e as Error).message}`);
      return;
    }
    this.o.metrics?.runs.inc({ playbook: run.playbook, status: summary.status });
    void this.o.largeRuns?.ended({ id: run.id, summary });
    for (const outcome of DEVICE_OUTCOMES) {
      const n = summary.devices[outcome];
      if (n) this.o.metrics?.deviceOutcomes.inc({ playbook: run.playbook, outcome }, n);
    }
    this.o.metrics?.runDuration.observe(
      { playbook: run.playbook, status: summary.status },
      (Date.now() - began) / 1000,
    );
  }

  /** Ends a run that never executed (skipped, or impossible to start). */
  private end(run: RunRecord, status: 'failed' | 'cancelled', error: string): void {
    const endedAt = isoTime(Date.now());
    this.o.services.store.updateRun(run.id, {
      status,
      endedAt,
      error,
      summary: {
        runId: run.id,
        playbook: run.playbook,
        status,
        startedAt: run.startedAt,
        endedAt,
        error,
        steps: [],
        devices: emptyCounts(),
      },
    });
    this.o.metrics?.runs.inc({ playbook: run.playbook, status });
  }

  /** Resolves when no run is executing or waiting for a slot. */
  idle(): Promise<void> {
    if (!this.executing.size && !this.ready.length) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Stops taking runs, lets the executing ones finish for up to `graceMs`, then interrupts the rest: they
   * stay unfinished in the store, with their checkpoints, and resume at the next start. A cancelled run still in
   * its `finally` is stopped there, and ends cancelled.
   */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    const all = Promise.allSettled([...this.settled]);
    let timer: NodeJS.Timeout | undefined;
    const late = await Promise.race([
      all.then(() => false),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), graceMs))),
    ]);
    clearTimeout(timer);
    if (late) {
      for (const e of this.executing) {
        e.controller.abort(new Interrupted());
        e.stop.abort(new Error('stopped: fleetbook is stopping'));
      }
      await Promise.allSettled([...this.settled]);
    }
  }
}
