/** Runs, their steps' checkpoints and items, on PostgreSQL (RunStore of store.ts). */
import { json, toRun, type RunRow } from '../rows.js';
import {
  ENDED,
  type MarksQuery,
  type DeviceGroup,
  type ItemRuns,
  type RunRecord,
  type RunListQuery,
  type RunStatus,
  type RunStore,
} from '../store.js';
import { type Statement } from './pool.js';
import { itemColumns, itemRuns } from '../item-runs.js';
import { storedText } from '../text.js';
import { entryRecords } from './ledger.js';
import type { TurnWrites, Turns } from './turn.js';
import type { RunUpdate } from '../late.js';
import { isoTime } from '../../clock.js';
import { VERSION_REFRESH_MS } from '../retention.js';
import { MARKS } from '../checkpoint-steps.js';
import { endsCalls, withStepCalls, type StepCallsRow } from '../step-calls.js';

const RUN_NAMES = `id, playbook, status, trigger_json, inputs_json, started_at, ended_at, summary_json, error,
  event_json, owner, version, dry_run`;

/** A run as a row of `runs`, and the event that starts it (completeInbox), as `insertRuns` reads it. */
export interface RunInsert extends RunRow {
  event_id?: number;
}

/**
 * A run as a row of `runs`, its JSON columns as text, made when the run is written. The event's id comes last:
 * in Node 20 each member written after a spread costs about a microsecond, and this is made for every run.
 */
export function runRow(r: RunRecord, eventId?: number): RunInsert {
  return {
    id: storedText(r.id),
    playbook: storedText(r.playbook),
    status: r.status,
    trigger_json: json(r.trigger),
    inputs_json: json(r.inputs),
    started_at: storedText(r.startedAt),
    ended_at: storedText(r.endedAt ?? null),
    summary_json: json(r.summary),
    error: storedText(r.error ?? null),
    event_json: json(r.event),
    owner: storedText(r.owner ?? null),
    version: r.version ?? null,
    dry_run: r.dryRun === true,
    ...(eventId !== undefined ? { event_id: eventId } : {}),
  };
}

/**
 * Inserts runs, whatever their number, in one statement (its first value); `where`, SQL on each row `r`, may keep
 * only some of them.
 */
export function insertRuns(rows: readonly RunInsert[], where = ''): Statement & { values: unknown[] } {
  return {
    text: `INSERT INTO runs (${RUN_NAMES})
           SELECT ${RUN_NAMES} FROM json_to_recordset($1::json) AS r(id text, playbook text, status text,
             trigger_json text, inputs_json text, started_at text, ended_at text, summary_json text, error text,
             event_json text, owner text, version text, dry_run boolean, event_id bigint)
           ${where}`,
    values: [JSON.stringify(rows)],
  };
}

/** The updates of a turn's runs, in one statement: a column a patch does not name keeps its value. */
export function updateRuns(patches: TurnWrites['runUpdates']): Statement {
  return {
    text: `UPDATE runs r SET status = coalesce(u.status, r.status), ended_at = coalesce(u.ended_at, r.ended_at),
             summary_json = coalesce(u.summary_json, r.summary_json), error = coalesce(u.error, r.error),
             late_moves_json = CASE WHEN u.moves_counted THEN NULL ELSE r.late_moves_json END
           FROM json_to_recordset($1::json)
             AS u(id text, status text, ended_at text, summary_json text, error text, moves_counted boolean)
           WHERE r.id = u.id`,
    values: [JSON.stringify([...patches.values()])],
  };
}

/** Each step's latest checkpoint of a turn, in one statement. */
export function upsertSteps(steps: TurnWrites['steps']): Statement {
  return {
    text: `INSERT INTO run_steps (run_id, step_key, state_json)
           SELECT run_id, step_key, state_json
           FROM json_to_recordset($1::json) AS s(run_id text, step_key text, state_json text)
           ON CONFLICT (run_id, step_key) DO UPDATE SET state_json = excluded.state_json`,
    values: [JSON.stringify([...steps.values()])],
  };
}

/** Each step's latest counts of a turn (step-calls.ts), in one statement. */
export function upsertCalls(calls: TurnWrites['calls']): Statement {
  return {
    text: `INSERT INTO step_calls (run_id, step_key, calls, attempts)
           SELECT run_id, step_key, calls, attempts
           FROM json_to_recordset($1::json) AS c(run_id text, step_key text, calls integer, attempts integer)
           ON CONFLICT (run_id, step_key) DO UPDATE SET calls = excluded.calls, attempts = excluded.attempts`,
    values: [JSON.stringify([...calls.values()])],
  };
}

/**
 * The counts rows of a turn's steps that ended and of its runs that ended (step-calls.ts): after its counts are
 * written, so that none of them comes back.
 */
