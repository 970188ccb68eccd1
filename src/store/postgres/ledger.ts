/** The per-device ledger on PostgreSQL (LedgerStore of store.ts): entries of a group of devices a row. */
import {
  LATE_RUN_COLUMNS,
  lateDevices,
  lateSeqs,
  lateWrites,
  type LateCounts,
  type LateReads,
  type LateResult,
  type LateRun,
} from '../late.js';
import { bracketing, deviceIdsOf, idRange, type EntryRange } from '../id-range.js';
import { BY_RUN } from '../retention.js';
import {
  byStateRead,
  byStepThenDevice,
  entryGroup,
  historyRows,
  latestMatching,
  latestRows,
  type EntryRow,
  type ReadEntry,
  type HistoryEntryRow,
} from '../rows.js';
import type {
  DeviceGroup,
  DeviceHistoryRow,
  EntryFilter,
  LedgerQuery,
  LedgerRow,
  LedgerStore,
} from '../store.js';
import { type Statement } from './pool.js';
import { storedJson, storedText, storedTexts } from '../text.js';
import type { EntryRecord, Turns } from './turn.js';

/**
 * The grouping of a run (latestAmong), its mark first: dropped when a result comes after it, and made again at
 * the next read.
 */
const GROUPING = [
  'ledger_superseded_runs',
  ...BY_RUN.filter((t) => t.startsWith('ledger_') && t !== 'ledger_superseded_runs'),
];

/**
 * The devices with more than one entry in a step of run $1 (and `where`): the step, the device, the seq of the
 * entry that counts, and the seqs of all of them.
 */
const repeated = (
  where = '',
) => `SELECT l.step, d.id AS device_id, max(l.seq) AS seq, array_agg(l.seq) AS seqs
  FROM ledger l CROSS JOIN LATERAL json_array_elements_text(l.device_ids) AS d(id)
  WHERE l.run_id = $1 ${where} GROUP BY l.step, d.id HAVING count(*) > 1`;

/**
 * The entries some devices of which a later entry replaces, counted from each device's entries in `grouped` (rows
 * of `repeated`): the entry's `seq`, `n` devices replaced, of its `size`.
 */
const replacedEntries = (grouped: string) => `SELECT c.seq, c.n, json_array_length(l.device_ids) AS size
  FROM (
    SELECT e.seq, count(*) AS n FROM ${grouped} g CROSS JOIN LATERAL unnest(g.seqs) AS e(seq)
    WHERE e.seq <> g.seq GROUP BY e.seq
  ) c JOIN ledger l ON l.seq = c.seq`;

/** How many entries a page of `eachDeviceResult` reads: a few dozen, of up to a batch of devices each. */
const PAGE = 64;

/** One ledger entry per group with devices, in order: of a device given twice, the later entry counts. */
export function entryRecords(runId: string, step: string, groups: DeviceGroup[], at: string): EntryRecord[] {
  const out: EntryRecord[] = [];
  for (const g of groups) {
    if (!g.ids.length) continue;
    // A device id as the service answered it (a location report's msid): one with a NUL failed the turn's commit.
    const ids = storedTexts(g.ids);
    const range = idRange(ids);
    out.push({
      run_id: storedText(runId),
      step: storedText(step),
      kind: storedText(g.kind),
      outcome: g.outcome,
      error_type: storedText(g.errorType ?? null),
      error_class: storedText(g.errorClass ?? null),
      attempts: g.attempts,
      at: storedText(at),
      device_ids: ids,
      request_id: storedText(g.requestId ?? null),
      data_json: g.data ? g.data.map((d) => d ?? null) : null,
      min_id: range.min,
      max_id: range.max,
      by_state_read: byStateRead(g) || null,
    });
  }
  return out;
}

/**
 * A turn's entries in one statement, in their order: `seq` is given as the rows come (WITH ORDINALITY, ORDER
 * BY), so that a later entry for a device has the higher one.
 */
