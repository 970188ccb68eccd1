/**
 * FLEETBOOK_RETENTION in the daemon: what ended longer ago than that is pruned from the store (store/retention.ts)
 * at start, once the daemon serves, and every hour after. On PostgreSQL every replica prunes; their batches pass
 * over one another's (SKIP LOCKED).
 */
import type { Logger } from '../log.js';
import { pruneStore } from '../store/retention.js';
import type { Retention } from '../store/store.js';

const EVERY_MS = 60 * 60 * 1000;

export class Pruner {
  private timer: NodeJS.Timeout | undefined;
  private first: NodeJS.Immediate | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly store: Retention,
    private readonly keepMs: number,
    private readonly log: Logger,
  ) {}

  start(): void {
    const tick = () => {
      if (!this.stopped) this.running ??= this.prune().finally(() => (this.running = undefined));
    };
    this.first = setImmediate(tick);
    this.timer = setInterval(tick, EVERY_MS);
    this.timer.unref();
  }

  /** Stops pruning; resolves once a prune under way has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearImmediate(this.first);
    clearInterval(this.timer);
    await this.running;
  }

  private async prune(): Promise<void> {
    try {
      const p = await pruneStore(this.store, this.keepMs);
      if (p.runs || p.callbacks)
        this.log.info('pruned what ended before the retention (FLEETBOOK_RETENTION)', { ...p });
    } catch (e) {
      this.log.warn('pruning the store failed; trying again in an hour', { error: (e as Error).message });
    }
  }
}
