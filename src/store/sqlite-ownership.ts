/**
 * Owners, leases, run claims and device locks on SQLite (see Ownership in store.ts). Each operation is one
 * transaction on the store's main connection; SQLite's write lock makes a claim atomic between processes,
 * as `FOR UPDATE SKIP LOCKED` will on PostgreSQL.
 */
import type Database from 'better-sqlite3';
import { byStart, toOwner, toRun, type OwnerRow, type RunRow } from './rows.js';
import { preparer } from './sqlite-rows.js';
import { RELEASED_SHARE_MS } from '../rate/shares.js';
import { LeaseLostError } from '../errors.js';
import type { IdsJson } from './ids-json.js';
import type { Owner, OwnerHoldings, OwnerInfo, RunRecord } from './store.js';

/** The ownership tables: the fourth migration of the SQLite store (a later one gives device_claims rowids). */
export const OWNERSHIP_MIGRATION = `CREATE TABLE owners (
     id TEXT PRIMARY KEY,
     role TEXT NOT NULL,
     pid INTEGER NOT NULL,
     host TEXT NOT NULL,
     boot TEXT NOT NULL,
     started_at TEXT NOT NULL,
     lease_until INTEGER NOT NULL
   );
   ALTER TABLE runs ADD COLUMN owner TEXT;
   CREATE TABLE device_claims (
     holder TEXT PRIMARY KEY,
     owner TEXT NOT NULL,
     device_ids TEXT NOT NULL
   ) WITHOUT ROWID;
   CREATE INDEX device_claims_by_owner ON device_claims (owner);`;

/** The operations of Ownership (store.ts), synchronous: the SQLite store runs each in the turn's transaction. */
export class SqliteOwnership {
  private readonly sql: (text: string) => Database.Statement;
  private readonly register: (
    o: OwnerInfo,
    now: number,
    leaseMs: number,
    exclusive: boolean,
  ) => Owner | undefined;
  private readonly claim: (
    owner: string,
    playbooks: readonly string[] | undefined,
    now: number,
    runId: string | undefined,
  ) => RunRecord[];

  /** The lease the store's writes are fenced to (Ownership.fence in store.ts). */
  private fenced: { owner: string; onLost: ((e: Error) => void) | undefined } | undefined;

  /** `ids`: the JSON of the lists of ids written last, which the store's ledger entries share (ids-json.ts). */
  constructor(
    private readonly db: Database.Database,
    private readonly ids: IdsJson,
  ) {
    this.sql = preparer(db);
    this.register = db.transaction((o: OwnerInfo, now: number, leaseMs: number, exclusive: boolean) => {
      this.expire(now);
      if (exclusive) {
        const holder = this.sql(
          'SELECT * FROM owners WHERE role = ? AND id <> ? ORDER BY started_at LIMIT 1',
        ).get(o.role, o.id) as OwnerRow | undefined;
        if (holder) return toOwner(holder);
      }
      this.sql(
        `INSERT INTO owners (id, role, pid, host, boot, started_at, lease_until) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET lease_until = excluded.lease_until`,
      ).run(o.id, o.role, o.pid, o.host, o.boot, o.startedAt, now + leaseMs);
      return undefined;
    });
    this.claim = db.transaction(
      (owner: string, playbooks: readonly string[] | undefined, now: number, runId: string | undefined) => {
        this.checkFence(now);
        const rows = this.sql(
          `UPDATE runs SET owner = @owner
           WHERE status IN ('queued', 'running')
             AND (@playbooks IS NULL OR playbook IN (SELECT value FROM json_each(@playbooks)))
             AND (@runId IS NULL OR id = @runId)
             AND (owner IS NULL OR owner NOT IN (SELECT id FROM owners WHERE lease_until > @now))
           RETURNING *`,
        ).all({
          owner,
          playbooks: playbooks ? JSON.stringify(playbooks) : null,
          now,
          runId: runId ?? null,
        }) as RunRow[];
        return rows.map(toRun).sort(byStart);
      },
    );
  }

  fence(owner: string | undefined, onLost?: (e: Error) => void): void {
    this.fenced = owner === undefined ? undefined : { owner, onLost };
  }

  /**
   * Throws a LeaseLostError when the store is fenced to a lease that no longer holds at `now`. Called in the
   * transaction it guards, which holds (or takes) the write lock: no other process claims in between.
   */
  checkFence(now: number): void {
    const f = this.fenced;
    if (!f || this.sql('SELECT 1 FROM owners WHERE id = ? AND lease_until > ?').get(f.owner, now)) return;
    const e = new LeaseLostError(f.owner);
    const told = f.onLost;
    f.onLost = undefined;
    told?.(e);
    throw e;
  }

  /** Removes the owners whose lease expired, with their device locks. */
  private expire(now: number): void {
    this.sql('DELETE FROM device_claims WHERE owner IN (SELECT id FROM owners WHERE lease_until <= ?)').run(
      now,
    );
    this.sql('DELETE FROM owners WHERE lease_until <= ?').run(now);
  }