export function insertEntries(entries: readonly EntryRecord[]): Statement {
  return {
    text: `INSERT INTO ledger (run_id, step, kind, outcome, error_type, error_class, attempts, at, device_ids,
             request_id, data_json, min_id, max_id, by_state_read)
           SELECT run_id, step, kind, outcome, error_type, error_class, attempts, at, device_ids, request_id, data_json,
             min_id, max_id, by_state_read
           FROM ROWS FROM (json_to_recordset($1::json) AS (run_id text, step text, kind text, outcome text,
             error_type text, error_class text, attempts integer, at text, device_ids json, request_id text,
             data_json json, min_id text, max_id text, by_state_read boolean)) WITH ORDINALITY AS e(run_id, step,
             kind, outcome, error_type, error_class, attempts, at, device_ids, request_id, data_json, min_id, max_id,
             by_state_read, n)
           ORDER BY n`,
    // Each device's data as the service gave it (a location's time): a NUL in it failed the turn's commit.
    values: [storedJson(JSON.stringify(entries))],
  };
}

export class PostgresLedger implements LedgerStore {
  constructor(private readonly turns: Turns) {}

  recordDevices(runId: string, step: string, groups: DeviceGroup[], at: string): void {
    this.turns.write().entries.push(...entryRecords(runId, step, groups, at));
  }

  async queryLedger(q: LedgerQuery): Promise<LedgerRow[]> {
    // A dry run's entries are devices it planned, not outcomes: never read, and a dry run is never a last run.
    const where: string[] = ['NOT r.dry_run'];
    const values: unknown[] = [];
    const cond = (sql: (...at: string[]) => string, ...args: unknown[]) => {
      const at = args.map((a) => `$${values.push(a)}`);
      where.push(sql(...at));
    };
    if (q.playbook !== undefined) {
      if (q.lastRuns !== undefined)
        cond(
          (playbook, limit) =>
            `l.run_id IN (SELECT id FROM runs WHERE playbook = ${playbook} AND status IN ('succeeded', 'failed')
               AND NOT dry_run ORDER BY started_at DESC, id DESC LIMIT ${limit})`,
          q.playbook,
          q.lastRuns,
        );
      else cond((playbook) => `r.playbook = ${playbook}`, q.playbook);
    }
    if (q.step !== undefined) cond((step) => `l.step = ${step}`, q.step);
    if (q.outcome !== undefined) cond((outcome) => `l.outcome = ${outcome}`, q.outcome);
    if (q.errorTypes?.length)
      cond((types) => `l.error_type = ANY(${types}::text[])`, [...new Set(q.errorTypes)]);
    if (q.since !== undefined) cond((since) => `r.started_at >= ${since}`, q.since);
    // The steps with an entry that matches; then each device's latest entry must match too.
    const steps = await this.turns.read<{ runId: string; step: string }>({
      text: `SELECT DISTINCT l.run_id AS "runId", l.step FROM ledger l JOIN runs r ON r.id = l.run_id
             WHERE ${where.join(' AND ')} ORDER BY 1, 2`,
      values,
    });
    return latestMatching(steps, (run, step) => this.eachDeviceResult(run, step), q);
  }

  async deviceResults(runId: string, step?: string): Promise<LedgerRow[]> {
    const entries = await this.turns.read<EntryRow>({
      text: 'SELECT * FROM ledger WHERE run_id = $1 AND ($2::text IS NULL OR step = $2) ORDER BY seq',
      values: [runId, step ?? null],
    });
    return byStepThenDevice(entries);
  }

  async resultsUnder(
    runId: string,
    step: string,
    requestIds: readonly string[],
    orNone: boolean,
  ): Promise<DeviceGroup[]> {
    const entries = await this.turns.read<EntryRow>({
      text: `SELECT * FROM ledger WHERE run_id = $1 AND step = $2
               AND (request_id = ANY($3::text[]) OR ($4::boolean AND request_id IS NULL)) ORDER BY seq`,
      values: [runId, step, storedTexts(requestIds), orNone],
    });
    return entries.map(entryGroup);
  }