export function removedCalls(t: Pick<TurnWrites, 'callsEnded' | 'runsEnded'>): Statement[] {
  const out: Statement[] = [];
  if (t.callsEnded.size)
    out.push({
      text: `DELETE FROM step_calls s USING json_to_recordset($1::json) AS d(run_id text, step_key text)
             WHERE s.run_id = d.run_id AND s.step_key = d.step_key`,
      values: [JSON.stringify([...t.callsEnded.values()])],
    });
  if (t.runsEnded.size)
    out.push({ text: 'DELETE FROM step_calls WHERE run_id = ANY($1::text[])', values: [[...t.runsEnded]] });
  return out;
}

export class PostgresRuns implements RunStore {
  constructor(private readonly turns: Turns) {}

  async savePlaybookVersion(version: string, definition: string): Promise<void> {
    await this.turns.query({
      text: `INSERT INTO playbook_versions (version, definition_json, saved_at) VALUES ($1, $2, $3)
             ON CONFLICT (version) DO UPDATE SET saved_at = excluded.saved_at WHERE playbook_versions.saved_at < $4`,
      values: [
        version,
        storedText(definition),
        new Date().toISOString(),
        isoTime(Date.now() - VERSION_REFRESH_MS),
      ],
    });
  }

  async playbookVersion(version: string): Promise<string | undefined> {
    const [row] = await this.turns.read<{ definition_json: string }>({
      text: 'SELECT definition_json FROM playbook_versions WHERE version = $1',
      values: [version],
    });
    return row?.definition_json;
  }

  createRun(run: RunRecord): void {
    this.turns.write().runs.push(runRow(run));
  }

  updateRun(id: string, p: RunUpdate): void {
    const turn = this.turns.write();
    // Of the updates of a run in a turn, each column's last counts: one merged patch, in one statement.
    const patch = turn.runUpdates.get(id) ?? { id: storedText(id) };
    if (p.status !== undefined) patch.status = p.status;
    if (p.endedAt !== undefined) patch.ended_at = storedText(p.endedAt);
    if (p.summary !== undefined) patch.summary_json = json(p.summary);
    if (p.error !== undefined) patch.error = storedText(p.error);
    if (p.movesCounted) patch.moves_counted = true;
    turn.runUpdates.set(id, patch);
    if (p.status && ENDED.has(p.status)) {
      turn.statements.push({ text: 'DELETE FROM step_items WHERE run_id = $1', values: [storedText(id)] });
      // The counts of the steps that never ended (step-calls.ts): the run's summary has them now.
      turn.runsEnded.add(storedText(id));
    }
  }

  async getRun(id: string): Promise<RunRecord | undefined> {
    const [row] = await this.turns.read<RunRow>({ text: 'SELECT * FROM runs WHERE id = $1', values: [id] });
    return row && toRun(row);
  }

  async listRuns(q: RunListQuery = {}): Promise<RunRecord[]> {
    const values: unknown[] = [];
    const where: string[] = [];
    const cond = (sql: (...at: string[]) => string, ...args: unknown[]) =>
      where.push(sql(...args.map((a) => `$${values.push(a)}`)));
    if (q.playbook !== undefined) cond((p) => `playbook = ${p}`, q.playbook);
    if (q.status !== undefined) cond((s) => `status = ${s}`, q.status);
    if (q.trigger !== undefined) cond((t) => `(trigger_json::json ->> 'type') = ${t}`, q.trigger);
    if (q.dryRun !== undefined) cond((d) => `dry_run = ${d}`, q.dryRun);
    if (q.from !== undefined) cond((f) => `started_at >= ${f}`, q.from);
    if (q.to !== undefined) cond((t) => `started_at < ${t}`, q.to);
    if (q.before !== undefined)
      cond((at, id) => `(started_at, id) < (${at}, ${id})`, q.before.startedAt, q.before.id);
    values.push(q.limit ?? 50);
    const rows = await this.turns.read<RunRow>({
      text: `SELECT * FROM runs ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
             ORDER BY started_at DESC, id DESC LIMIT $${values.length}`,
      values,
    });
    return rows.map(toRun);
  }

  runsByHour(from: string): Promise<{ hour: string; status: RunStatus; n: number }[]> {
    return this.turns.read({
      text: `SELECT substr(started_at, 1, 13) AS hour, status, count(*)::int AS n FROM runs WHERE started_at >= $1
             GROUP BY 1, 2 ORDER BY 1`,
      values: [from],
    });
  }

  async runIdsStartingWith(prefix: string, limit: number): Promise<string[]> {
    // A range of the primary key, as on SQLite: every id that starts with the prefix sorts (bytewise, "C") from
    // it to it followed by the highest code point. LIKE would need its wildcards escaped.
    const rows = await this.turns.read<{ id: string }>({
      text: 'SELECT id FROM runs WHERE id >= $1 AND id < $2 ORDER BY id LIMIT $3',
      values: [prefix, `${prefix}\u{10FFFF}`, limit],
    });
    return rows.map((r) => r.id);
  }

