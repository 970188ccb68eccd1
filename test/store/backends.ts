/**
 * The backends the store suite runs on: every test of test/store/ that is not about one backend's own files runs
 * on each (`forEachBackend`). A backend opens stores on fresh data, opens more stores on the same data (a second
 * process, a replica, or the data again after a close), and reads that data with SQL through a connection of
 * its own, as another process would see it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { Store } from '../../src/store/store.js';
import { postgresUrl } from '../helpers/postgres.js';

export interface Backend {
  readonly name: string;
  /** Several replicas share one store (PostgreSQL), or one daemon holds it (a SQLite file). */
  readonly replicas: boolean;
  /**
   * A store's reads and deciding writes, and `query`, happen in the turn they are called (SQLite works
   * synchronously underneath), rather than when a request reaches a server: only then can a test tell that
   * something is not committed (or synced) yet.
   */
  readonly synchronous: boolean;
  /** A store on fresh, empty data. `memory`: a SQLite store in memory, for speed, that cannot be reopened. */
  open(opts?: { memory?: boolean }): Promise<Store>;
  /** Another store on the data of `store`: a second process or replica, or the same data after a close. */
  reopen(store: Store): Promise<Store>;
  /**
   * Rows of `sql` (no parameters; the same text on every backend) over the committed data of `store`; a write
   * (UPDATE ... RETURNING) commits at once, as another process's would.
   */
  query<T>(store: Store, sql: string): Promise<T[]>;
  /** What `store.describe` names (the file, the database), and what it must never show (a password). */
  where(store: Store): { names: string; secret?: string };
  /** Closes the stores this backend opened that are still open, and removes their data. */
  closeAll(): Promise<void>;
}

/** The stores a backend opened, each with where its data is, and what it leaves to remove. */
class Opened<Where> {
  private readonly where = new Map<Store, Where>();
  private readonly open = new Set<Store>();
  readonly cleanups: (() => void | Promise<void>)[] = [];

  /** Keeps `store` (on the data at `where`) to close it after the test, unless the test did. */
  add<S extends Store>(store: S, where: Where): S {
    this.where.set(store, where);
    this.open.add(store);
    const close = store.close.bind(store);
    store.close = () => {
      this.open.delete(store);
      return close();
    };
    return store;
  }

  of(store: Store): Where {
    const w = this.where.get(store);
    if (w === undefined) throw new Error('not a store of this backend, or one in memory');
    return w;
  }

  async closeAll(): Promise<void> {
    const open = [...this.open];
    this.open.clear();
    this.where.clear();
    const closed = await Promise.allSettled(open.map((s) => s.close()));
    for (const c of this.cleanups.splice(0)) await c();
    const failed = closed.find((c) => c.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
  }
}

function sqlite(): Backend {
  const opened = new Opened<string>();
  return {
    name: 'SQLite',
    replicas: false,
    synchronous: true,
    open(opts) {
      if (opts?.memory) {
        const store = new SqliteStore(':memory:');
        opened.add(store, undefined as unknown as string);
        return Promise.resolve(store);
      }
      const dir = mkdtempSync(join(tmpdir(), 'fleetbook-store-'));
      opened.cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      const file = join(dir, 'state.db');
      return Promise.resolve(opened.add(new SqliteStore(file), file));
    },
    reopen(store) {
      const file = opened.of(store);
      return Promise.resolve(opened.add(new SqliteStore(file), file));
    },
    query<T>(store: Store, sql: string) {
      // A connection of its own, read at once: it sees what is committed now, as another process would. A write
      // (with RETURNING) is another process's too.
      const db = new Database(opened.of(store), { readonly: !/^\s*(UPDATE|INSERT|DELETE)\b/i.test(sql) });
      try {
        return Promise.resolve(db.prepare(sql).all() as T[]);
      } finally {
        db.close();
      }
    },
    where: (store) => ({ names: opened.of(store) }),
    closeAll: () => opened.closeAll(),
  };
}

function postgres(): Backend {
  const opened = new Opened<string>();
  const open = async (url: string) => opened.add(await openPostgresStore(url), url);
  return {
    name: 'PostgreSQL',
    replicas: true,
    synchronous: false,
    // A database of its own for each store opened afresh, on a throwaway server (test/helpers/postgres.ts).
    open: async () => open(await postgresUrl()),
    reopen: (store) => open(opened.of(store)),
    async query<T>(store: Store, sql: string) {
      const client = new pg.Client(opened.of(store));
      await client.connect();
      try {
        return (await client.query(sql)).rows as T[];
      } finally {
        await client.end();
      }
    },
    where(store) {
      const url = new URL(opened.of(store));
      return { names: `${url.host}${url.pathname}`, ...(url.password ? { secret: url.password } : {}) };
    },
    closeAll: () => opened.closeAll(),
  };
}

export const backends: readonly Backend[] = [sqlite(), postgres()];

/**
 * `describe(title)` once per backend, as `<backend>: <title>`, closing the stores each test opened after it. The
 * tests of one backend's own files (a damaged SQLite file) are not in here: they name their backend themselves.
 */
export function forEachBackend(title: string, tests: (b: Backend) => void): void {
  for (const b of backends)
    describe(`${b.name}: ${title}`, function () {
      // The first store on PostgreSQL starts its server.
      this.timeout(60_000);
      afterEach(() => b.closeAll());
      tests(b);
    });
}

/** How many step_calls rows run `runId` has, once what the store wrote is durable. */
export async function stepCallRows(b: Backend, store: Store, runId: string): Promise<number> {
  await store.durable();
  const [r] = await b.query<{ n: number | string }>(
    store,
    `SELECT count(*) AS n FROM step_calls WHERE run_id = '${runId}'`,
  );
  return Number(r?.n ?? 0);
}
