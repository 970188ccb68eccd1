/**
 * The board of shared rate budgets (rate/shares.ts) on SQLite: the processes on one state file (a daemon, a
 * `fleetbook run`) exchange their rows in one short write transaction each, a few times per second. The
 * write lock serialises the exchanges, and all of them share the host's clock.
 */
import type Database from 'better-sqlite3';
import { LAPSED_ROW_KEPT_MS, type BoardRow, type ShareBoard, type SharePost } from '../rate/shares.js';
import { preparer } from './sqlite-rows.js';

/** The board's table: a migration of the SQLite store. */
export const SQLITE_RATES_MIGRATION = `CREATE TABLE rate_shares (
     member TEXT PRIMARY KEY,
     seq INTEGER NOT NULL,
     lease_until INTEGER NOT NULL,
     written_at INTEGER NOT NULL,
     post TEXT NOT NULL
   ) WITHOUT ROWID;`;

interface Row {
  member: string;
  post: string;
  written_at: number;
  lease_until: number;
}

export class SqliteRates implements ShareBoard {
  private readonly run: Database.Transaction<
    (member: string, post: SharePost, leaseMs: number, now: number) => BoardRow[]
  >;

  /** `db`: the store's connection, so that an exchange joins a transaction of the store already open. */
  constructor(db: Database.Database) {
    const sql = preparer(db);
    this.run = db.transaction((member: string, post: SharePost, leaseMs: number, now: number) => {
      sql('DELETE FROM rate_shares WHERE lease_until < ?').run(now - LAPSED_ROW_KEPT_MS);
      const rows = sql(
        'SELECT member, post, written_at, lease_until FROM rate_shares WHERE lease_until > ?',
      ).all(now) as Row[];
      sql(
        `INSERT INTO rate_shares (member, seq, lease_until, written_at, post) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (member) DO UPDATE SET seq = excluded.seq, lease_until = excluded.lease_until,
           written_at = excluded.written_at, post = excluded.post
         WHERE rate_shares.seq < excluded.seq AND rate_shares.lease_until > excluded.written_at`,
      ).run(member, post.seq, now + leaseMs, now, JSON.stringify(post));
      return rows.map((r) => ({
        member: r.member,
        post: JSON.parse(r.post) as SharePost,
        ageMs: now - r.written_at,
        leftMs: r.lease_until - now,
      }));
    });
  }

  async exchange(member: string, post: SharePost, leaseMs: number, now: number): Promise<BoardRow[]> {
    // IMMEDIATE: the read and the write hold the write lock together.
    return this.run.immediate(member, post, leaseMs, now);
  }
}
