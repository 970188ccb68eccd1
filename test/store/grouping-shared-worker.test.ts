/**
 * The SQLite stores of one process share one grouping worker (src/store/sqlite-grouping.ts), each with a
 * connection of its own there: a worker costs its start, once per process rather than once per store. A store
 * that closes takes its connection and its reads with it, and its waiting requests; the other stores go on. A
 * worker that stops fails the requests of every store, and the next request starts another.
 */
import { execFile } from 'node:child_process';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { SqliteStore } from '../../src/store/sqlite.js';
import { allRows, group, imei, imeis, run } from './fixtures.js';

const execNode = promisify(execFile);
const AT = '2026-11-23T10:00:30.000Z';
/** Entries of run `r` in store A: several pages of a read (a page holds at most 32). */
const ENTRIES = 100;

/**
 * Runs `body` (module code, with `SqliteStore`, `started`, the Workers started, and files `A` and `B` in scope)
 * in a process of its own, whose workers are all the stores': what it prints, parsed.
 */
async function inProcess(dir: string, body: string): Promise<Record<string, unknown>> {
  const source = new URL('../../src/store/sqlite.ts', import.meta.url).href;
  const script = `import { subscribe } from 'node:diagnostics_channel';
    const { SqliteStore } = await import(${JSON.stringify(source)});
    const started = [];
    subscribe('worker_threads', ({ worker }) => started.push(worker));
    const A = ${JSON.stringify(join(dir, 'a.db'))};
    const B = ${JSON.stringify(join(dir, 'b.db'))};
    ${body}`;
  const { stdout } = await execNode(process.execPath, [
    '--import',
    'tsx',
    '--input-type=module',
    '-e',
    script,
  ]);
  return JSON.parse(stdout) as Record<string, unknown>;
}

/** Store A, with run `r` of ENTRIES entries, and store B, with run `q`, in `dir`: open. */
async function stores(dir: string): Promise<[SqliteStore, SqliteStore]> {
  const a = new SqliteStore(join(dir, 'a.db'));
  const b = new SqliteStore(join(dir, 'b.db'));
  a.createRun(run('r', { status: 'succeeded' }));
  for (let i = 0; i < ENTRIES; i++) a.recordDevices('r', 's', [group([imei(i)])], AT);
  b.createRun(run('q', { status: 'succeeded' }));
  b.recordDevices('q', 's', [group(imeis(1000, 1010))], AT);
  await Promise.all([a.durable(), b.durable()]);
  return [a, b];
}

describe('SQLite stores of one process: one grouping worker', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetbook-grouping-shared-'));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('one worker answers two stores; when it stops, both fail, and the next request starts one', async () => {
    await Promise.all((await stores(dir)).map((s) => s.close()));
    const h = (n: number) =>
      `(await ${n < 1000 ? 'a' : 'b'}.deviceHistory(${JSON.stringify(imei(n))}, 10)).length`;
    const out = await inProcess(
      dir,
      `const a = new SqliteStore(A);
       const b = new SqliteStore(B);
       // Asked of a worker not yet started: stopped before it answers.
       const waiting = [a.deviceHistory(${JSON.stringify(imei(1))}, 10), b.deviceHistory(${JSON.stringify(imei(1001))}, 10)];
       await started[0].terminate();
       const failed = (await Promise.allSettled(waiting)).map((s) => s.status === 'rejected' ? s.reason.message : 'answered');
       const rows = await Promise.all([(async () => ${h(1)})(), (async () => ${h(1001)})()]);
       rows.push(${h(1002)}, ${h(2)});
       await a.close();
       // B is left open: the worker, idle, does not keep the process alive.
       process.stdout.write(JSON.stringify({ failed, rows, started: started.length }));`,
    );
    expect(out.failed).to.have.length(2);
    for (const m of out.failed as string[])
      expect(m).to.match(/^the ledger's grouping worker stopped \(exit code \d+\)$/);
    // The one it stopped, and one for both stores after.
    expect(out).to.deep.include({ rows: [1, 1, 1, 1], started: 2 });
  });

  it("keeps a store's read open while another store closes, and answers it after", async () => {
    const [a, b] = await stores(dir);
    let c: SqliteStore | undefined;
    try {
      const pages = a.eachDeviceResult('r')[Symbol.asyncIterator]();
      const first = await pages.next();
      expect(first.done).to.equal(false);
      const rows = [...(first.value as unknown[])];
      expect(rows.length).to.be.lessThan(ENTRIES);
      expect(await b.deviceHistory(imei(1001), 10)).to.have.length(1);
      await b.close();
      for (let p = await pages.next(); !p.done; p = await pages.next()) rows.push(...p.value);
      expect(rows).to.have.length(ENTRIES);
      expect(await a.deviceHistory(imei(ENTRIES - 1), 10)).to.have.length(1);
      // B's file, opened again: a connection of its own again.
      c = new SqliteStore(join(dir, 'b.db'));
      expect(await c.deviceHistory(imei(1001), 10)).to.have.length(1);
    } finally {
      await a.close();
      await c?.close();
    }
  });

  it("fails only the closing store's waiting requests", async () => {
    const [a, b] = await stores(dir);
    try {
      const settled = Promise.allSettled([a.deviceHistory(imei(1), 10), b.deviceHistory(imei(1001), 10)]);
      await b.close();
      const [answered, failed] = await settled;
      expect(answered).to.have.property('status', 'fulfilled');
      expect((answered as PromiseFulfilledResult<unknown[]>).value).to.have.length(1);
      expect((failed as PromiseRejectedResult).reason).to.match(/the store .*b\.db is closed/);
      await expectRejected(b.deviceHistory(imei(1001), 10), /the store .*b\.db is closed/);
    } finally {
      await a.close();
    }
  });

  it('an in-memory store starts no worker', async () => {
    const started: unknown[] = [];
    const count = (m: unknown) => void started.push(m);
    subscribe('worker_threads', count);
    const memory = new SqliteStore(':memory:');
    try {
      memory.createRun(run('m', { status: 'succeeded' }));
      memory.recordDevices('m', 's', [group([imei(1)]), group([imei(1)], { outcome: 'failed' })], AT);
      expect(await allRows(memory.eachDeviceResult('m'))).to.have.length(1);
      expect(await memory.latestAmong('m', [`s\0${imei(1)}`])).to.have.property('size', 1);
      expect(await memory.deviceHistory(imei(1), 10)).to.have.length(2);
      expect(started).to.deep.equal([]);
    } finally {
      unsubscribe('worker_threads', count);
      await memory.close();
    }
  });
});

async function expectRejected(p: Promise<unknown>, message: RegExp): Promise<void> {
  const [settled] = await Promise.allSettled([p]);
  expect(settled).to.have.property('status', 'rejected');
  expect((settled as PromiseRejectedResult).reason).to.match(message);
}
