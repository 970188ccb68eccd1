/**
 * The grouping worker's side (sqlite-grouping.ts has the stores'): a thread of the process that answers the
 * ledger requests of every SQLite store of the process, one at a time, each on a connection of that store's own,
 * opened at its first request and closed when the store closes. An in-memory store answers the same requests on
 * its own connection (`answer`).
 */
import { parentPort } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { LatestRead, REPEATED, RUN_TOP, replacedEntries } from './sqlite-latest-read.js';
import { deviceHistory, repeatedAmong, type Repeated } from './sqlite-ledger-read.js';
import type { DeviceHistoryRow } from './store.js';

/** This module, which the worker imports (the built one, or the TypeScript source under tsx). */
export const WORKER_ENTRY = import.meta.url;

/** The entries every device of which is in a later one of the step, of the run grouped in temp.grouped. */
const SUPERSEDED = `INSERT INTO temp.superseded SELECT seq FROM (${replacedEntries('temp.grouped')}) WHERE n >= size`;

/** Whether run `?` is kept (keepSuperseded). */
export const KEPT = 'SELECT 1 FROM ledger_superseded_runs WHERE run_id = ?';

/**
 * Keeps, once, the entries of an ended run every device of which has a later result in the step (a suspend's
 * accepted devices, once confirmed; a report's first attempts, once retried), so that its pages pass over them
 * (ledgerEntries). The run is grouped by device in temporary tables of the connection, which take no lock of the
 * file; only those entries, a few thousand at most, are written, with the mark of the run. Which result of a
 * device counts is read from the entries whose range holds it (sqlite-ledger-read.ts repeatedAmong), not kept.
 */
export function keepSuperseded(db: Database.Database, runId: string): void {
  if (db.prepare(KEPT).get(runId) !== undefined) return;
  const top = db.prepare(RUN_TOP).pluck();
  const seen = top.get(runId);
  db.exec(
    `CREATE TEMP TABLE IF NOT EXISTS grouped (step TEXT, device_id TEXT, seq INTEGER, seqs TEXT);
     CREATE TEMP TABLE IF NOT EXISTS superseded (seq INTEGER);
     DELETE FROM grouped; DELETE FROM superseded`,
  );
  db.prepare(`INSERT INTO temp.grouped ${REPEATED}`).run({ runId, step: null, top: null });
  db.prepare(SUPERSEDED).run();
  // A result that came after the run ended (Store.recordLate) while it was grouped: grouped again.
  const kept = db
    .transaction(() => {
      if (top.get(runId) !== seen) return false;
      db.prepare(
        'INSERT OR IGNORE INTO ledger_superseded (run_id, seq) SELECT ?, seq FROM temp.superseded',
      ).run(runId);
      db.prepare('INSERT OR IGNORE INTO ledger_superseded_runs (run_id) VALUES (?)').run(runId);
      return true;
    })
    .immediate();
  db.exec('DELETE FROM temp.grouped; DELETE FROM temp.superseded');
  if (!kept) keepSuperseded(db, runId);
}

/** What the worker is asked of a store's connection; `end` closes it. */
export type Op =
  | { op: 'repeated'; runId: string; keys: readonly string[] }
  | { op: 'keep'; runId: string }
  | { op: 'open'; runId: string; step?: string }
  | { op: 'page'; read: number; after?: { step: string; seq: number } }
  | { op: 'close'; read: number }
  | { op: 'history'; deviceId: string; limit: number }
  | { op: 'end' };
/** A request to the worker: `store` names the store (its connection), `file` the file it opens. */
export type Request = { id: number; store: number; file: string } & Op;
type Page = ReturnType<LatestRead['page']>;
export type Answer = {
  id: number;
  rows?: Repeated;
  read?: number;
  page?: Page;
  history?: DeviceHistoryRow[];
  error?: string;
};

/** The reads a connection has open (LatestRead), by number. */
class Reads {
  private readonly open = new Map<number, LatestRead>();
  private next = 0;

  constructor(private readonly db: Database.Database) {}

  begin(runId: string, step: string | undefined): number {
    const n = ++this.next;
    this.open.set(n, new LatestRead(this.db, runId, step));
    return n;
  }

  page(n: number, after?: { step: string; seq: number }): Page {
    const r = this.open.get(n);
    if (!r) throw new Error(`no read ${n} is open`);
    return r.page(after);
  }

  end(n: number): void {
    this.open.get(n)?.close();
    this.open.delete(n);
  }
}

/** A connection that answers requests, with what it keeps between them. */
export interface Connection {
  db: Database.Database;
  reads: Reads;
}

export const connection = (db: Database.Database): Connection => ({
  db,
  reads: new Reads(db),
});

/** What a request asks of a connection, answered. */
export function answer({ db, reads }: Connection, r: { id: number } & Exclude<Op, { op: 'end' }>): Answer {
  switch (r.op) {
    case 'keep':
      keepSuperseded(db, r.runId);
      return { id: r.id };
    case 'repeated':
      return { id: r.id, rows: repeatedAmong(db, r.runId, r.keys) };
    case 'open':
      return { id: r.id, read: reads.begin(r.runId, r.step) };
    case 'page':
      return { id: r.id, page: reads.page(r.read, r.after) };
    case 'close':
      reads.end(r.read);
      return { id: r.id };
    case 'history':
      return { id: r.id, history: deviceHistory(db, r.deviceId, r.limit) };
  }
}

/** A store's connection in the worker, on its file. */
function open(file: string): Connection {
  const db = new Database(file);
  db.pragma('busy_timeout = 5000');
  // A small page cache (and so sorter memory; a larger grouping spills to a temporary file): the worker runs
  // beside the process's own connection, in its memory, and a run's report is bound to stay within a few
  // hundred MB at a million devices (P7).
  db.pragma('cache_size = -2000');
  // A read's temporary tables (LatestRead) on disk too: a million devices' rows are not held in memory.
  db.pragma('temp_store = FILE');
  return connection(db);
}

/** The worker's side: a connection per store, answering the requests of them all one at a time. */
export function serveGrouping(): void {
  const stores = new Map<number, Connection>();
  parentPort?.on('message', (r: Request) => {
    let a: Answer;
    try {
      if (r.op === 'end') {
        // Its reads' temporary tables go with it.
        stores.get(r.store)?.db.close();
        stores.delete(r.store);
        a = { id: r.id };
      } else {
        let conn = stores.get(r.store);
        if (!conn) stores.set(r.store, (conn = open(r.file)));
        a = answer(conn, r);
      }
    } catch (e) {
      a = { id: r.id, error: (e as Error).message };
    }
    parentPort?.postMessage(a);
  });
}
