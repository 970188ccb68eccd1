/**
 * Grouping a run's ledger by device, off the event loop. An entry holds a group of devices; a device retried, or
 * confirmed after it was accepted, has several entries in a step, and the latest counts. Finding those devices
 * is a GROUP BY over every device of the run: most of a second for a million, which on the event loop would hold
 * every callback and run of the daemon that long. A worker thread does it, on a connection of the store's own on
 * the file (sqlite-grouping-worker.ts), and reads a device's history (the entries of every run that name it)
 * there too. An in-memory store, which no other connection can open, does it on its own connection.
 *
 * The stores of one process share one worker, each with its connection there: a worker costs its start (a
 * thread, a heap, the modules loaded again: most of a second of CPU from the TypeScript sources), paid once
 * rather than per store. It answers one request at a time, so one long grouping (a run of a million devices)
 * delays a page of another store of the process; a daemon has one store, for which nothing changes.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import type { ReadPlan } from './sqlite-latest-read.js';
import { deviceHistory, repeatedAmong } from './sqlite-ledger-read.js';
import {
  KEPT,
  WORKER_ENTRY,
  answer,
  connection,
  keepSuperseded,
  type Answer,
  type Connection,
  type Op,
} from './sqlite-grouping-worker.js';
import type { DeviceHistoryRow } from './store.js';

/**
 * Started as an evaluated script, which imports the worker's module: the built one, or the TypeScript source
 * under tsx (the tests), whose loader a worker does not inherit and registers for itself. Only `import()`: the
 * script is a module when the process runs with `--input-type=module`, and `require` is then undefined.
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

/** A request waiting for the worker's answer, of a store. */
interface Waiter {
  store: number;
  file: string;
  resolve: (a: Answer) => void;
  reject: (e: Error) => void;
}

/**
 * The process's worker: started at a request, kept while a request waits or a read is open (and then only it
 * keeps the process alive), ended once it has had nothing to do for IDLE_MS. A worker that stops (an error, an
 * exit) fails every request waiting, of every store; the next request starts another.
 */
class GroupingWorker {
  private worker: Worker | undefined;
  private idle: NodeJS.Timeout | undefined;
  private next = 0;
  private readonly waiting = new Map<number, Waiter>();
  /** The stores with a connection in the worker. */
  private readonly connected = new Set<number>();
  /** The reads open in the worker, each of its store. */
  private readonly reads = new Map<object, number>();

  /** Asks the worker, on the connection of `store` (opened on `file` at its first request). */
  ask(store: number, file: string, r: Op): Promise<Answer> {
    const a = this.post(store, file, r);
    this.connected.add(store);
    return a;
  }

  /** A read of `store` begins: the worker is kept until `end` (which tells whether it is still open there). */
  reading(store: number): { end: () => boolean } {
    const read = {};
    this.reads.set(read, store);
    return { end: () => this.reads.delete(read) };
  }

  /**
   * Closes the connection of `store` in the worker (and its reads), failing the store's requests that wait. The
   * worker goes on for the other stores, and idles out otherwise; it is ended at once when it was working for
   * this store alone, which would otherwise be waited for.
   */
  async close(store: number, file: string): Promise<void> {
    let mine = false;
    for (const [id, x] of this.waiting) {
      if (x.store !== store) continue;
      mine = true;
      this.waiting.delete(id);
      x.reject(new Error(`the store ${file} is closed`));
    }
    for (const [read, s] of this.reads) if (s === store) this.reads.delete(read);
    if (!this.connected.delete(store)) return;
    if (mine && this.connected.size === 0) return this.end();
    await this.post(store, file, { op: 'end' }).catch(() => undefined);
  }

