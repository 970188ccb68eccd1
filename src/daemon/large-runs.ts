/**
 * The console pages through a run's devices by looking up those with several results in a step (retried, or
 * confirmed after they were accepted). The store groups them once per ended run: most of a second for a million
 * devices, off the event loop. So that the first look at a large run finds it grouped, the daemon has it done
 * as soon as the run ends: a run it executes, when it ends it; a run another process executes (a `fleetbook run`
 * on the same store, another replica), at the lease's renewal after it ended. The runs of the last day are looked
 * at when the daemon starts.
 */
import type { Logger } from '../log.js';
import { ENDED, type RunRecord, type Store } from '../store/store.js';

/** Runs of at least this many devices are grouped when they end; a smaller one is grouped quickly at its first look. */
export const GROUP_AT = 10_000;
const DAY_MS = 86_400_000;

export class LargeRuns {
  /** Runs seen unfinished, of any process: grouped once they have ended. */
  private readonly watched = new Set<string>();
  private started = false;

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
  ) {}

  /** A run ended: grouped now if it is large. */
  async ended(run: Pick<RunRecord, 'id' | 'summary'>): Promise<void> {
    this.watched.delete(run.id);
    if ((run.summary?.devices.total ?? 0) < GROUP_AT) return;
    try {
      await this.store.latestAmong(run.id, []);
    } catch (e) {
      this.log.warn('grouping the ledger of a large run failed; it is grouped at its first look', {
        runId: run.id,
        error: (e as Error).message,
      });
    }
  }

  /**
   * The runs unfinished now (at the first call, those of the last day), as listed; and those seen unfinished
   * before that the list no longer has, read again: the ended ones are grouped.
   */
  async sweep(now: number): Promise<void> {
    const listed = this.started
      ? await this.store.listRuns({ status: 'running', limit: 500 })
      : await this.store.listRuns({ from: new Date(now - DAY_MS).toISOString(), limit: 500 });
    this.started = true;
    const runs = new Map(listed.map((r) => [r.id, r]));
    for (const id of this.watched)
      if (!runs.has(id)) {
        const run = await this.store.getRun(id);
        if (run) runs.set(id, run);
        else this.watched.delete(id);
      }
    for (const run of runs.values())
      if (!ENDED.has(run.status)) this.watched.add(run.id);
      else await this.ended(run);
  }
}