  /**
   * Every device's result in a run (or one step of it), step after step, each step's devices in the order their
   * results came, a page of entries at a time (by key), over one snapshot of the store. A device with several
   * entries in a step (retried, or accepted then confirmed: every device of a device-state step) counts by its
   * latest: the server works out, in temporary tables, which entries a later one replaces, whole or in part, so
   * that a run of millions of devices is never in memory. The snapshot holds a connection until the read ends.
   */
  async *eachDeviceResult(runId: string, step?: string): AsyncGenerator<LedgerRow[]> {
    const only = [runId, step ?? null];
    const snapshot = await this.turns.snapshot();
    const query = async <T>(text: string, values: unknown[] = []) =>
      (await snapshot.query({ text, values })).rows as T[];
    try {
      await query(
        `CREATE TEMP TABLE read_devices ON COMMIT DROP AS ${repeated('AND ($2::text IS NULL OR l.step = $2)')}`,
        only,
      );
      await query('CREATE INDEX ON read_devices (step, device_id)');
      // The entries some devices of which a later entry replaces, and whether it replaces every one.
      await query(
        `CREATE TEMP TABLE read_entries ON COMMIT DROP AS
         SELECT seq, n >= size AS every FROM (${replacedEntries('read_devices')}) r`,
      );
      await query('CREATE INDEX ON read_entries (seq)');
      let after = { step: '', seq: -1 };
      for (;;) {
        const entries = await query<ReadEntry & { every: boolean | null }>(
          `SELECT l.*, e.every FROM ledger l LEFT JOIN read_entries e ON e.seq = l.seq
           WHERE l.run_id = $1 AND ($2::text IS NULL OR l.step = $2) AND (l.step, l.seq) > ($3, $4)
             AND e.every IS NOT TRUE
           ORDER BY l.step, l.seq LIMIT ${PAGE}`,
          [...only, after.step, after.seq],
        );
        for (const e of entries) {
          if (e.every === false)
            e.replaced = (
              await query<{ id: string }>(
                `SELECT d.id FROM ledger l CROSS JOIN LATERAL json_array_elements_text(l.device_ids) AS d(id)
                 JOIN read_devices r ON r.step = l.step AND r.device_id = d.id WHERE l.seq = $1 AND r.seq <> $1`,
                [e.seq],
              )
            ).map((r) => r.id);
          delete (e as { every?: unknown }).every;
        }
        const last = entries[entries.length - 1];
        if (!last) return;
        yield* latestRows(entries);
        after = { step: last.step, seq: last.seq };
      }
    } finally {
      await snapshot.end();
    }
  }

  /**
   * Of the devices `keys` (`step\0device`) of the run, those with several results, to the seq that counts: read
   * from the entries whose range holds one of them (id-range.ts), not every entry of the run.
   */
  async repeatedAmong(runId: string, keys: readonly string[]): Promise<Map<string, number>> {
    const ranges = await this.turns.read<EntryRange>({
      text: 'SELECT seq, step, min_id, max_id FROM ledger WHERE run_id = $1',
      values: [runId],
    });
    const seqs = bracketing(ranges, keys);
    const ids = deviceIdsOf(keys);
    const rows = await this.turns.read<{ step: string; device_id: string; seq: number }>({
      text: `SELECT l.step, d.id AS device_id, max(l.seq) AS seq
             FROM ledger l CROSS JOIN LATERAL json_array_elements_text(l.device_ids) AS d(id)
             WHERE l.seq = ANY($1::bigint[]) AND d.id = ANY($2::text[])
             GROUP BY l.step, d.id HAVING count(*) > 1`,
      values: [seqs, ids],
    });
    const asked = new Set(keys);
    const again = new Map<string, number>();
    for (const r of rows) {
      const key = `${r.step}\0${r.device_id}`;
      if (asked.has(key)) again.set(key, r.seq);
    }
    return again;
  }

  /**
   * An ended run's superseded entries are kept once (ledger_superseded, marked in ledger_superseded_runs), by
   * whichever replica reads the run first; another reading meanwhile waits for its mark. Which result of a device
   * counts is read as for a running run (repeatedAmong).
   */
  async latestAmong(runId: string, keys: readonly string[]): Promise<Map<string, number>> {
    await this.turns.transaction(async (query) => {
      const { rowCount } = await query({
        text: 'INSERT INTO ledger_superseded_runs (run_id) VALUES ($1) ON CONFLICT DO NOTHING',
        values: [runId],
      });
      // The entries every device of which is in a later one (counted from each device's entries): a page passes
      // over those without looking them up.
      if (rowCount)
        await query({
          text: `WITH g AS (${repeated()})
                 INSERT INTO ledger_superseded (run_id, seq)
                 SELECT $1, seq FROM (${replacedEntries('g')}) r WHERE n >= size ON CONFLICT DO NOTHING`,
          values: [runId],
        });
      return undefined;
    });
    return this.repeatedAmong(runId, keys);
  }

