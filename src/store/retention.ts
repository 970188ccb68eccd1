/**
 * Pruning what the store keeps of the past (FLEETBOOK_RETENTION, `fleetbook store prune`): the runs that ended
 * before a time, with their checkpoints, items and ledger, and the callbacks processed before it, in batches,
 * each its own transaction, yielding to the event loop between them so that a daemon keeps serving.
 */
import { isoTime } from '../clock.js';
import type { Pruned, Retention } from './store.js';

/** The tables that keep rows by run, besides `runs`: the same on every backend. */
export const BY_RUN = [
  'run_steps',
  'step_items',
  'ledger',
  'ledger_latest',
  'ledger_latest_runs',
  'ledger_superseded',
] as const;

/** Runs (and callbacks) a transaction removes at most. */
const BATCH = 500;

/** Removes everything that ended or was processed before `now - keepMs`; the totals, and that time. */
export async function pruneStore(
  store: Retention,
  keepMs: number,
  now = Date.now(),
): Promise<Pruned & { before: string }> {
  const before = isoTime(now - keepMs);
  const total: Pruned = { runs: 0, ledgerEntries: 0, callbacks: 0, versions: 0 };
  for (;;) {
    const p = await store.pruneEnded(before, BATCH);
    total.runs += p.runs;
    total.ledgerEntries += p.ledgerEntries;
    total.callbacks += p.callbacks;
    total.versions += p.versions;
    if (p.runs < BATCH && p.callbacks < BATCH && p.versions < BATCH) return { ...total, before };
    await new Promise((resolve) => setImmediate(resolve));
  }
}
