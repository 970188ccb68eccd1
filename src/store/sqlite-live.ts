/**
 * Which devices of a run that goes on have several results in a step (the console's pages of a running run,
 * Store.repeatedAmong). Each such run has an index of its own, a temporary table of the connection: every device
 * of each step, the seq of its latest entry, and how many entries name it. It is built at the run's first lookup
 * (a pass over the run's entries, some 1.3 s for a million devices, off the event loop in the grouping worker),
 * then brought up to date at each lookup from the entries written since, so that a page costs a lookup of its
 * devices, not a pass over the run. The ledger of a file only grows, and its seqs are committed in order (one
 * writer at a time), so the entries after the last seq indexed are all the index misses.
 */
import type Database from 'better-sqlite3';
import { RUN_TOP } from './sqlite-latest-read.js';

/** `step`, device, seq of the entry that counts: the devices with more than one result in a step. */
export type Repeated = [step: string, device: string, seq: number][];

/** Runs indexed at once, at most: the one used longest ago is dropped for a new one. */
export const LIVE_RUNS = 4;

export class LiveIndexes {
  /** By run, in the order they were last used: the table and the last seq it holds. */
  private readonly runs = new Map<string, { table: string; top: number }>();
  private next = 0;

  constructor(private readonly db: Database.Database) {}

  /** Of the devices `keys` (`step\0device`) of the run, those with more than one result in their step. */
  repeated(runId: string, keys: readonly string[]): Repeated {
    const live = this.upToDate(runId);
    const pairs = JSON.stringify(
      keys.map((k) => [k.slice(0, k.indexOf('\0')), k.slice(k.indexOf('\0') + 1)]),
    );
    return this.db
      .prepare(
        `SELECT step, device_id, seq FROM temp.${live.table}
         WHERE (step, device_id) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?)) AND n > 1`,
      )
      .raw()
      .all(pairs) as Repeated;
  }

  /** The run's index, holding every entry written so far: made when it has none, the oldest dropped for it. */
  private upToDate(runId: string): { table: string; top: number } {
    let live = this.runs.get(runId);
    if (live) this.runs.delete(runId);
    else {
      if (this.runs.size >= LIVE_RUNS) this.drop(this.runs.keys().next().value as string);
      live = { table: `live_${++this.next}`, top: 0 };
      this.db.exec(
        `CREATE TEMP TABLE ${live.table} (step TEXT, device_id TEXT, seq INTEGER, n INTEGER,
           PRIMARY KEY (step, device_id)) WITHOUT ROWID`,
      );
    }
    this.runs.set(runId, live);
    // Up to the last seq now: entries committed meanwhile come at the next lookup.
    const top = (this.db.prepare(RUN_TOP).pluck().get(runId) as number | null) ?? 0;
    if (top > live.top) {
      this.db
        .prepare(
          `INSERT INTO temp.${live.table} (step, device_id, seq, n)
           SELECT l.step, j.value, l.seq, 1 FROM ledger l, json_each(l.device_ids) j
           WHERE l.run_id = ? AND l.seq > ? AND l.seq <= ?
           ON CONFLICT (step, device_id) DO UPDATE SET seq = max(seq, excluded.seq), n = n + 1`,
        )
        .run(runId, live.top, top);
      live.top = top;
    }
    return live;
  }

  private drop(runId: string): void {
    const live = this.runs.get(runId);
    this.runs.delete(runId);
    if (live) this.db.exec(`DROP TABLE IF EXISTS temp.${live.table}`);
  }
}