  ledgerEntries(
    runId: string,
    q: EntryFilter,
    after: { step: string; seq: number } | undefined,
    limit: number,
  ): Promise<EntryRow[]> {
    return this.turns.read<EntryRow>({
      // Without each device's data (a location): the table does not show it, and it is most of an entry's bytes.
      text: `SELECT seq, run_id, step, kind, outcome, error_type, error_class, attempts, at, device_ids, request_id,
               NULL AS data_json
             FROM ledger
             WHERE run_id = $1 AND (step, seq) > ($2, $3)
               AND ($4::text IS NULL OR step = $4) AND ($5::text IS NULL OR outcome = $5)
               AND ($6::text IS NULL OR error_type = $6)
               AND ($7::text IS NULL OR strpos(device_ids::text, $7) > 0)
               AND NOT EXISTS (SELECT 1 FROM ledger_superseded s WHERE s.run_id = $1 AND s.seq = ledger.seq)
             ORDER BY step, seq LIMIT $8`,
      values: [
        runId,
        after?.step ?? '',
        after?.seq ?? -1,
        q.step ?? null,
        q.outcome ?? null,
        q.errorType ?? null,
        q.device ?? null,
        limit,
      ],
    });
  }

  async ledgerData(
    runId: string,
    at: readonly { seq: number; index: number }[],
  ): Promise<(Record<string, unknown> | null)[]> {
    const data: (Record<string, unknown> | null)[] = at.map(() => null);
    if (!at.length) return data;
    const seqs = at.map((a) => a.seq);
    const found = await this.turns.read<{ i: number; data_json: string }>({
      // Each entry's data is parsed once (json_array_elements), not once for each of its devices asked for.
      text: `WITH e AS (
               SELECT l.seq, d.n, d.v FROM ledger l
                 CROSS JOIN LATERAL json_array_elements(l.data_json) WITH ORDINALITY AS d(v, n)
               WHERE l.run_id = $1 AND l.seq = ANY($2::bigint[]) AND l.data_json IS NOT NULL
             )
             SELECT p.i::int AS i, e.v::text AS data_json
             FROM unnest($2::bigint[], $3::int[]) WITH ORDINALITY AS p(seq, n, i)
               JOIN e ON e.seq = p.seq AND e.n = p.n + 1`,
      values: [runId, seqs, at.map((a) => a.index)],
    });
    for (const f of found) data[f.i - 1] = JSON.parse(f.data_json) as Record<string, unknown> | null;
    return data;
  }

  async hasErrorType(runId: string, errorType: string): Promise<boolean> {
    // By ledger_by_error, the index of the types.
    const rows = await this.turns.read({
      text: 'SELECT 1 AS found FROM ledger WHERE error_type = $1 AND run_id = $2 LIMIT 1',
      values: [storedText(errorType), storedText(runId)],
    });
    return rows.length > 0;
  }

  lateEntries(since: string, afterSeq: number, limit: number): Promise<EntryRow[]> {
    return this.turns.read<EntryRow>({
      // By the partial index of the entries a late message may settle (ledger_late).
      text: `SELECT l.* FROM ledger l JOIN runs r ON r.id = l.run_id
             WHERE l.request_id IS NOT NULL AND (l.outcome = 'unconfirmed' OR l.by_state_read)
               AND l.seq > $1 AND l.at >= $2 AND (r.ended_at IS NOT NULL OR l.by_state_read)
             ORDER BY l.seq LIMIT $3`,
      values: [afterSeq, since, limit],
    });
  }

