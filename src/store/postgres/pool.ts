/**
 * The connections of a PostgreSQL store: one pool per store (a replica), its own type parsers, and the
 * statements it runs, each given as SQL text and values.
 */
import { createHash } from 'node:crypto';
import { Socket } from 'node:net';
import pg from 'pg';
import { ConfigError } from '../../errors.js';
import { tlsUrl } from './tls.js';

export interface PostgresOptions {
  /**
   * How many connections the store's pool opens at most: one commits the turns, the others serve the reads,
   * claims and inbox commits that overlap it. Reads over a snapshot, which hold theirs until they end, take at
   * most this less two (Turns.snapshot).
   * @default 10
   */
  maxConnections?: number;
  /** How the connections name themselves to the server (`pg_stat_activity.application_name`). @default 'fleetbook' */
  applicationName?: string;
  /** Where the URL came from, for the messages that name the database. @default 'FLEETBOOK_STATE' */
  origin?: string;
}

/** One statement: its text, and its values ($1, $2, ...). */
export interface Statement {
  text: string;
  values?: unknown[];
}

const names = new Map<string, string>();

/**
 * `s` as a named prepared statement, named by its text: each connection parses it once and keeps its plan,
 * instead of parsing and planning it at every call (most of the database's CPU on a daemon's small writes).
 * The texts are the code's, a few dozen: so are the statements each connection keeps.
 */
export function prepared(s: Statement): pg.QueryConfig {
  if (!s.values) return s;
  let name = names.get(s.text);
  if (name === undefined) {
    name = `fb_${createHash('sha1').update(s.text).digest('base64url').slice(0, 20)}`;
    names.set(s.text, name);
  }
  return { name, text: s.text, values: s.values };
}

const INT8 = 20;
const JSON_OID = 114;
const JSONB = 3802;

/**
 * This pool's own parsers, not the driver's global ones (which would change every other pool of the process):
 * a bigint (ids, sequence numbers, lease times in ms) is a number, well within 2^53; JSON stays text, as the
 * SQLite store reads it, so that both stores share one mapping of rows (rows.ts) and parse it once.
 */
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8) return (v: string) => Number(v);
    if (oid === JSON_OID || oid === JSONB) return (v: string) => v;
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

/**
 * A connection's socket whose statements of one tick of the loop leave together. The driver corks the socket
 * while it writes a statement's messages (parse, bind, execute, sync) and uncorks it after, so each statement of
 * a pipelined turn was a system call of its own, and a read of the server's. Uncorked at the next tick instead,
 * the statements written meanwhile go out in one. (The hook is `uncork`: Node sets a connecting socket's
 * `write` back to its own.)
 */
class TickSocket extends Socket {
  override uncork(): void {
    process.nextTick(() => super.uncork());
  }
}

/** `postgres://user@host:port/db`, without the password or the parameters (which may hold one). */
export function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.username ? `${u.username}@` : ''}${u.host}${u.pathname}`;
  } catch {
    return 'postgres://(a URL that does not parse)';
  }
}

export function describeUrl(url: string, origin = 'FLEETBOOK_STATE'): string {
  return `the database ${safeUrl(url)} (${origin})`;
}

/**
 * How long the server lets a transaction of the store wait for its client between two statements before it ends
 * the session. A healthy replica waits for nothing in a transaction but its own event loop; one frozen in the
 * middle of one (SIGSTOP, a paused VM) would otherwise hold its row locks for as long as it is frozen: the device
 * locks of its acquisition, and its owner's row, which a claim of its runs waits for (ownership.ts).
 */
const IDLE_IN_TRANSACTION_MS = 5_000;

/**
 * How a connection of the store opens: this store's types, and commits on disk when they return (the driver
 * lets the URL's parameters override the config's, so the URL's `options` are taken out of it and kept before
 * this one). A server that does not answer fails the connection after 10 s, rather than hold its caller. A URL
 * that does not parse, or whose TLS the driver would not do as written, is refused before any connection (tls.ts);
 * the files of PGSSLROOTCERT, PGSSLCERT and PGSSLKEY are given to the driver as the URL's parameters.
 */
export function clientConfig(
  url: string,
  applicationName: string,
  origin = 'FLEETBOOK_STATE',
): pg.ClientConfig {
  const u = tlsUrl(new URL(url), origin);
  const given = u.searchParams.get('options');
  if (given !== null) u.searchParams.delete('options');
  return {
    connectionString: u.href,
    types,
    application_name: applicationName,
    // No JIT compilation, unless the URL's options ask for it: the statements are short, and their cost is
    // overstated on a table not yet analyzed (a busy replica's inbox, before autovacuum's first ANALYZE). Past
    // jit_above_cost, each read of the inbox feed was compiled with LLVM, 3 ms a read instead of 0.07: on three
    // replicas, the callbacks acknowledged a second halved in about one run in three (P3-PG3).
    // A plan for the values at hand each time: a generic plan of the turn's statements (JSON record sets)
    // cost three times the CPU of the parse it saves.
    options: `-c jit=off ${given ? `${given} ` : ''}-c synchronous_commit=on -c plan_cache_mode=force_custom_plan -c idle_in_transaction_session_timeout=${IDLE_IN_TRANSACTION_MS}`,
    connectionTimeoutMillis: 10_000,
    keepAlive: true,
    stream: () => new TickSocket(),
  };
}

/**
 * A pool of connections opened as `config` says (clientConfig: the URL checked once, by whoever opens the
 * store, and the same config for each of its pools), named `applicationName` when given. Its connections
 * pipeline their statements (a turn's BEGIN, writes and COMMIT go out together, one round trip), and keep
 * `synchronous_commit` on whatever the server's default: a commit is on disk when it returns, which the inbox's
 * acknowledgements and `durable()` promise.
 */
export function openPool(
  config: pg.ClientConfig,
  options: { maxConnections?: number; applicationName?: string } = {},
): pg.Pool {
  const max = options.maxConnections ?? 10;
  if (!Number.isInteger(max) || max < 2)
    throw new ConfigError(`Expected \`maxConnections\` to be an integer from 2 and up, got ${String(max)}`);
  const pool = new pg.Pool({
    ...config,
    ...(options.applicationName ? { application_name: options.applicationName } : {}),
    max,
    pipeline: true,
  } as pg.PoolConfig);
  // A connection that breaks while idle (a server restart) leaves the pool; the next statement opens another.
  pool.on('error', () => undefined);
  return pool;
}

