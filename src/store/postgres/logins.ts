/**
 * The session logins that may have failed (api/login-count.ts) on PostgreSQL: every replica, and every
 * `fleetbook run` or `call` on the database, counts its logins here. A claim takes a transaction-scoped advisory
 * lock of its user first, so that two replicas never both take the last login left; it is committed before the
 * login is sent.
 */
import type pg from 'pg';
import {
  clearedBySuccess,
  type CountedLogin,
  type LoginCounts,
  type LoginSettlement,
  type LoginUser,
} from '../../api/login-count.js';
import { countedLogin, LOGIN_COLUMNS as COLUMNS, withProcess, type LoginRow as Row } from '../login-rows.js';
import { HERE, knownDead, type Process } from '../lease.js';
import { transaction } from './pool.js';

/** The logins' table: a migration of the PostgreSQL store. */
export const POSTGRES_LOGINS_MIGRATION = `CREATE TABLE session_logins (
     seq bigserial PRIMARY KEY,
     service text COLLATE "C" NOT NULL,
     username text COLLATE "C" NOT NULL,
     id text COLLATE "C" NOT NULL UNIQUE,
     sent_at bigint NOT NULL,
     state text NOT NULL,
     error text,
     pid integer NOT NULL,
     host text NOT NULL,
     boot text NOT NULL
   );
   CREATE INDEX session_logins_by_user ON session_logins (service, username, seq);`;

/** The first key of the advisory locks of the users whose logins are claimed (the second: a hash of the user). */
const LOGIN_LOCKS = 0x666c69;

export class PostgresLogins implements LoginCounts {
  readonly shared = true;

  constructor(private readonly pool: pg.Pool) {}

  claim(user: LoginUser, id: string, now: number, limit: number): Promise<CountedLogin[] | undefined> {
    return transaction(this.pool, async (query) => {
      const who = [user.service, user.username];
      await query({
        text: `SELECT pg_advisory_xact_lock(${LOGIN_LOCKS}, hashtext($1 || ' ' || $2))`,
        values: who,
      });
      const { rows } = await query({
        text: `SELECT ${COLUMNS} FROM session_logins WHERE service = $1 AND username = $2 ORDER BY seq`,
        values: who,
      });
      if (rows.length >= limit) return (rows as Row[]).map(countedLogin);
      await query({
        text: `INSERT INTO session_logins (service, username, id, sent_at, state, pid, host, boot)
               VALUES ($1, $2, $3, $4, 'sending', $5, $6, $7)`,
        values: [...who, id, now, HERE.pid, HERE.host, HERE.boot],
      });
      return undefined;
    });
  }

  async settle(
    user: LoginUser,
    id: string,
    outcome: LoginSettlement,
    now: number,
    error?: string,
  ): Promise<void> {
    const who = [user.service, user.username];
    if (outcome === 'succeeded')
      // Read and cleared in one transaction: what it reads is what it clears.
      await transaction(this.pool, async (query) => {
        const { rows } = await query({
          text: `SELECT ${COLUMNS}, pid, host, boot FROM session_logins
                 WHERE service = $1 AND username = $2 ORDER BY seq FOR UPDATE`,
          values: who,
        });
        const counted = (rows as (Row & Process)[]).map(withProcess);
        const cleared = clearedBySuccess(counted, id, now, (r) => knownDead(r, HERE)).map((r) => r.id);
        if (cleared.length)
          await query({ text: 'DELETE FROM session_logins WHERE id = ANY($1)', values: [cleared] });
      });
    else if (outcome === 'not-acted') await this.pool.query('DELETE FROM session_logins WHERE id = $1', [id]);
    else
      // Forgotten meanwhile (`fleetbook logins clear`): it failed after, and counts again.
      await this.pool.query(
        `INSERT INTO session_logins (service, username, id, sent_at, state, error, pid, host, boot)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (id) DO UPDATE SET state = excluded.state, error = excluded.error`,
        [...who, id, now, outcome, error ?? null, HERE.pid, HERE.host, HERE.boot],
      );
  }

  async list(): Promise<CountedLogin[]> {
    const { rows } = await this.pool.query<Row>(
      `SELECT ${COLUMNS} FROM session_logins ORDER BY service, username, seq`,
    );
    return rows.map(countedLogin);
  }

  async clear(username: string, service?: string): Promise<CountedLogin[]> {
    const { rows } = await this.pool.query<Row & { seq: string }>(
      service === undefined
        ? `DELETE FROM session_logins WHERE username = $1 RETURNING ${COLUMNS}, seq`
        : `DELETE FROM session_logins WHERE username = $1 AND service = $2 RETURNING ${COLUMNS}, seq`,
      service === undefined ? [username] : [username, service],
    );
    return rows.sort((a, b) => Number(a.seq) - Number(b.seq)).map(countedLogin);
  }
}
