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
  'step_calls',
  'step_items',
  'ledger',
  'ledger_latest',
  'ledger_latest_runs',
  'ledger_superseded',
  'ledger_superseded_runs',
] as const;

/**
 * A playbook version saved again (each run created saves its version first) moves its time only when it is older
 * than this: most saves write nothing.
 */
export const VERSION_REFRESH_MS = 3_600_000;

/**
 * The time before which retention may remove a playbook version no run names: `before`, and never within twice
 * VERSION_REFRESH_MS of now, so that a version a run is about to be created with (saved, or its time moved, within
 * VERSION_REFRESH_MS) is never removed between its save and the run.
 */
export function versionsBefore(before: string, now = Date.now()): string {
  const guard = isoTime(now - 2 * VERSION_REFRESH_MS);
  return guard < before ? guard : before;
}

/**
 * How long a backfill ahead of its schedule is kept once no prune pass has found its schedule loaded (the cron or
 * time zone edited, the playbook removed): longer than the hour between a daemon's passes, so that a replica still
 * on older playbooks, or a playbook moved out of the directory and back, keeps it.
 */
export const SCHEDULE_GONE_MS = 24 * 3_600_000;

/** Runs (and callbacks) a transaction removes at most. */
const BATCH = 500;

/**
 * Removes everything that ended or was processed before `now - keepMs`; the totals, and that time. `schedules`, the
 * keys of the schedules loaded (a daemon's), are recorded loaded now (Retention.recordLoaded), and the backfills of
 * schedules that no pass has recorded loaded for SCHEDULE_GONE_MS go (Retention.pruneEnded); without it
 * (`fleetbook store prune` without `--playbooks`) they are kept.
 */
export async function pruneStore(
  store: Retention,
  keepMs: number,
  o: { now?: number; schedules?: readonly string[] } = {},
): Promise<Pruned & { before: string }> {
  const now = o.now ?? Date.now();
  const before = isoTime(now - keepMs);
  let loadedSince: string | undefined;
  if (o.schedules) {
    await store.recordLoaded(o.schedules, isoTime(now));
    loadedSince = isoTime(now - SCHEDULE_GONE_MS);
  }
  const total: Pruned = { runs: 0, ledgerEntries: 0, callbacks: 0, versions: 0 };
  for (;;) {
    const p = await store.pruneEnded(before, BATCH, loadedSince);
    total.runs += p.runs;
    total.ledgerEntries += p.ledgerEntries;
    total.callbacks += p.callbacks;
    total.versions += p.versions;
    if (p.runs < BATCH && p.callbacks < BATCH && p.versions < BATCH) return { ...total, before };
    await new Promise((resolve) => setImmediate(resolve));
  }
}
