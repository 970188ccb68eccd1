/**
 * The per-device policy (`devices.retry`) over a list held in the store: the devices a rule sends again are
 * kept in lists of their own in the store, one per rule and attempt, not in memory. A streamed location report
 * of a million devices none of whose locations is cached sends every device again; held in memory, that list
 * would be the fleet.
 *
 * The lists give each device the rules the in-memory policy (device-retry.ts) gives it: the rules in order, each
 * up to its attempts, a device failing with a type a rule names taken by the first such rule still to come.
 */
import type { DeviceGroup, ItemRuns } from '../../store/store.js';
import type { DeviceRetryRule } from '../plan.js';
import { pushItem, StoredItems } from '../stored-items.js';
import { nextPass, type RetryPass } from './device-retry.js';
import type { ActionCall } from './index.js';

/**
 * What the key of each list holds, after the step's: `report#retry 1.2`. No step's key has a `#`. The runner
 * removes a run's lists when it ends (the step removes them when it ends well, and builds them again when it is
 * resumed): those of a step that failed are of no use then.
 */
export const RETRY_LISTS = '#retry ';

/** How far apart the chunk numbers of two passes' batches are: a pass has fewer batches (of 10,000 devices). */
const PASS_SEQ = 1_000_000;

export class StoredRetries {
  private readonly rules: readonly DeviceRetryRule[];
  /** How many devices each list holds. */
  private readonly sizes = new Map<string, number>();
  /** Of each batch being read (by its chunk number), the devices it sends to each list, until it is read. */
  private readonly pending = new Map<number, Map<string, ItemRuns>>();
  /** How many passes have begun: each pass's batches write chunks of their own numbers. */
  private passes = 0;

  constructor(private readonly x: ActionCall) {
    this.rules = x.plan.deviceRetry;
    // What an earlier execution of the step stored is made again, in the same order, from the same reports.
    this.clear();
  }

  /** The chunk number a batch of the pass about to begin writes under; each call begins a pass. */
  beginPass(): (batch: number) => number {
    const base = this.passes++ * PASS_SEQ;
    return (batch) => base + batch;
  }

  /**
   * Takes a device group of a pass's results: when a rule sends its devices again, they go to that rule's list
   * (to be written with their batch), and it returns true; else the result is final, and it returns false.
   */
  take(g: DeviceGroup, after: RetryPass, chunk: number): boolean {
    if (g.outcome !== 'failed' || g.errorType === undefined) return false;
    const to = nextPass(this.rules, g.errorType, after);
    if (!to) return false;
    let lists = this.pending.get(chunk);
    if (!lists) this.pending.set(chunk, (lists = new Map()));
    const key = this.key(to);
    let runs = lists.get(key);
    if (!runs) lists.set(key, (runs = []));
    // With the error the ledger holds for them until their retry's result comes.
    for (const id of g.ids) pushItem(runs, g.kind, id, g.errorType);
    return true;
  }

  /** Writes to the store what a batch, now read, sends again. */
  written(chunk: number): void {
    const lists = this.pending.get(chunk);
    if (!lists) return;
    this.pending.delete(chunk);
    const { ctx } = this.x;
    for (const [key, runs] of lists) {
      ctx.o.store.appendItems(ctx.id, key, chunk, runs);
      this.sizes.set(key, (this.sizes.get(key) ?? 0) + runs.reduce((n, [, ids]) => n + ids.length, 0));
    }
  }

  /** The devices `pass` sends again, or undefined when it has none. */
  list(pass: RetryPass): StoredItems | undefined {
    const key = this.key(pass);
    const size = this.sizes.get(key) ?? 0;
    return size ? new StoredItems(this.x.ctx.o.store, this.x.ctx.id, key, size) : undefined;
  }

  /** Every pass of the rules, in order: each rule's attempts from the second. */
  *passesOfRules(): Generator<RetryPass & { rule: number; of: DeviceRetryRule }> {
    for (const [rule, of] of this.rules.entries())
      for (let attempt = 2; attempt <= of.maxAttempts; attempt++) yield { rule, attempt, of };
  }

  /** Removes the lists from the store. */
  clear(): void {
    const { ctx } = this.x;
    for (const p of this.passesOfRules()) ctx.o.store.clearItems(ctx.id, this.key(p));
    this.sizes.clear();
  }

  private key(p: RetryPass): string {
    return `${this.x.key}${RETRY_LISTS}${p.rule + 1}.${p.attempt}`;
  }
}
