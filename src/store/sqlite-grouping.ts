/**
 * Grouping a run's ledger by device, off the event loop. An entry holds a group of devices; a device retried, or
 * confirmed after it was accepted, has several entries in a step, and the latest counts. Finding those devices
 * is a GROUP BY over every device of the run: most of a second for a million, which on the event loop would hold
 * every callback and run of the daemon that long. A worker thread with a connection of its own on the file does
 * it, and reads a device's history (the entries of every run that name it) there too. An in-memory store, which
 * no other connection can open, does it on its own connection.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker, parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { LatestRead, REPEATED, RUN_TOP, replacedEntries, type ReadPlan } from './sqlite-latest-read.js';
import { deviceHistory, repeatedAmong, type Repeated } from './sqlite-ledger-read.js';
import type { DeviceHistoryRow } from './store.js';

/** The entries every device of which is in a later one of the step, of the run grouped in temp.grouped. */
const SUPERSEDED = `INSERT INTO temp.superseded SELECT seq FROM (${replacedEntries('temp.grouped')}) WHERE n >= size`;

const KEPT = 'SELECT 1 FROM ledger_superseded_runs WHERE run_id = ?';

/**
 * Keeps, once, the entries of an ended run every device of which has a later result in the step (a suspend's
 * accepted devices, once confirmed; a report's first attempts, once retried), so that its pages pass over them
 * (ledgerEntries). The run is grouped by device in temporary tables of the connection, which take no lock of the
 * file; only those entries, a few thousand at most, are written, with the mark of the run. Which result of a
 * device counts is read from the entries whose range holds it (sqlite-ledger-read.ts repeatedAmong), not kept.
 */
