/**
 * FLEETBOOK_RETENTION in the daemon: what ended longer ago than that is pruned from the store (store/retention.ts)
 * at start, once the daemon serves, and every hour after. On PostgreSQL every replica prunes; their batches pass
 * over one another's (SKIP LOCKED).
 */
import type { Logger } from '../log.js';
import { pruneStore } from '../store/retention.js';
import type { Retention } from '../store/store.js';
import { Periodic } from './periodic.js';

const EVERY_MS = 60 * 60 * 1000;

export class Pruner {
  private readonly periodic = new Periodic(EVERY_MS, () => this.prune());

  constructor(
    private readonly store: Retention,
    private readonly keepMs: number,
    private readonly log: Logger,
    /**
     * The keys of the schedules loaded now, recorded in the store at each pass: a backfill of a schedule that no
     * pass (of any replica) has recorded for a day is kept no longer (SCHEDULE_GONE_MS).
     */
    private readonly schedules: () => readonly string[],
  ) {}

  start(): void {
    this.periodic.start();
  }

  /** Stops pruning; resolves once a prune under way has ended. */
  stop(): Promise<void> {
    return this.periodic.stop();
  }

  private async prune(): Promise<void> {
    try {
      const p = await pruneStore(this.store, this.keepMs, { schedules: this.schedules() });
      if (p.runs || p.callbacks || p.versions)
        this.log.info('pruned what ended before the retention (FLEETBOOK_RETENTION)', { ...p });
    } catch (e) {
      this.log.warn('pruning the store failed; trying again in an hour', { error: (e as Error).message });
    }
  }
}
