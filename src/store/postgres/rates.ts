/**
 * The board of shared rate budgets (rate/shares.ts) on PostgreSQL: each replica's exchange is one statement,
 * one round trip, a few times per second. Its read is the statement's snapshot, taken before its write: two
 * exchanges at once need not see each other, which the coordinator allows for (it raises a share only on an
 * answer that already holds its own row). Leases and ages are read on the server's clock, so that replicas
 * on hosts whose clocks differ agree on them.
 */
import type { Pool } from 'pg';
import { LAPSED_ROW_KEPT_MS, type BoardRow, type ShareBoard, type SharePost } from '../../rate/shares.js';

/** The board's table: a migration of the PostgreSQL store. */
export const POSTGRES_RATES_MIGRATION = `CREATE TABLE rate_shares (
     member TEXT PRIMARY KEY,
     seq BIGINT NOT NULL,
     lease_until BIGINT NOT NULL,
     written_at BIGINT NOT NULL,
     post JSONB NOT NULL
   );`;

const EXCHANGE = `
  WITH clock AS (SELECT (extract(epoch FROM statement_timestamp()) * 1000)::bigint AS now),
  swept AS (
    DELETE FROM rate_shares WHERE lease_until < (SELECT now FROM clock) - ${LAPSED_ROW_KEPT_MS}
  ),
  written AS (
    INSERT INTO rate_shares AS r (member, seq, lease_until, written_at, post)
    SELECT $1, $2, now + $3, now, $4::jsonb FROM clock
    ON CONFLICT (member) DO UPDATE SET seq = excluded.seq, lease_until = excluded.lease_until,
      written_at = excluded.written_at, post = excluded.post
    WHERE r.seq < excluded.seq AND r.lease_until > excluded.written_at
  )
  SELECT r.member, r.post::text AS post, (c.now - r.written_at)::float8 AS age_ms, (r.lease_until - c.now)::float8 AS left_ms
  FROM rate_shares r, clock c WHERE r.lease_until > c.now`;

interface Row {
  member: string;
  /** Text: the store's connections leave JSON unparsed (pool.ts), and so does this one. */
  post: string;
  age_ms: number;
  left_ms: number;
}

export class PostgresRates implements ShareBoard {
  /** `db`: a pool (or a client) on the store's database. */
  constructor(private readonly db: Pick<Pool, 'query'>) {}

  async exchange(member: string, post: SharePost, leaseMs: number): Promise<BoardRow[]> {
    const { rows } = await this.db.query<Row>(EXCHANGE, [member, post.seq, leaseMs, JSON.stringify(post)]);
    return rows.map((r) => ({
      member: r.member,
      post: JSON.parse(r.post) as SharePost,
      ageMs: r.age_ms,
      leftMs: r.left_ms,
    }));
  }
}