function keepSuperseded(db: Database.Database, runId: string): void {
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

/** What the worker is asked. */
type Op =
  | { op: 'repeated'; runId: string; keys: readonly string[] }
  | { op: 'keep'; runId: string }
  | { op: 'open'; runId: string; step?: string }
  | { op: 'page'; read: number; after?: { step: string; seq: number } }
  | { op: 'close'; read: number }
  | { op: 'history'; deviceId: string; limit: number };
type Request = { id: number } & Op;
type Page = ReturnType<LatestRead['page']>;
type Answer = {
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
interface Connection {
  db: Database.Database;
  reads: Reads;
}

const connection = (db: Database.Database): Connection => ({
  db,
  reads: new Reads(db),
});

/** What a request asks of a connection, answered. */
function answer({ db, reads }: Connection, r: Request): Answer {
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

/** The worker's side: a connection on the file, answering requests one at a time. */
export function serveGrouping(): void {
  const db = new Database((workerData as { file: string }).file);
  db.pragma('busy_timeout = 5000');
  // A small page cache (and so sorter memory; a larger grouping spills to a temporary file): the worker runs
  // beside the process's own connection, in its memory, and a run's report is bound to stay within a few
  // hundred MB at a million devices (P7).
  db.pragma('cache_size = -2000');
  // A read's temporary tables (LatestRead) on disk too: a million devices' rows are not held in memory.
  db.pragma('temp_store = FILE');
  const conn = connection(db);
  parentPort?.on('message', (r: Request) => {
    let a: Answer;
    try {
      a = answer(conn, r);
    } catch (e) {
      a = { id: r.id, error: (e as Error).message };
    }
    parentPort?.postMessage(a);
  });
}

/**
 * Started as an evaluated script, which imports this module in the worker: the built one, or this TypeScript
 * source under tsx (the tests), whose loader a worker does not inherit and registers for itself. Only `import()`:
 * the script is a module when the process runs with `--input-type=module`, and `require` is then undefined.
 */
const BOOT = `(async () => {
  const { workerData } = await import('node:worker_threads');
  if (workerData.tsx) (await import(workerData.tsx)).register();
  (await import(workerData.entry)).serveGrouping();
})().catch((e) => { throw e; });`;

/** tsx's ESM API (the tests' loader), as its package exports it to `import`. */
function tsxApi(): string {
  const require = createRequire(import.meta.url);
  const pkg = require('tsx/package.json') as { exports: Record<string, { import: { default: string } }> };
  const api = pkg.exports['./esm/api']?.import.default ?? './dist/esm/api/index.mjs';
  return pathToFileURL(join(dirname(require.resolve('tsx/package.json')), api)).href;
}

/** How long a worker with nothing to do is kept: its memory (a heap, a page cache) is given back after. */
export const IDLE_MS = 5_000;

/**
 * The store's side: a worker started at a request, which does not keep the process alive, and ends once it has
 * had nothing to do for IDLE_MS.
 */
export class Grouping {
  private worker: Worker | undefined;
  private idle: NodeJS.Timeout | undefined;
  private next = 0;
  private readonly waiting = new Map<number, { resolve: (a: Answer) => void; reject: (e: Error) => void }>();
  /** Runs being kept, so that two pages of one run wait for one grouping. */
  private readonly keeping = new Map<string, Promise<void>>();
  /** An in-memory store's own connection, which answers its requests. */
  private readonly inlineConn: Connection;
  /** Reads open on the worker: it is kept while there are. */
  private reading = 0;
  /** Whether a run is kept, on the store's connection: asked at each lookup of a page, prepared once. */
  private readonly kept: Database.Statement<[string]>;

  /**
   * `db`: the store's own connection, which groups a file no other connection can open (`inline`: `:memory:`),
   * and otherwise only tells whether a run is kept already.
   */
  constructor(
    private readonly file: string,
    private readonly db: Database.Database,
    private readonly inline: boolean,
  ) {
    this.kept = db.prepare(KEPT);
    this.inlineConn = connection(db);
  }

  /**
   * A run's entries (of one step, or all) to read, a page at a time: their seqs, each with the devices a later
   * entry replaces, and none that a later entry replaces whole (LatestRead), grouped when the read begins, off
   * the event loop.
   */
  async *latest(runId: string, step?: string): AsyncGenerator<ReadPlan[]> {
    const ask = (r: Op) => (this.inline ? answer(this.inlineConn, { ...r, id: 0 } as Request) : this.ask(r));
    const read = (await ask({ op: 'open', runId, ...(step === undefined ? {} : { step }) })).read as number;
    this.reading++;
    try {
      let after: { step: string; seq: number } | undefined;
      for (;;) {
        const page = (await ask({ op: 'page', read, ...(after ? { after } : {}) })).page;
        if (!page?.last) return;
        yield page.plans;
        after = page.last;
      }
    } finally {
      this.reading--;
      // A worker stopped meanwhile took the read's tables with it.
      await Promise.resolve(ask({ op: 'close', read })).catch(() => undefined);
    }
  }

  /** Of the devices `keys` (`step\0device`) of the run, those with several results, to the seq that counts. */
  async repeatedAmong(runId: string, keys: readonly string[]): Promise<Map<string, number>> {
    const rows = this.inline
      ? repeatedAmong(this.db, runId, keys)
      : ((await this.ask({ op: 'repeated', runId, keys })).rows ?? []);
    const out = new Map<string, number>();
    for (const [s, device, seq] of rows) out.set(`${s}\0${device}`, seq);
    return out;
  }

  /** A device's result in every entry that names it, newest first, at most `limit` (Store.deviceHistory). */
  async deviceHistory(deviceId: string, limit: number): Promise<DeviceHistoryRow[]> {
    if (this.inline) return deviceHistory(this.db, deviceId, limit);
    return (await this.ask({ op: 'history', deviceId, limit })).history ?? [];
  }

  /** Keeps the run's superseded entries (keepSuperseded): at once when it has. */
  async keep(runId: string): Promise<void> {
    if (this.inline) return keepSuperseded(this.db, runId);
    if (this.kept.get(runId) !== undefined) return;
    let p = this.keeping.get(runId);
    if (!p) {
      p = this.ask({ op: 'keep', runId }).then(
        () => void this.keeping.delete(runId),
        (e: unknown) => {
          this.keeping.delete(runId);
          throw e;
        },
      );
      this.keeping.set(runId, p);
    }
    return p;
  }

  async close(): Promise<void> {
    clearTimeout(this.idle);
    const w = this.worker;
    this.worker = undefined;
    this.rejectAll(new Error(`the store ${this.file} is closed`));
    if (w) await w.terminate();
  }

  private rejectAll(e: Error): void {
    for (const x of this.waiting.values()) x.reject(e);
    this.waiting.clear();
  }

  private ask(r: Op): Promise<Answer> {
    clearTimeout(this.idle);
    const w = (this.worker ??= this.start());
    const id = ++this.next;
    if (this.waiting.size === 0) w.ref();
    return new Promise<Answer>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      w.postMessage({ ...r, id });
    }).finally(() => {
      if (this.waiting.size || this.reading) return;
      this.worker?.unref();
      this.idle = setTimeout(() => void this.close(), IDLE_MS).unref();
    });
  }

  private start(): Worker {
    const ts = import.meta.url.endsWith('.ts');
    const w = new Worker(BOOT, {
      eval: true,
      // Its work is SQLite's; what its heap holds lives for one answer. A small young generation keeps the
      // process's resident set small beside a run (P7).
      resourceLimits: { maxYoungGenerationSizeMb: 4 },
      workerData: {
        file: this.file,
        entry: import.meta.url,
        tsx: ts ? tsxApi() : undefined,
      },
    });
    w.unref();
    w.on('message', (a: Answer) => {
      const waiter = this.waiting.get(a.id);
      this.waiting.delete(a.id);
      if (a.error === undefined) waiter?.resolve(a);
      else waiter?.reject(new Error(`grouping the ledger of ${this.file}: ${a.error}`));
    });
    const fail = (e: Error) => {
      // A worker ended on purpose (idle, or the store closed) has nobody waiting.
      if (this.worker !== w) return;
      this.worker = undefined;
      this.rejectAll(e);
    };
    w.on('error', fail);
    w.on('exit', (code) => fail(new Error(`the ledger's grouping worker stopped (exit code ${code})`)));
    return w;
  }
}
