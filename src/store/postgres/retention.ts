/**
 * Retention on PostgreSQL (Retention in store.ts): the runs that ended before a time, with everything kept for
 * them, and the callbacks processed before it (those no longer in inbox_pending), a batch in one transaction. A
 * run not ended is never removed; a run another transaction is removing is passed over (SKIP LOCKED).
 */
import { BY_RUN, versionsBefore } from '../retention.js';
import type { Pruned } from '../store.js';
import type { Turns } from './turn.js';

/**
 * A backfill (`fleetbook run --scheduled-at`) of a fire its schedule has not passed yet (a later fire than the last
 * the store recorded for it): the record that a daemon catching up must not make that night up again
 * (daemon/fire-time.ts runsForFires). Kept past the retention until the schedule has passed it, and, given $3,
 * only while its schedule was recorded loaded (recordLoaded) at or after that time: a schedule whose key changed
 * never passes it.
 */
const AHEAD_OF_ITS_SCHEDULE = `EXISTS (SELECT 1 FROM schedules s
    WHERE runs.trigger_json::json ->> 'reason' = 'backfill'
      AND s.name = runs.trigger_json::json ->> 'schedule'
      AND s.last_fire_at < (runs.trigger_json::json ->> 'scheduledAt') COLLATE "C"
      AND ($3::text IS NULL OR s.loaded_at IS NULL OR s.loaded_at >= $3::text))`;

/**
 * Records the schedules of `keys` loaded at `at`, and any schedule not recorded yet (Retention.recordLoaded). The
 * rows are locked in the order of their names, as every replica's pass locks them: two passes never deadlock.
 */
export async function recordLoaded(turns: Turns, keys: readonly string[], at: string): Promise<void> {
  await turns.transaction((query) =>
    query({
      text: `UPDATE schedules SET loaded_at = $2 WHERE name IN (
               SELECT name FROM schedules
               WHERE loaded_at IS NULL OR (loaded_at < $2 AND name = ANY($1::text[]))
               ORDER BY name FOR UPDATE)`,
      values: [[...keys], at],
    }),
  );
}

export async function pruneEnded(
  turns: Turns,
  before: string,
  limit: number,
  loadedSince?: string,
): Promise<Pruned> {
  return turns.transaction(async (query) => {
    const { rows } = await query({
      text: `SELECT id FROM runs
             WHERE ended_at IS NOT NULL AND ended_at < $1 AND status IN ('succeeded', 'failed', 'cancelled')
               AND NOT ${AHEAD_OF_ITS_SCHEDULE}
             ORDER BY ended_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
      values: [before, limit, loadedSince ?? null],
    });
    const ids = (rows as { id: string }[]).map((r) => r.id);
    const [removed, , callbacks, versions] = await Promise.all([
      ids.length
        ? Promise.all(
            BY_RUN.map((table) =>
              query({ text: `DELETE FROM ${table} WHERE run_id = ANY($1::text[])`, values: [ids] }),
            ),
          )
        : undefined,
      ids.length ? query({ text: 'DELETE FROM runs WHERE id = ANY($1::text[])', values: [ids] }) : undefined,
      query({
        text: `DELETE FROM inbox WHERE id IN (
                 SELECT i.id FROM inbox i
                 WHERE i.received_at < $1 AND NOT EXISTS (SELECT 1 FROM inbox_pending p WHERE p.id = i.id)
                 ORDER BY i.id LIMIT $2)`,
        values: [before, limit],
      }),
      // The versions saved before the time (versionsBefore) that no run names any more, by the runs' index.
      query({
        text: `DELETE FROM playbook_versions WHERE version IN (
                 SELECT v.version FROM playbook_versions v
                 WHERE v.saved_at < $1 AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.version = v.version)
                 LIMIT $2)`,
        values: [versionsBefore(before), limit],
      }),
    ]);
    return {
      runs: ids.length,
      ledgerEntries: removed?.[BY_RUN.indexOf('ledger')]?.rowCount ?? 0,
      callbacks: callbacks.rowCount ?? 0,
      versions: versions.rowCount ?? 0,
    };
  });
}
