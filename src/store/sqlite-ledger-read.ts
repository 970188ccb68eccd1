/** Reading a run's ledger a page at a time: each device's latest result, without holding the connection. */
import type Database from 'better-sqlite3';
import { latestRows, type EntryRow } from './rows.js';
import type { LedgerRow } from './store.js';

/**
 * Every device's result in a run (or one step of it), step after step, each step's devices in the order their
 * results came, in pages of at most ROWS_PER_PAGE rows, read a few dozen entries at a time: `fleetbook runs show
 * --devices` and `report.write` go through a run of millions of devices without holding it in memory, nor the
 * connection between two reads. Memory holds only the devices with more than one result in a step (those
 * retried), to keep each one's latest.
 */
export function* eachLatestResult(
  sql: (text: string) => Database.Statement,
  runId: string,
  step?: string,
): IterableIterator<LedgerRow[]> {
  const only = { runId, step: step ?? null };
  const again = new Map<string, number>();
  const repeated = sql(
    `SELECT l.step AS step, j.value AS id, max(l.seq) AS seq FROM ledger l, json_each(l.device_ids) j
     WHERE l.run_id = @runId AND (@step IS NULL OR l.step = @step)
     GROUP BY l.step, j.value HAVING count(*) > 1`,
  ).all(only) as { step: string; id: string; seq: number }[];
  for (const r of repeated) again.set(`${r.step}\0${r.id}`, r.seq);
  const next = sql(
    `SELECT * FROM ledger WHERE run_id = @runId AND (@step IS NULL OR step = @step) AND (step, seq) > (@after, @seq)
     ORDER BY step, seq LIMIT 64`,
  );
  let after = { step: '', seq: -1 };
  for (;;) {
    const entries = next.all({ ...only, after: after.step, seq: after.seq }) as EntryRow[];
    yield* latestRows(entries, again);
    const last = entries[entries.length - 1];
    if (!last) return;
    after = { step: last.step, seq: last.seq };
  }
}
