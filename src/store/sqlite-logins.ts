/**
 * The session logins that may have failed (api/login-count.ts) on SQLite: every process on the state file (a
 * daemon, `fleetbook run`, `fleetbook call`) counts its logins here. A claim reads and writes under the turn's
 * write lock, and is committed before the login is sent: two processes never both take the last login left.
 */
import type Database from 'better-sqlite3';
import {
  clearedBySuccess,
  type LoginCounts,
  type LoginSettlement,
  type LoginUser,
} from '../api/login-count.js';
import { countedLogin, LOGIN_COLUMNS as COLUMNS, withProcess, type LoginRow as Row } from './login-rows.js';
import { HERE, knownDead, type Process } from './lease.js';

/** The logins' table: a migration of the SQLite store. */
export const SQLITE_LOGINS_MIGRATION = `CREATE TABLE session_logins (
     seq INTEGER PRIMARY KEY,
     service TEXT NOT NULL,
     username TEXT NOT NULL,
     id TEXT NOT NULL UNIQUE,
     sent_at INTEGER NOT NULL,
     state TEXT NOT NULL,
     error TEXT,
     pid INTEGER NOT NULL,
     host TEXT NOT NULL,
     boot TEXT NOT NULL
   );
   CREATE INDEX session_logins_by_user ON session_logins (service, username, seq);`;

/**
 * The store's count: `write` opens (or joins) the turn's transaction, whose write lock makes a claim's read and
 * write one step; `durable` waits for its commit.
 */
export function sqliteLogins(
  sql: (text: string) => Database.Statement,
  write: () => void,
  durable: () => Promise<void>,
): LoginCounts {
  return {
    shared: true,
    async claim(user: LoginUser, id: string, now: number, limit: number) {
      write();
      const counted = sql(
        `SELECT ${COLUMNS} FROM session_logins WHERE service = ? AND username = ? ORDER BY seq`,
      ).all(user.service, user.username) as Row[];
      if (counted.length >= limit) return counted.map(countedLogin);
      sql(
        `INSERT INTO session_logins (service, username, id, sent_at, state, pid, host, boot)
         VALUES (?, ?, ?, ?, 'sending', ?, ?, ?)`,
      ).run(user.service, user.username, id, now, HERE.pid, HERE.host, HERE.boot);
      await durable();
      return undefined;
    },
    async settle(user: LoginUser, id: string, outcome: LoginSettlement, now: number, error?: string) {
      write();
      if (outcome === 'succeeded') {
        const counted = sql(
          `SELECT ${COLUMNS}, pid, host, boot FROM session_logins WHERE service = ? AND username = ?`,
        ).all(user.service, user.username) as (Row & Process)[];
        const cleared = clearedBySuccess(counted.map(withProcess), id, now, (r) => knownDead(r, HERE));
        sql('DELETE FROM session_logins WHERE id IN (SELECT value FROM json_each(?))').run(
          JSON.stringify(cleared.map((r) => r.id)),
        );
      } else if (outcome === 'not-acted') sql('DELETE FROM session_logins WHERE id = ?').run(id);
      else
        // Forgotten meanwhile (`fleetbook logins clear`): it failed after, and counts again.
        sql(
          `INSERT INTO session_logins (service, username, id, sent_at, state, error, pid, host, boot)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (id) DO UPDATE SET state = excluded.state, error = excluded.error`,
        ).run(user.service, user.username, id, now, outcome, error ?? null, HERE.pid, HERE.host, HERE.boot);
      await durable();
    },
    async list() {
      return (
        sql(`SELECT ${COLUMNS} FROM session_logins ORDER BY service, username, seq`).all() as Row[]
      ).map(countedLogin);
    },
    async clear(username: string, service?: string) {
      write();
      const gone = (
        service === undefined
          ? sql(`DELETE FROM session_logins WHERE username = ? RETURNING ${COLUMNS}, seq`).all(username)
          : sql(
              `DELETE FROM session_logins WHERE username = ? AND service = ? RETURNING ${COLUMNS}, seq`,
            ).all(username, service)
      ) as (Row & { seq: number })[];
      await durable();
      return gone.sort((a, b) => a.seq - b.seq).map(countedLogin);
    },
  };
}