  private post(store: number, file: string, r: Op): Promise<Answer> {
    clearTimeout(this.idle);
    const w = (this.worker ??= this.start());
    const id = ++this.next;
    if (this.waiting.size === 0) w.ref();
    return new Promise<Answer>((resolve, reject) => {
      this.waiting.set(id, { store, file, resolve, reject });
      w.postMessage({ ...r, id, store, file });
    }).finally(() => {
      if (this.waiting.size || this.reads.size) return;
      this.worker?.unref();
      clearTimeout(this.idle);
      this.idle = setTimeout(() => void this.end(), IDLE_MS).unref();
    });
  }

  /**
   * Ends the worker on purpose: idle, or working for a store that closed and no other. What still waits then is
   * only another closing store's `end`, whose connection goes with the worker.
   */
  private async end(): Promise<void> {
    clearTimeout(this.idle);
    const w = this.worker;
    this.worker = undefined;
    this.connected.clear();
    this.reads.clear();
    for (const x of this.waiting.values()) x.reject(new Error(`the store ${x.file} is closed`));
    this.waiting.clear();
    if (w) await w.terminate();
  }

  private start(): Worker {
    const w = new Worker(BOOT, {
      eval: true,
      // Its work is SQLite's; what its heap holds lives for one answer. A small young generation keeps the
      // process's resident set small beside a run (P7).
      resourceLimits: { maxYoungGenerationSizeMb: 4 },
      workerData: {
        entry: WORKER_ENTRY,
        tsx: WORKER_ENTRY.endsWith('.ts') ? tsxApi() : undefined,
      },
    });
    w.unref();
    w.on('message', (a: Answer) => {
      const waiter = this.waiting.get(a.id);
      this.waiting.delete(a.id);
      if (a.error === undefined) waiter?.resolve(a);
      else waiter?.reject(new Error(`grouping the ledger of ${waiter?.file}: ${a.error}`));
    });
    const fail = (e: Error) => {
      // A worker ended on purpose has nobody waiting.
      if (this.worker !== w) return;
      this.worker = undefined;
      // Every store's connection and reads went with it.
      this.connected.clear();
      this.reads.clear();
      for (const x of this.waiting.values()) x.reject(e);
      this.waiting.clear();
    };
    w.on('error', fail);
    w.on('exit', (code) => fail(new Error(`the ledger's grouping worker stopped (exit code ${code})`)));
    return w;
  }
}

const worker = new GroupingWorker();

/** Stores named in the worker's requests. */
let stores = 0;

/** A store's side: its requests to the process's worker, or to its own connection when it is in memory. */
export class Grouping {
  /** The store, to the worker. */
  private readonly store = ++stores;
  private closed = false;
  /** Runs being kept, so that two pages of one run wait for one grouping. */
  private readonly keeping = new Map<string, Promise<void>>();
  /** An in-memory store's own connection, which answers its requests. */
  private readonly inlineConn: Connection;
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
    const ask = (r: Exclude<Op, { op: 'end' }>) =>
      this.inline ? answer(this.inlineConn, { ...r, id: 0 }) : this.ask(r);
    const reading = this.inline ? undefined : worker.reading(this.store);
    let read: number | undefined;
    try {
      read = (await ask({ op: 'open', runId, ...(step === undefined ? {} : { step }) })).read as number;
      let after: { step: string; seq: number } | undefined;
      for (;;) {
        const page = (await ask({ op: 'page', read, ...(after ? { after } : {}) })).page;
        if (!page?.last) return;
        yield page.plans;
        after = page.last;
      }
    } finally {
      // A worker stopped meanwhile, or the store closed, took the read's tables with it.
      const open = reading ? reading.end() : true;
      if (read !== undefined && open)
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

  /** Closes the store's connection in the worker, failing its requests that wait; other stores go on. */
  async close(): Promise<void> {
    this.closed = true;
    if (!this.inline) await worker.close(this.store, this.file);
  }

  private ask(r: Op): Promise<Answer> {
    if (this.closed) return Promise.reject(new Error(`the store ${this.file} is closed`));
    return worker.ask(this.store, this.file, r);
  }
}
