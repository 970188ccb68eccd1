/**
 * Retention on SQLite (Retention in store.ts): the runs that ended before a time, with everything kept for them,
 * and the callbacks processed before it, removed a batch at a time in the caller's turn. A run not ended is
 * never removed. The file does not shrink: SQLite reuses the pages freed (`fleetbook store compact` gives them back).
 */
import type Database from 'better-sqlite3';
import { BY_RUN, versionsBefore } from './retention.js';
import type { Pruned } from './store.js';

/** The playbook versions saved before the time (versionsBefore) that no run names any more, by the runs' index. */
const UNUSED_VERSIONS = `DELETE FROM playbook_versions WHERE version IN (
    SELECT v.version FROM playbook_versions v
    WHERE v.saved_at < ? AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.version = v.version) LIMIT ?)`;

/**
 * A backfill (`fleetbook run --scheduled-at`) of a fire its schedule has not passed yet (a later fire than the last
 * the store recorded for it): the record that a daemon catching up must not make that night up again
 * (daemon/fire-time.ts runsForFires). Kept past the retention until the schedule has passed it, and, given
 * `@since`, only while its schedule was recorded loaded (recordLoaded) at or after that time: a schedule whose key
 * changed never passes it.
 */
const AHEAD_OF_ITS_SCHEDULE = `EXISTS (SELECT 1 FROM schedules s
    WHERE json_extract(runs.trigger_json, '$.reason') = 'backfill'
      AND s.name = json_extract(runs.trigger_json, '$.schedule')
      AND s.last_fire_at < json_extract(runs.trigger_json, '$.scheduledAt')
      AND (@since IS NULL OR s.loaded_at IS NULL OR s.loaded_at >= @since))`;

/** Records the schedules of `keys` loaded at `at`, and any schedule not recorded yet (Retention.recordLoaded). */
export function recordLoaded(
  sql: (text: string) => Database.Statement,
  keys: readonly string[],
  at: string,
): void {
  sql(
    `UPDATE schedules SET loaded_at = @at
     WHERE (loaded_at IS NULL OR (loaded_at < @at AND name IN (SELECT value FROM json_each(@keys))))`,
  ).run({ keys: JSON.stringify(keys), at });
}

export function pruneEnded(
  sql: (text: string) => Database.Statement,
  before: string,
  limit: number,
  loadedSince?: string,
): Pruned {
  const ids = (
    sql(
      `SELECT id FROM runs INDEXED BY runs_by_end
       WHERE ended_at IS NOT NULL AND ended_at < @before AND status IN ('succeeded', 'failed', 'cancelled')
         AND NOT ${AHEAD_OF_ITS_SCHEDULE}
       ORDER BY ended_at LIMIT @limit`,
    ).all({ since: loadedSince ?? null, before, limit }) as { id: string }[]
  ).map((r) => r.id);
  const list = JSON.stringify(ids);
  let entries = 0;
  if (ids.length) {
    for (const table of BY_RUN) {
      const n = sql(`DELETE FROM ${table} WHERE run_id IN (SELECT value FROM json_each(?))`).run(
        list,
      ).changes;
      if (table === 'ledger') entries = n;
    }
    sql('DELETE FROM runs WHERE id IN (SELECT value FROM json_each(?))').run(list);
  }
  const callbacks = sql(
    `DELETE FROM inbox WHERE id IN (
       SELECT id FROM inbox WHERE processed_at IS NOT NULL AND received_at < ? ORDER BY id LIMIT ?)`,
  ).run(before, limit).changes;
  const versions = sql(UNUSED_VERSIONS).run(versionsBefore(before), limit).changes;
  return { runs: ids.length, ledgerEntries: entries, callbacks, versions };
}