/** The SQLSTATE `fleetbook_fence` raises: the fenced owner's lease no longer holds (migrations.ts). */
export const FENCE_ERROR = 'FBL01';
/** The SQLSTATE with which `fleetbook_lock` (of the previous version) undoes an acquisition short of a device. */
export const HELD_ERROR = 'FBL02';
/** The first key of the advisory locks of owners (the second is the hash of the owner's id): see the fence. */
export const OWNER_LOCKS = 0x666c6f;

/**
 * A prepared statement whose table another replica's migration changed ("cached plan must not change result
 * type"): its connection is dropped, and the statement tried again on another.
 */
const STALE_PLAN = '0A000';

/**
 * Error codes after which a transaction can be tried again as it was: a deadlock, a serialization failure, a
 * plan made stale by a migration.
 */
export function retryable(e: unknown): boolean {
  const code = (e as { code?: string }).code;
  return code === '40P01' || code === '40001' || code === STALE_PLAN;
}

/**
 * `use` with a connection of the pool, given back after it (or dropped, when the connection broke: an error
 * without the code the server gives a statement's). While it is out, an error event of the connection (the
 * server ending it between two statements) fails the next statement rather than the process.
 */
export async function withClient<T>(pool: pg.Pool, use: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  const ignore = () => undefined;
  client.on('error', ignore);
  let broken: Error | undefined;
  try {
    return await use(client);
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === undefined || code === STALE_PLAN) broken = e as Error;
    throw e;
  } finally {
    client.off('error', ignore);
    client.release(broken);
  }
}

/**
 * Runs `statements` in one transaction on one connection, pipelined: one round trip. Resolves with each one's
 * result; rejects with the first error, and then nothing of it is committed.
 */
export function inTransaction(pool: pg.Pool, statements: readonly Statement[]): Promise<pg.QueryResult[]> {
  return withClient(pool, async (client) => {
    if (statements.length === 1) return [await client.query(prepared(statements[0] as Statement))];
    const settled = await Promise.allSettled([
      client.query('BEGIN'),
      ...statements.map((s) => client.query(prepared(s))),
      client.query('COMMIT'),
    ]);
    // After an error the server aborts the transaction, and answers its COMMIT with a ROLLBACK.
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    return settled.slice(1, -1).map((s) => (s as PromiseFulfilledResult<pg.QueryResult>).value);
  });
}

/**
 * Runs `work` in a transaction of its own on one connection (BEGIN goes out with its first statement), and
 * commits it; rolls it back when `work` throws.
 */
export function transaction<T>(
  pool: pg.Pool,
  work: (query: (s: Statement) => Promise<pg.QueryResult>) => Promise<T>,
): Promise<T> {
  return withClient(pool, async (client) => {
    const begin = client.query('BEGIN');
    begin.catch(() => undefined);
    let answer: T;
    try {
      answer = await work((s) => client.query(prepared(s)));
      await begin;
    } catch (e) {
      // A statement's error aborted the transaction; a broken connection ended it.
      if ((e as { code?: string }).code !== undefined) await client.query('ROLLBACK');
      throw e;
    }
    await client.query('COMMIT');
    return answer;
  });
}
