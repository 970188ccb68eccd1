/**
 * One read of a run's results, each device's latest (eachDeviceResult), in bounded memory whatever the run's size.
 * A device has several entries in a step when it was retried, or accepted and then confirmed (every device of a
 * device-state step): the latest counts. Which entries a later one replaces is worked out in SQL, into temporary
 * tables of the read's own (on disk: `temp_store = FILE` on the grouping worker's connection), never as a map of
 * the run's devices in memory: a suspend of a million devices has a million devices with two entries.
 *
 * The read is of the entries there are when it begins (up to the run's last seq then): the ledger only grows, so
 * what it reads stays as it was grouped, whatever is written meanwhile.
 */
import type Database from 'better-sqlite3';

/** The last seq of run `?`'s entries (null when it has none). */
export const RUN_TOP = 'SELECT max(seq) FROM ledger WHERE run_id = ?';

/** An entry a page of a read takes, and when a later entry of its step replaces some of its devices, those. */
export interface ReadPlan {
  seq: number;
  replaced?: string[];
}

/**
 * The devices with more than one entry in a step of run `@runId`: the step, the device, the seq of the entry that
 * counts, and the seqs of all of them (a JSON list). Of one step (`@step`) and of the entries up to `@top`, each
 * when it is not null.
 */
export const REPEATED = `SELECT l.step, j.value, max(l.seq), json_group_array(l.seq)
  FROM ledger l, json_each(l.device_ids) j
  WHERE l.run_id = @runId AND (@step IS NULL OR l.step = @step) AND (@top IS NULL OR l.seq <= @top)
  GROUP BY l.step, j.value HAVING count(*) > 1`;

/**
 * The entries some devices of which a later entry replaces, counted from each device's entries in `grouped` (rows
 * of REPEATED): the entry's `seq`, `n` devices replaced, of its `size`.
 */
export const replacedEntries = (
  grouped: string,
) => `SELECT c.seq, c.n, json_array_length(l.device_ids) AS size
  FROM (
    SELECT e.value AS seq, count(*) AS n FROM ${grouped} g, json_each(g.seqs) e WHERE e.value <> g.seq
    GROUP BY e.value
  ) c JOIN ledger l ON l.seq = c.seq`;

/** Entries a page of a read holds, at most: each up to a batch of devices. */
const ENTRIES = 32;

let reads = 0;

export class LatestRead {
  private readonly devices: string;
  private readonly entries: string;
  private readonly top: number;
  private readonly pageOf: Database.Statement;
  private readonly replacedOf: Database.Statement;

  constructor(
    private readonly db: Database.Database,
    private readonly runId: string,
    private readonly step: string | undefined,
  ) {
    const name = `latest_read_${++reads}`;
    this.devices = `temp.${name}_devices`;
    this.entries = `temp.${name}_entries`;
    this.top = (db.prepare(RUN_TOP).pluck().get(runId) as number) ?? -1;
    // The devices with more than one entry in a step: the seq of the one that counts, and of all of them.
    db.exec(
      `CREATE TABLE ${this.devices} (step TEXT, device_id TEXT, seq INTEGER, seqs TEXT, PRIMARY KEY (step, device_id)) WITHOUT ROWID;
       CREATE TABLE ${this.entries} (seq INTEGER PRIMARY KEY, every INTEGER NOT NULL)`,
    );
    db.prepare(`INSERT INTO ${this.devices} ${REPEATED}`).run({ runId, step: step ?? null, top: this.top });
    // The entries a later entry replaces, and whether it replaces every device: a page passes over those, and
    // looks up only the devices of the others.
    db.prepare(
      `INSERT INTO ${this.entries} SELECT seq, n >= size FROM (${replacedEntries(this.devices)})`,
    ).run();
    this.pageOf = db.prepare(
      `SELECT l.seq, l.step, e.every AS replaces FROM ledger l LEFT JOIN ${this.entries} e ON e.seq = l.seq
       WHERE l.run_id = @runId AND (@step IS NULL OR l.step = @step) AND l.seq <= @top
         AND (l.step, l.seq) > (@afterStep, @afterSeq) AND e.every IS NOT 1
       ORDER BY l.step, l.seq LIMIT ${ENTRIES}`,
    );
    this.replacedOf = db
      .prepare(
        `SELECT j.value FROM ledger l CROSS JOIN json_each(l.device_ids) j
           CROSS JOIN ${this.devices} d ON d.step = l.step AND d.device_id = j.value
         WHERE l.seq = @seq AND d.seq <> @seq`,
      )
      .pluck();
  }

  /**
   * The next entries after `after` (from the first without), at most a page, each with the devices a later
   * entry replaces: their seqs, which the store's own connection reads (the entries stay as they are).
   */
  page(after?: { step: string; seq: number }): { plans: ReadPlan[]; last?: { step: string; seq: number } } {
    const rows = this.pageOf.all({
      runId: this.runId,
      step: this.step ?? null,
      top: this.top,
      afterStep: after?.step ?? '',
      afterSeq: after?.seq ?? -1,
    }) as { seq: number; step: string; replaces: number | null }[];
    const plans = rows.map(({ seq, replaces }) =>
      replaces === 0 ? { seq, replaced: this.replacedOf.all({ seq }) as string[] } : { seq },
    );
    const last = rows[rows.length - 1];
    return last ? { plans, last: { step: last.step, seq: last.seq } } : { plans };
  }

  close(): void {
    this.db.exec(`DROP TABLE IF EXISTS ${this.devices}; DROP TABLE IF EXISTS ${this.entries}`);
  }
}
