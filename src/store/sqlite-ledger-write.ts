/**
 * The SQLite store's hot writes: a step's checkpoint (run_steps) and its counts (step_calls), and the ledger entries of its devices, alone or
 * with the checkpoint in one transaction. Their statements and transaction functions are made once. Each write
 * joins the store's open turn (sqlite.ts).
 */
import type Database from 'better-sqlite3';
import type { IdsJson } from './ids-json.js';
import { storedJson, storedText } from './text.js';
import { byStateRead } from './rows.js';
import type { DeviceGroup } from './store.js';

/** The devices a checkpoint is written with: their step, their groups, and when. */
export interface StepDevices {
  step: string;
  groups: DeviceGroup[];
  at: string;
}

export class LedgerWrites {
  /** Statements of the hot path (checkpoints, ledger rows), prepared once. */
  private readonly stmt: {
    saveStep: Database.Statement;
    saveCalls: Database.Statement;
    dropCalls: Database.Statement;
    insertEntry: Database.Statement;
  };
  /** A checkpoint and its ledger entries in one transaction: made once, as a transaction function is costly to make. */
  private readonly saveWithDevices: (runId: string, key: string, state: string, devices: StepDevices) => void;
  private readonly insertInTransaction: (
    runId: string,
    step: string,
    groups: DeviceGroup[],
    at: string,
  ) => void;

  /** `ids`: the JSON of the lists of ids written last, which the store's device claims share (ids-json.ts). */
  constructor(
    db: Database.Database,
    private readonly ids: IdsJson,
  ) {
    this.stmt = {
      saveStep: db.prepare(
        `INSERT INTO run_steps (run_id, step_key, state_json) VALUES (?, ?, ?)
         ON CONFLICT (run_id, step_key) DO UPDATE SET state_json = excluded.state_json`,
      ),
      saveCalls: db.prepare(
        `INSERT INTO step_calls (run_id, step_key, calls, attempts) VALUES (?, ?, ?, ?)
         ON CONFLICT (run_id, step_key) DO UPDATE SET calls = excluded.calls, attempts = excluded.attempts`,
      ),
      dropCalls: db.prepare('DELETE FROM step_calls WHERE run_id = ? AND step_key = ?'),
      insertEntry: db.prepare(
        `INSERT INTO ledger (run_id, step, kind, outcome, error_type, error_class, attempts, at, device_ids,
           request_id, data_json, min_id, max_id, by_state_read)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
    };
    this.saveWithDevices = db.transaction((runId, key, state, devices) => {
      this.stmt.saveStep.run(runId, key, state);
      this.insertGroups(runId, devices.step, devices.groups, devices.at);
    });
    this.insertInTransaction = db.transaction((runId, step, groups, at) =>
      this.insertGroups(runId, step, groups, at),
    );
  }

  /**
   * `saveStep` (store.ts): the checkpoint `state`, in JSON, with the ledger entries of `devices` if any. `ends`: it
   * ends a step that made requests (step-calls.ts endsCalls), whose counts row goes.
   */
  saveStep(runId: string, key: string, state: string, devices?: StepDevices, ends = false): void {
    if (devices?.groups.length) this.saveWithDevices(runId, key, state, devices);
    else this.stmt.saveStep.run(runId, key, state);
    if (ends) this.stmt.dropCalls.run(runId, key);
  }

  /** `saveCalls` (store.ts): a step's counts, as a request of it leaves. */
  saveCalls(runId: string, key: string, calls: number, attempts: number): void {
    this.stmt.saveCalls.run(runId, key, calls, attempts);
  }

  /** `recordDevices` (store.ts): the ledger entries of `groups`, in one transaction. */
  recordDevices(runId: string, step: string, groups: DeviceGroup[], at: string): void {
    this.insertInTransaction(runId, step, groups, at);
  }

  /**
   * One ledger entry per group, in order, in the caller's transaction: of a device given twice, the later entry
   * counts (by `seq`). Their texts are kept as both stores keep them (text.ts): the ids and the data are scanned in
   * their JSON, once, and taken apart again only when one of them has a NUL or a lone surrogate. The JSON and the
   * range of a batch's ids are made once for its claim, its `accepted` entries and their results (ids-json.ts).
   */
  insertGroups(runId: string, step: string, groups: DeviceGroup[], at: string): void {
    for (const g of groups) {
      if (!g.ids.length) continue;
      const { json: idsJson, range } = this.ids.stored(g.ids);
      this.stmt.insertEntry.run(
        runId,
        step,
        storedText(g.kind),
        g.outcome,
        storedText(g.errorType ?? null),
        storedText(g.errorClass ?? null),
        g.attempts,
        at,
        idsJson,
        storedText(g.requestId ?? null),
        g.data ? storedJson(JSON.stringify(g.data)) : null,
        range.min,
        range.max,
        byStateRead(g) ? 1 : null,
      );
    }
  }
}
