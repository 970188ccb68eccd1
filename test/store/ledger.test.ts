/**
 * The ledger in SQLite: entries of devices grouped by result, read back a row per device with the latest entry
 * of each device counting; the `device_results` view says the same in SQL; databases of schema 2 (a row per
 * device) migrate with every row kept.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { groupResults } from '../../src/runner/devices.js';
import { MIGRATIONS, SqliteStore } from '../../src/store/sqlite.js';
import type { DeviceResult, LedgerRow, RunRecord } from '../../src/store/store.js';

const MISS = 'SVC CACHE UNAVAILABLE';
const sorted = (rows: LedgerRow[]) =>
  [...rows].sort((a, b) => a.step.localeCompare(b.step) || a.deviceId.localeCompare(b.deviceId));
const imei = (n: number) => `35345678${String(n).padStart(7, '0')}`;
const ok = (n: number, attempts = 1): DeviceResult => ({
  deviceId: imei(n),
  kind: 'imei',
  outcome: 'succeeded',
  attempts,
});
const miss = (n: number): DeviceResult => ({
  deviceId: imei(n),
  kind: 'imei',
  outcome: 'failed',
  errorType: MISS,
  errorClass: 'retryable',
  attempts: 1,
});

function run(id: string, playbook: string, startedAt: string): RunRecord {
  return { id, playbook, status: 'succeeded', trigger: { manual: true }, inputs: {}, startedAt };
}

function tempFile(): string {
  return join(mkdtempSync(join(tmpdir(), 'fleetbook-ledger-')), 'state.db');
}

describe('store: the ledger', () => {
  let store: SqliteStore;
  beforeEach(() => {
    store = new SqliteStore(':memory:');
    store.createRun(run('r1', 'nightly', '2026-11-20T00:00:00.000Z'));
  });
  afterEach(() => store.close());

  it('writes one entry per group of devices with the same result, and reads a row per device', () => {
    const results = [...Array.from({ length: 500 }, (_, i) => ok(i)), miss(500), miss(501)];
    store.recordDevices('r1', 'report', groupResults(results), '2026-11-20T00:01:00.000Z');
    const entries = store.db.prepare('SELECT count(*) AS n FROM ledger').get() as { n: number };
    expect(entries.n).to.equal(2);
    const rows = store.deviceResults('r1');
    expect(rows).to.have.length(502);
    expect(rows[0]).to.deep.equal({
      runId: 'r1',
      step: 'report',
      deviceId: imei(0),
      kind: 'imei',
      outcome: 'succeeded',
      attempts: 1,
      at: '2026-11-20T00:01:00.000Z',
    });
    expect(rows.filter((r) => r.errorType === MISS).map((r) => r.deviceId)).to.deep.equal([
      imei(500),
      imei(501),
    ]);
  });

  it('a later result of a device replaces the earlier one, in reads, queries and the view', () => {
    store.recordDevices('r1', 'report', groupResults([ok(1), miss(2), miss(3)]), '2026-11-20T00:01:00.000Z');
    store.saveStep(
      'r1',
      'report',
      { done: true },
      {
        step: 'report',
        groups: groupResults([ok(2, 2)]),
        at: '2026-11-20T00:02:00.000Z',
      },
    );
    const rows = store.deviceResults('r1', 'report');
    expect(rows.map((r) => [r.deviceId, r.outcome, r.attempts])).to.deep.equal([
      [imei(1), 'succeeded', 1],
      [imei(2), 'succeeded', 2],
      [imei(3), 'failed', 1],
    ]);
    expect(store.queryLedger({ errorTypes: [MISS] }).map((r) => r.deviceId)).to.deep.equal([imei(3)]);
    expect(store.queryLedger({ outcome: 'succeeded' }).map((r) => r.deviceId)).to.deep.equal([
      imei(1),
      imei(2),
    ]);
    // eachDeviceResult reads the entries a few at a time, in the order they came; deviceResults, sorted.
    expect(sorted([...store.eachDeviceResult('r1')])).to.deep.equal(rows);
  });

  it('of a device given twice in one write, the last result counts', () => {
    // Groups as they come, the device in two of them: the later group counts.
    store.recordDevices(
      'r1',
      'suspend',
      [
        {
          kind: 'imei',
          outcome: 'failed',
          errorType: MISS,
          errorClass: 'retryable',
          attempts: 1,
          ids: [imei(1)],
        },
        { kind: 'imei', outcome: 'succeeded', attempts: 1, ids: [imei(2)] },
        { kind: 'imei', outcome: 'succeeded', attempts: 3, ids: [imei(1)] },
      ],
      '2026-11-20T00:01:00.000Z',
    );
    const rows = store.deviceResults('r1');
    expect(rows.map((r) => [r.deviceId, r.outcome, r.attempts])).to.deep.equal([
      [imei(1), 'succeeded', 3],
      [imei(2), 'succeeded', 1],
    ]);
    // eachDeviceResult reads the entries a few at a time, in the order they came; deviceResults, sorted.
    expect(sorted([...store.eachDeviceResult('r1')])).to.deep.equal(rows);
  });

  it('queries by playbook, last runs, step and error type, oldest first', () => {
    store.createRun(run('r0', 'nightly', '2026-11-19T00:00:00.000Z'));
    store.createRun(run('x1', 'other', '2026-11-20T00:00:00.000Z'));
    store.recordDevices('r0', 'report', groupResults([miss(7)]), '2026-11-19T00:01:00.000Z');
    store.recordDevices('r1', 'report', groupResults([miss(8), ok(7)]), '2026-11-20T00:01:00.000Z');
    store.recordDevices('r1', 'other-step', groupResults([miss(9)]), '2026-11-20T00:01:00.000Z');
    store.recordDevices('x1', 'report', groupResults([miss(10)]), '2026-11-20T00:01:00.000Z');
    const ids = (rows: LedgerRow[]) => rows.map((r) => `${r.runId}:${r.deviceId}`);
    expect(ids(store.queryLedger({ playbook: 'nightly', errorTypes: [MISS] }))).to.deep.equal([
      `r0:${imei(7)}`,
      `r1:${imei(8)}`,
      `r1:${imei(9)}`,
    ]);
    expect(
      ids(store.queryLedger({ playbook: 'nightly', lastRuns: 1, step: 'report', errorTypes: [MISS] })),
    ).to.deep.equal([`r1:${imei(8)}`]);
    expect(ids(store.queryLedger({ since: '2026-11-20T00:00:00.000Z', outcome: 'failed' }))).to.deep.equal([
      `r1:${imei(8)}`,
      `r1:${imei(9)}`,
      `x1:${imei(10)}`,
    ]);
  });

  it('the view agrees with the store on a mix of writes', () => {
    // Deterministic: each write takes every device whose number falls on its stride.
    for (let w = 0; w < 12; w++) {
      const results: DeviceResult[] = [];
      for (let n = w % 5; n < 300; n += 1 + (w % 4)) results.push(w % 3 === 0 ? miss(n) : ok(n, 1 + (w % 3)));
      store.recordDevices(
        'r1',
        w % 2 ? 'a' : 'b',
        groupResults(results),
        `2026-11-20T00:${String(w).padStart(2, '0')}:00.000Z`,
      );
    }
    const rows = store.deviceResults('r1');
    expect(rows.length).to.be.greaterThan(400);
    // eachDeviceResult reads the entries a few at a time, in the order they came; deviceResults, sorted.
    expect(sorted([...store.eachDeviceResult('r1')])).to.deep.equal(rows);
  });
});

describe('store: a run read a device at a time', () => {
  let store: SqliteStore;
  beforeEach(() => {
    store = new SqliteStore(join(mkdtempSync(join(tmpdir(), 'fb-each-')), 'state.db'));
    store.createRun(run('r1', 'nightly', '2026-11-20T00:00:00.000Z'));
  });
  afterEach(() => store.close());

  it("gives each device's latest result once, step by step, while the store is written between rows", () => {
    const at = '2026-11-20T00:01:00.000Z';
    // 300 entries in step `report` (more than one read's worth), the first 10 devices retried at the end.
    for (let n = 0; n < 300; n++) store.recordDevices('r1', 'report', groupResults([miss(n)]), at);
    store.recordDevices('r1', 'report', groupResults([...Array(10).keys()].map((n) => ok(n, 2))), at);
    store.recordDevices('r1', 'list', groupResults([ok(1000)]), at);
    const seen: string[] = [];
    for (const r of store.eachDeviceResult('r1')) {
      seen.push(`${r.step}:${r.deviceId}:${r.outcome}`);
      // Another run writes while this one is read: the read does not hold the connection.
      store.recordDevices('r2', 'report', groupResults([ok(seen.length)]), at);
    }
    expect(seen).to.have.length(301);
    expect(seen[0]).to.equal(`list:${imei(1000)}:succeeded`);
    // The devices in the order their results came: the retried ones at their latest result.
    expect(seen.slice(1, 3)).to.deep.equal([`report:${imei(10)}:failed`, `report:${imei(11)}:failed`]);
    expect(seen.slice(-10)).to.deep.equal([...Array(10).keys()].map((n) => `report:${imei(n)}:succeeded`));
    expect([...store.eachDeviceResult('r1', 'list')].map((r) => r.deviceId)).to.deep.equal([imei(1000)]);
  });
});

describe("store: a step's items", () => {
  it('keeps chunks in order per step key, read after a given chunk, and cleared', () => {
    const store = new SqliteStore(':memory:');
    store.appendItems('r1', 'devices', 0, [['imei', [imei(1), imei(2)]]]);
    store.appendItems('r1', 'devices', 1, [
      ['imei', [imei(3)]],
      ['iccid', ['89148000000000000001']],
    ]);
    store.appendItems('r1', 'loop[0].devices', 0, [['imei', [imei(9)]]]);
    expect(store.itemChunks('r1', 'devices', -1, 10)).to.deep.equal([
      { seq: 0, runs: [['imei', [imei(1), imei(2)]]] },
      {
        seq: 1,
        runs: [
          ['imei', [imei(3)]],
          ['iccid', ['89148000000000000001']],
        ],
      },
    ]);
    expect(store.itemChunks('r1', 'devices', 0, 10).map((c) => c.seq)).to.deep.equal([1]);
    expect(store.itemChunks('r1', 'devices', -1, 1).map((c) => c.seq)).to.deep.equal([0]);
    store.clearItems('r1', 'devices');
    expect(store.itemChunks('r1', 'devices', -1, 10)).to.deep.equal([]);
    expect(store.itemChunks('r1', 'loop[0].devices', -1, 10)).to.have.length(1);
    store.close();
  });
});

describe('store: migration of a schema-2 ledger', () => {
  it('keeps every device row, and the store reads them as before', () => {
    const file = tempFile();
    const old = new Database(file);
    for (const [i, sql] of MIGRATIONS.slice(0, 2).entries()) {
      old.exec(sql);
      old.pragma(`user_version = ${i + 1}`);
    }
    old
      .prepare(
        `INSERT INTO runs (id, playbook, status, started_at) VALUES ('r1', 'nightly', 'succeeded', '2026-11-20T00:00:00.000Z')`,
      )
      .run();
    const insert = old.prepare(
      `INSERT INTO device_results (run_id, step, device_id, kind, outcome, error_type, error_class, attempts, at)
       VALUES ('r1', ?, ?, 'imei', ?, ?, ?, ?, ?)`,
    );
    insert.run('report', imei(1), 'succeeded', null, null, 1, '2026-11-20T00:01:00.000Z');
    insert.run('report', imei(2), 'succeeded', null, null, 2, '2026-11-20T00:02:00.000Z');
    insert.run('report', imei(3), 'failed', MISS, 'retryable', 2, '2026-11-20T00:02:00.000Z');
    insert.run('suspend', imei(1), 'succeeded', null, null, 1, '2026-11-20T00:01:00.000Z');
    old.close();

    const store = new SqliteStore(file);
    try {
      expect(store.db.pragma('user_version', { simple: true })).to.equal(MIGRATIONS.length);
      const rows = store.deviceResults('r1');
      expect(
        rows.map((r) => [r.step, r.deviceId, r.outcome, r.errorType ?? null, r.attempts, r.at]),
      ).to.deep.equal([
        ['report', imei(1), 'succeeded', null, 1, '2026-11-20T00:01:00.000Z'],
        ['report', imei(2), 'succeeded', null, 2, '2026-11-20T00:02:00.000Z'],
        ['report', imei(3), 'failed', MISS, 2, '2026-11-20T00:02:00.000Z'],
        ['suspend', imei(1), 'succeeded', null, 1, '2026-11-20T00:01:00.000Z'],
      ]);
      expect(sorted([...store.eachDeviceResult('r1')])).to.deep.equal(rows);
      // The view says the same in SQL.
      expect(store.db.prepare('SELECT count(*) AS n FROM device_results').get()).to.deep.equal({ n: 4 });
    } finally {
      store.close();
    }
  });
});