  registerOwner(o: OwnerInfo, now: number, leaseMs: number, exclusive: boolean): Owner | undefined {
    return this.register(o, now, leaseMs, exclusive);
  }

  renewOwner(id: string, now: number, leaseMs: number): boolean {
    return (
      this.sql('UPDATE owners SET lease_until = ? WHERE id = ? AND lease_until > ?').run(
        now + leaseMs,
        id,
        now,
      ).changes === 1
    );
  }

  releaseOwner(id: string): void {
    this.db.transaction(() => {
      this.sql('DELETE FROM device_claims WHERE owner = ?').run(id);
      this.sql('DELETE FROM owners WHERE id = ?').run(id);
      // Its rate shares lapse once its last starts have left the window (RELEASED_SHARE_MS), not its whole lease:
      // a daemon started again after a crash gets the budget in a second, not five.
      this.sql(
        `UPDATE rate_shares SET lease_until = min(lease_until, ?)
         WHERE substr(member, 1, length(?) + 1) = ? || '/'`,
      ).run(Date.now() + RELEASED_SHARE_MS, id, id);
    })();
  }

  liveOwners(now: number): Owner[] {
    return (
      this.sql('SELECT * FROM owners WHERE lease_until > ? ORDER BY started_at').all(now) as OwnerRow[]
    ).map(toOwner);
  }

  holdings(now: number): OwnerHoldings[] {
    const rows = this.sql(
      `SELECT o.*,
         (SELECT count(*) FROM runs r WHERE r.owner = o.id AND r.status IN ('queued', 'running')) AS runs,
         (SELECT count(*) FROM inbox i WHERE i.owner = o.id AND i.processed_at IS NULL) AS callbacks,
         (SELECT coalesce(sum(json_array_length(c.device_ids)), 0) FROM device_claims c WHERE c.owner = o.id)
           AS locked_devices
       FROM owners o WHERE o.lease_until > ? ORDER BY o.started_at`,
    ).all(now) as (OwnerRow & { runs: number; callbacks: number; locked_devices: number })[];
    return rows.map((r) => ({
      ...toOwner(r),
      runs: r.runs,
      callbacks: r.callbacks,
      lockedDevices: r.locked_devices,
    }));
  }

  claimRuns(
    owner: string,
    playbooks: readonly string[] | undefined,
    now: number,
    runId?: string,
  ): RunRecord[] {
    return this.claim(owner, playbooks, now, runId);
  }

  requestCancel(runId: string, reason: string): boolean {
    return (
      this.sql(`UPDATE runs SET cancel_requested = ? WHERE id = ? AND status IN ('queued', 'running')`).run(
        reason,
        runId,
      ).changes === 1
    );
  }

  cancelRequests(owner: string): { runId: string; reason: string }[] {
    return this.sql(
      `SELECT id AS runId, cancel_requested AS reason FROM runs
       WHERE status IN ('queued', 'running') AND owner = ? AND cancel_requested IS NOT NULL`,
    ).all(owner) as { runId: string; reason: string }[];
  }

  /**
   * One row per acquisition (its device ids as JSON), checked against the claims of the other live owners:
   * alone on the store, an acquisition is two indexed reads and one insert, whatever its size. The owner's own
   * claims do not count: it orders its acquisitions in memory (StoreDeviceLocks), and may release late. The
   * owners table comes first (CROSS JOIN keeps that order): a handful of rows, then the claims of the other live
   * owners by index; the other way round read every claim of this owner (one per run in flight).
   *
   * Called in the store's turn (SqliteStore.lockDevices opens it, BEGIN IMMEDIATE): the check and the claim hold
   * the write lock together, so two processes cannot both pass the check for one device. The claim needs no
   * savepoint of its own: its one write is its last statement.
   */
  lockDevices(owner: string, holder: string, ids: readonly string[], now: number): string | undefined {
    if (!this.db.inTransaction) throw new Error("a device lock is claimed in the store's open turn");
    this.checkFence(now);
    const others = this.sql(
      `SELECT c.device_ids FROM owners o CROSS JOIN device_claims c ON c.owner = o.id
       WHERE o.id <> ? AND o.lease_until > ?`,
    ).all(owner, now) as { device_ids: string }[];
    if (others.length) {
      const wanted = new Set(ids);
      for (const c of others)
        for (const id of JSON.parse(c.device_ids) as string[]) if (wanted.has(id)) return id;
    }
    this.sql(
      `INSERT INTO device_claims (holder, owner, device_ids) VALUES (?, ?, ?)
       ON CONFLICT (holder) DO UPDATE SET device_ids = excluded.device_ids`,
    ).run(holder, owner, this.ids.json(ids));
    return undefined;
  }

  unlockDevices(holders: readonly string[]): void {
    this.sql('DELETE FROM device_claims WHERE holder IN (SELECT value FROM json_each(?))').run(
      JSON.stringify(holders),
    );
  }
}