  recordLate(runId: string, results: readonly LateResult[], at: string): Promise<LateCounts> {
    const none = { succeeded: 0, failed: 0 };
    if (!results.length) return Promise.resolve(none);
    return this.turns.transaction(async (query) => {
      // The run's row first, locked: replicas recording late results of one run take turns, and the second one
      // sees the first one's entries; the run's end (its summary) waits for this, or this for it. Its grouping's
      // mark next, which waits for a grouping under way to end.
      const run = (
        await query({
          text: `SELECT ${LATE_RUN_COLUMNS} FROM runs WHERE id = $1 FOR UPDATE`,
          values: [runId],
        })
      ).rows[0] as LateRun | undefined;
      if (!run) return none;
      const entries = (
        await query({
          text: `SELECT * FROM ledger WHERE run_id = $1 AND (outcome = 'unconfirmed' OR by_state_read)
                   AND seq = ANY($2::bigint[])`,
          values: [runId, lateSeqs(results)],
        })
      ).rows as EntryRow[];
      if (!entries.length) return none;
      const latest = (
        await query({
          text: `SELECT l.step, d.id, max(l.seq) AS seq
                 FROM ledger l CROSS JOIN LATERAL json_array_elements_text(l.device_ids) AS d(id)
                 WHERE l.run_id = $1 AND l.seq >= $2 AND d.id = ANY($3::text[]) GROUP BY l.step, d.id`,
          values: [runId, Math.min(...entries.map((e) => e.seq)), lateDevices(results)],
        })
      ).rows as LateReads['latest'];
      const underWay = run.ended_at
        ? []
        : (
            await query({ text: 'SELECT step_key FROM step_calls WHERE run_id = $1', values: [runId] })
          ).rows.map((r) => (r as { step_key: string }).step_key);
      const w = lateWrites({ run, underWay, entries, latest }, results);
      if (!w.any) return none;
      for (const table of GROUPING)
        await query({ text: `DELETE FROM ${table} WHERE run_id = $1`, values: [runId] });
      await query(
        insertEntries([...w.steps].flatMap(([step, groups]) => entryRecords(runId, step, groups, at))),
      );
      if (w.summary)
        await query({
          text: 'UPDATE runs SET summary_json = $2, late_moves_json = NULL WHERE id = $1',
          values: [runId, JSON.stringify(w.summary)],
        });
      if (w.moves)
        await query({
          text: 'UPDATE runs SET late_moves_json = $2 WHERE id = $1',
          values: [runId, JSON.stringify(w.moves)],
        });
      return w.recorded;
    });
  }

  /**
   * Every entry naming the device, newest first. The entries whose ids bracket the device are found by their
   * range (id-range.ts), and only those are read: a few per step of each run, whatever the size of the ledger.
   */
  async deviceHistory(deviceId: string, limit: number): Promise<DeviceHistoryRow[]> {
    // The device as the ledger keeps it (text.ts), and as its entries' JSON writes it ($2); as it was given
    // ($4), for the entries of a version before that kept a NUL in their JSON.
    const id = storedText(deviceId);
    const rows = await this.turns.read<HistoryEntryRow>({
      // The entries found by range that name the device, first: planned together, the server read every entry.
      text: `WITH l AS MATERIALIZED (
               SELECT * FROM ledger
               WHERE min_id <= $1 AND (max_id >= $1 OR max_id IS NULL)
                 AND (strpos(device_ids::text, $2) > 0 OR strpos(device_ids::text, $4) > 0)
             )
             SELECT l.run_id, l.step, l.kind, l.outcome, l.error_type, l.error_class, l.attempts, l.at,
               l.request_id, (l.data_json -> (d.n - 1)::int)::text AS data_json,
               r.playbook, r.started_at AS run_started_at, r.status AS run_status, r.dry_run AS run_dry_run
             FROM l CROSS JOIN LATERAL json_array_elements(l.device_ids) WITH ORDINALITY AS d(id, n)
               JOIN runs r ON r.id = l.run_id
             WHERE d.id::text IN ($2, $4)
             ORDER BY l.seq DESC LIMIT $3`,
      // Only an id text.ts changed can have been kept otherwise: else $4 is null, and scans nothing.
      values: [id, JSON.stringify(id), limit, id === deviceId ? null : JSON.stringify(deviceId)],
    });
    return historyRows(rows, id);
  }
}
