/**
 * The SQLite store groups a run's ledger by device (the devices with several results, and the one that counts;
 * of an ended run, the entries every device of which has a later result are kept) in a worker thread: a run of a million devices takes most of a second to group, which would otherwise hold the
 * process's event loop, and every callback and run with it. An in-memory store groups on its own connection.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { MIGRATIONS, SqliteStore } from '../../src/store/sqlite.js';
import type { DeviceGroup } from '../../src/store/store.js';
import { allRows, imei, run } from './fixtures.js';

const execNode = promisify(execFile);
const AT = '2026-11-23T10:00:30.000Z';
const N = 100_000;
const ids = Array.from({ length: N }, (_, i) => imei(i));
const group = (outcome: DeviceGroup['outcome'], from = 0): DeviceGroup => ({
  kind: 'imei',
  outcome,
  attempts: 1,
  ids: ids.slice(from),
});

/** `work`, and how many turns the event loop made before it was done. */
async function turnsDuring<T>(work: () => Promise<T>): Promise<{ value: T; turns: number }> {
  let turns = 0;
  let going = true;
  const turn = () => {
    turns++;
    if (going) setImmediate(turn);
  };
  setImmediate(turn);
  const value = await work();
  going = false;
  return { value, turns };
}

describe('SQLite store: grouping the ledger by device', () => {
  let dir: string;
  let store: SqliteStore;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetbook-grouping-'));
    store = new SqliteStore(join(dir, 'state.db'));
    store.createRun(run('r', { status: 'succeeded' }));
    // Every device accepted, then confirmed; the second half failed once more after that.
    store.recordDevices('r', 'suspend', [group('accepted')], AT);
    store.recordDevices('r', 'suspend', [group('succeeded')], AT);
    store.recordDevices('r', 'suspend', [group('failed', N / 2)], AT);
    await store.durable();
  });

  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps an ended run grouped while the event loop goes on, and reads the latest result of each device', async () => {
    const keys = [`suspend\0${imei(0)}`, `suspend\0${imei(N - 1)}`, `other\0${imei(0)}`];
    const { value, turns } = await turnsDuring(() => store.latestAmong('r', keys));
    expect(turns).to.be.greaterThan(0);
    const seqs = [...value.values()];
    expect(value.size).to.equal(2);
    expect(seqs[1]).to.equal((seqs[0] as number) + 1);
    // The accepted entry, every device of which has a later result: kept, and no row per device.
    const kept = store.db.prepare("SELECT count(*) FROM ledger_superseded WHERE run_id = 'r'").pluck().get();
    expect(kept).to.equal(1);
    expect(store.db.prepare('SELECT count(*) FROM ledger_latest').pluck().get()).to.equal(0);
  });

  it('reads every device of a run once, with its latest result, while the event loop goes on', async () => {
    const { value, turns } = await turnsDuring(() => allRows(store.eachDeviceResult('r')));
    expect(turns).to.be.greaterThan(0);
    expect(value).to.have.length(N);
    const failed = value.filter((r) => r.outcome === 'failed').length;
    expect([failed, value.length - failed]).to.deep.equal([N / 2, N / 2]);
  });

  it('in memory, on its own connection', async () => {
    const memory = new SqliteStore(':memory:');
    memory.createRun(run('r'));
    memory.recordDevices('r', 'suspend', [group('accepted'), group('succeeded', N - 10)], AT);
    // Of the devices asked for, those with several results.
    const asked = [N - 1, N - 11, 0].map((n) => `suspend\0${imei(n)}`);
    const repeated = await memory.repeatedAmong('r', [...asked, `other\0${imei(N - 1)}`]);
    expect([...repeated.keys()]).to.have.members(asked.slice(0, 1));
    const latest = await memory.latestAmong('r', [`suspend\0${imei(N - 1)}`, `suspend\0${imei(0)}`]);
    expect(latest.size).to.equal(1);
    await memory.close();
  });
});

describe('SQLite store: a state file whose ended runs were grouped by device, upgraded', () => {
  it('keeps their superseded entries, and drops the row per device', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fleetbook-grouping-'));
    try {
      const file = join(dir, 'state.db');
      const old = new Database(file);
      const before = MIGRATIONS.findIndex((m) => m.includes('ledger_superseded_runs'));
      for (const [i, sql] of MIGRATIONS.slice(0, before).entries()) {
        old.exec(sql);
        old.pragma(`user_version = ${i + 1}`);
      }
      old.exec(`INSERT INTO runs (id, playbook, status, started_at) VALUES ('r', 'pb', 'succeeded', '${AT}');
        INSERT INTO ledger (seq, run_id, step, kind, outcome, attempts, at, device_ids, min_id, max_id)
          VALUES (1, 'r', 's', 'imei', 'accepted', 1, '${AT}', '["${imei(1)}","${imei(2)}"]', '${imei(1)}', '${imei(2)}'),
                 (2, 'r', 's', 'imei', 'succeeded', 1, '${AT}', '["${imei(1)}","${imei(2)}"]', '${imei(1)}', '${imei(2)}');
        INSERT INTO ledger_latest VALUES ('r', 's', '${imei(1)}', 2), ('r', 's', '${imei(2)}', 2);
        INSERT INTO ledger_latest_runs VALUES ('r');
        INSERT INTO ledger_superseded VALUES ('r', 1);`);
      old.close();
      const store = new SqliteStore(file);
      try {
        expect(store.db.prepare('SELECT count(*) FROM ledger_latest').pluck().get()).to.equal(0);
        expect(store.db.prepare('SELECT run_id FROM ledger_superseded_runs').pluck().all()).to.deep.equal([
          'r',
        ]);
        const latest = await store.latestAmong('r', [`s\0${imei(1)}`, `s\0${imei(2)}`]);
        expect([...latest.values()]).to.deep.equal([2, 2]);
        // The page passes over the superseded entry, as before.
        expect((await store.ledgerEntries('r', {}, undefined, 10)).map((e) => e.seq)).to.deep.equal([2]);
      } finally {
        await store.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('SQLite store: the worker thread in a process whose evaluated code is a module', () => {
  it('starts, and reads the ledger (node --input-type=module -e)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fleetbook-grouping-'));
    try {
      const store = new SqliteStore(join(dir, 'state.db'));
      store.createRun(run('r'));
      store.recordDevices(
        'r',
        's',
        [{ kind: 'imei', outcome: 'succeeded', attempts: 1, ids: [imei(1)] }],
        AT,
      );
      await store.close();
      const source = new URL('../../src/store/sqlite.ts', import.meta.url).href;
      const script = `const { SqliteStore } = await import(${JSON.stringify(source)});
        const store = new SqliteStore(${JSON.stringify(join(dir, 'state.db'))});
        const history = await store.deviceHistory(${JSON.stringify(imei(1))}, 10);
        await store.close();
        process.stdout.write(String(history.length));`;
      const { stdout } = await execNode(process.execPath, [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        script,
      ]);
      expect(stdout).to.equal('1');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
