/**
 * Opening a store, on every backend: it says where it is and whether replicas share it, and a store closed and
 * opened again has what was written. SQLite alone: a path that cannot be a state file is refused with the path
 * and the variable named.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { ConfigError } from '../../src/errors.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { fleetbook } from '../helpers/cli.js';
import { forEachBackend } from './backends.js';
import { run } from './fixtures.js';

forEachBackend('opening, closing and opening again', (b) => {
  it('says where the store is, never with a password, and whether replicas share it', async () => {
    const store = await b.open();
    const { names, secret } = b.where(store);
    expect(store.describe).to.include(names);
    if (secret) expect(store.describe).to.not.include(secret);
    expect(store.replicas).to.equal(b.replicas);
  });

  it('keeps what was written through a close, including the writes of the last turn', async () => {
    const store = await b.open();
    store.createRun(run('r1'));
    await store.durable();
    store.updateRun('r1', { status: 'succeeded', endedAt: '2026-11-23T10:01:00.000Z' });
    store.saveStep('r1', 'suspend', { status: 'done' });
    await store.close();
    const again = await b.reopen(store);
    expect(await again.getRun('r1')).to.deep.include({
      status: 'succeeded',
      endedAt: '2026-11-23T10:01:00.000Z',
    });
    expect(await again.loadSteps('r1')).to.deep.equal(new Map([['suspend', { status: 'done' }]]));
  });
});

describe('SQLite: opening the state file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fleetbook-open-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('a directory is refused with a ConfigError that names it, FLEETBOOK_STATE, and a file to give instead', () => {
    let error: unknown;
    try {
      void new SqliteStore(dir).close();
    } catch (e) {
      error = e;
    }
    expect(error).to.be.instanceOf(ConfigError);
    expect((error as Error).message).to.equal(
      `the state file ${dir} (FLEETBOOK_STATE) is a directory: give a file's path, such as ${join(dir, 'state.db')}`,
    );
  });

  it('a file below a file is refused the same way', async () => {
    const file = join(dir, 'state.db');
    await new SqliteStore(file).close();
    expect(() => new SqliteStore(join(file, 'inner.db'))).to.throw(
      ConfigError,
      `cannot open the state file ${join(file, 'inner.db')} (FLEETBOOK_STATE): `,
    );
  });

  it("keeps SQLite's own page cache, 2 MB, not the 16 MB better-sqlite3 builds it with", async () => {
    // A run of a million devices appends some 100 MB of ledger and items, and would fill a 16 MB cache with
    // pages it reads back once at most: 14 MB more of the process's resident set (bench P7).
    const store = new SqliteStore(join(dir, 'cache.db'));
    try {
      expect(store.db.pragma('cache_size', { simple: true })).to.equal(-2000);
    } finally {
      await store.close();
    }
  });

  it('the CLI says so in one line and exits non-zero (child process)', async function () {
    this.timeout(30_000);
    const r = await fleetbook(['runs', 'list'], { FLEETBOOK_STATE: dir });
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.equal(
      `fleetbook: the state file ${dir} (FLEETBOOK_STATE) is a directory: give a file's path, such as ${join(dir, 'state.db')}\n`,
    );
  });
});
