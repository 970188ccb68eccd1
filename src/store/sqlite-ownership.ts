/**
 * Owners, leases, run claims and device locks on SQLite (see Ownership in store.ts). Each operation is one
 * transaction on the store's main connection; SQLite's write lock makes a claim atomic between processes,
 * as `FOR UPDATE SKIP LOCKED` will on PostgreSQL.
 */
import type Database from 'better-sqlite3';
import { compare, preparer, toRun, type RunRow } from './sqlite-rows.js';
import type { Owner, OwnerInfo, Ownership, RunRecord } from './store.js';

/** The ownership tables: the fourth migration of the SQLite store. */
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
   CREATE TABLE lock_holders (
     id TEXT PRIMARY KEY,
     owner TEXT NOT NULL
   ) WITHOUT ROWID;
   CREATE INDEX lock_holders_by_owner ON lock_holders (owner);
   CREATE TABLE device_locks (
     device_id TEXT PRIMARY KEY,
     holder TEXT NOT NULL
   ) WITHOUT ROWID;`;

/**
 * A device is locked while its row names a holder (one acquisition) of a live owner. Releasing removes the holder
 * alone, whatever the number of its devices; the rows it leaves are free, taken over by the next lock of their
 * device, and swept a chunk at a time. A row of the owner's own is free to it: an owner orders its own
 * acquisitions in memory (StoreDeviceLocks), so it may release them to the store later, several at once.
 */
const FREE = `holder NOT IN (SELECT h.id FROM lock_holders h JOIN owners o ON o.id = h.owner
  WHERE o.lease_until > @now AND h.owner <> @owner)`;

interface OwnerRow {
  id: string;
  role: string;
  pid: number;
  host: string;
  boot: string;
  started_at: string;
  lease_until: number;
}

export class SqliteOwnership implements Ownership {
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
  ) => RunRecord[];
  private readonly lock: (
    owner: string,
    holder: string,
    ids: string,
    count: number,
    now: number,
  ) => string | undefined;

  constructor(private readonly db: Database.Database) {
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
    this.claim = db.transaction((owner: string, playbooks: readonly string[] | undefined, now: number) => {
      const rows = this.sql(
        `UPDATE runs SET owner = @owner
         WHERE status IN ('queued', 'running')
           AND (@playbooks IS NULL OR playbook IN (SELECT value FROM json_each(@playbooks)))
           AND (owner IS NULL OR owner NOT IN (SELECT id FROM owners WHERE lease_until > @now))
         RETURNING *`,
      ).all({ owner, playbooks: playbooks ? JSON.stringify(playbooks) : null, now }) as RunRow[];
      return rows.map(toRun).sort((a, b) => compare(a.startedAt, b.startedAt) || compare(a.id, b.id));
    });
    this.lock = db.transaction((owner: string, holder: string, ids: string, count: number, now: number) => {
      this.sql('INSERT INTO lock_holders (id, owner) VALUES (?, ?)').run(holder, owner);
      // One statement: a device never locked gets its row, a device whose row is free is taken over.
      const taken = this.sql(
        `INSERT INTO device_locks (device_id, holder) SELECT value, @holder FROM json_each(@ids) WHERE true
         ON CONFLICT (device_id) DO UPDATE SET holder = excluded.holder WHERE device_locks.${FREE}`,
      ).run({ holder, owner, ids, now }).changes;
      if (taken === count) return undefined;
      // Some device is held by a live owner: none is taken (the rows taken are free again with the holder gone).
      const busy = this.sql(
        `SELECT device_id FROM device_locks WHERE device_id IN (SELECT value FROM json_each(?)) AND holder <> ? LIMIT 1`,
      ).get(ids, holder) as { device_id: string } | undefined;
      this.sql('DELETE FROM lock_holders WHERE id = ?').run(holder);
      if (!busy) throw new Error(`device locks: ${count - taken} of ${count} devices neither taken nor held`);
      return busy.device_id;
    });
  }

  /** Removes the owners whose lease expired, with their device locks. */
  private expire(now: number): void {
    this.sql('DELETE FROM lock_holders WHERE owner IN (SELECT id FROM owners WHERE lease_until <= ?)').run(
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
      this.sql('DELETE FROM lock_holders WHERE owner = ?').run(id);
      this.sql('DELETE FROM owners WHERE id = ?').run(id);
    })();
  }

  liveOwners(now: number): Owner[] {
    return (
      this.sql('SELECT * FROM owners WHERE lease_until > ? ORDER BY started_at').all(now) as OwnerRow[]
    ).map(toOwner);
  }

  claimRuns(owner: string, playbooks: readonly string[] | undefined, now: number): RunRecord[] {
    return this.claim(owner, playbooks, now);
  }

  lockDevices(owner: string, holder: string, ids: readonly string[], now: number): string | undefined {
    const unique = new Set(ids);
    return this.lock(owner, holder, JSON.stringify([...unique]), unique.size, now);
  }

  unlockDevices(holders: readonly string[]): void {
    this.sql('DELETE FROM lock_holders WHERE id IN (SELECT value FROM json_each(?))').run(
      JSON.stringify(holders),
    );
  }

  sweepLocks(now: number, limit: number): number {
    return this.sql(
      `DELETE FROM device_locks WHERE device_id IN (SELECT device_id FROM device_locks WHERE ${FREE} LIMIT @limit)`,
    ).run({ now, limit, owner: '' }).changes;
  }
}

function toOwner(r: OwnerRow): Owner {
  return {
    id: r.id,
    role: r.role as Owner['role'],
    pid: r.pid,
    host: r.host,
    boot: r.boot,
    startedAt: r.started_at,
    leaseUntil: r.lease_until,
  };
}