  saveStep(
    runId: string,
    key: string,
    state: unknown,
    devices?: { step: string; groups: DeviceGroup[]; at: string },
  ): void {
    const turn = this.turns.write();
    // A later checkpoint of the step in the same turn replaces the earlier one, as its upsert would.
    const id = `${runId}\0${key}`;
    turn.steps.delete(id);
    turn.steps.set(id, {
      run_id: storedText(runId),
      step_key: storedText(key),
      state_json: JSON.stringify(state),
    });
    if (devices) turn.entries.push(...entryRecords(runId, devices.step, devices.groups, devices.at));
    // A step that made requests ends: its counts row goes, once the turn's counts are written (removedCalls).
    if (endsCalls(state)) {
      turn.calls.delete(id);
      turn.callsEnded.set(id, { run_id: storedText(runId), step_key: storedText(key) });
    }
  }

  saveCalls(runId: string, key: string, calls: number, attempts: number): void {
    const turn = this.turns.write();
    const run_id = storedText(runId);
    const step_key = storedText(key);
    turn.calls.set(`${runId}\0${key}`, { run_id, step_key, calls, attempts });
  }

  async loadSteps(runId: string): Promise<Map<string, unknown>> {
    const rows = await this.turns.read<{ step_key: string; state_json: string }>({
      text: 'SELECT step_key, state_json FROM run_steps WHERE run_id = $1',
      values: [runId],
    });
    const cps = new Map(rows.map((r) => [r.step_key, JSON.parse(r.state_json) as unknown]));
    const calls = await this.turns.read<StepCallsRow>({
      text: 'SELECT step_key, calls, attempts FROM step_calls WHERE run_id = $1',
      values: [runId],
    });
    return withStepCalls(cps, calls, true);
  }

  async stepMarks(runId: string, only?: MarksQuery): Promise<Map<string, unknown>> {
    const which =
      only === undefined ? '' : 'limit' in only ? ' ORDER BY step_key LIMIT $2' : ' AND step_key = ANY($2)';
    const rows = await this.turns.read<{ step_key: string; state_json: string }>({
      // jsonb refuses an escaped NUL or lone surrogate (a service's answer kept in an output may hold one): each
      // is read as U+FFFD first, as the store keeps its texts (store/text.ts storedJson).
      text: String.raw`SELECT step_key,
          jsonb_strip_nulls(jsonb_build_object(${MARKS.map((m) => `'${m}', s->'${m}'`).join(', ')}))::text
            AS state_json
        FROM (SELECT step_key, (CASE WHEN strpos(state_json, '\u') = 0 THEN state_json
                ELSE regexp_replace(state_json, '(?<!\\)((?:\\\\)*)\\u(?:0000|d[89a-f][0-9a-f]{2})', '\1' || chr(65533), 'g')
                END)::jsonb AS s
              FROM run_steps WHERE run_id = $1${which}) AS c`,
      values: [runId, ...(only === undefined ? [] : ['limit' in only ? only.limit : only.keys])],
    });
    const marks = new Map(rows.map((r) => [r.step_key, JSON.parse(r.state_json) as unknown]));
    const calls = await this.turns.read<StepCallsRow>({
      // Only the steps under way have a row; withStepCalls reads those of the marks read.
      text: 'SELECT step_key, calls, attempts FROM step_calls WHERE run_id = $1',
      values: [runId],
    });
    return withStepCalls(marks, calls, false);
  }

  appendItems(runId: string, key: string, seq: number, runs: ItemRuns): void {
    const { runsJson, errorsJson } = itemColumns(runs);
    this.turns.write().statements.push({
      text: 'INSERT INTO step_items (run_id, step_key, seq, runs_json, errors_json) VALUES ($1, $2, $3, $4, $5)',
      values: [runId, key, seq, runsJson, errorsJson],
    });
  }

  async itemChunks(
    runId: string,
    key: string,
    afterSeq: number,
    limit: number,
  ): Promise<{ seq: number; runs: ItemRuns }[]> {
    const rows = await this.turns.read<{ seq: number; runs_json: string; errors_json: string | null }>({
      text: `SELECT seq, runs_json, errors_json FROM step_items WHERE run_id = $1 AND step_key = $2 AND seq > $3
             ORDER BY seq LIMIT $4`,
      values: [runId, key, afterSeq, limit],
    });
    return rows.map((r) => ({ seq: r.seq, runs: itemRuns(r.runs_json, r.errors_json) }));
  }

  clearItems(runId: string, key: string): void {
    this.turns.write().statements.push({
      text: 'DELETE FROM step_items WHERE run_id = $1 AND step_key = $2',
      values: [runId, key],
    });
  }
}
