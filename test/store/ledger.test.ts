/**
 * The ledger on every backend: entries of devices grouped by result, read back a row per device with the latest
 * entry of each device counting, in the order the interface gives (deviceResults by step then device,
 * eachDeviceResult step after step in the order results came); the `device_results` view says the same in SQL.
 * SQLite alone: databases of schema 2 (a row per device) migrate with every row kept.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { groupResults } from '../../src/runner/devices.js';
import { MIGRATIONS, SqliteStore } from '../../src/store/sqlite.js';
import type { DeviceGroup, DeviceResult, LedgerRow, Store } from '../../src/store/store.js';
import { tempDir } from '../helpers/temp.js';
import { forEachBackend } from './backends.js';
import { allRows, imei, MISS, miss, ok, run } from './fixtures.js';

const sorted = (rows: LedgerRow[]) =>
  [...rows].sort((a, b) => a.step.localeCompare(b.step) || a.deviceId.localeCompare(b.deviceId));
const finished = (id: string, playbook: string, startedAt: string) =>
  run(id, { playbook, status: 'succeeded', startedAt });
const count = (rows: { n: number | string }[]) => Number(rows[0]?.n);

forEachBackend('the ledger', (b) => {
  let store: Store;
  beforeEach(async () => {
    store = await b.open();
    store.createRun(finished('r1', 'nightly', '2026-11-20T00:00:00.000Z'));
  });

  it('writes one entry per group of devices with the same result, and reads a row per device', async () => {
    const results = [...Array.from({ length: 500 }, (_, i) => ok(i)), miss(500), miss(501)];
    store.recordDevices('r1', 'report', groupResults(results), '2026-11-20T00:01:00.000Z');
    const rows = await store.deviceResults('r1');
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
    await store.durable();
    const entries = await b.query<{ n: number }>(store, 'SELECT CAST(count(*) AS INTEGER) AS n FROM ledger');
    expect(count(entries)).to.equal(2);
  });

  it('reads the entries a step recorded under request ids, in order, each with its outcome', async () => {
    const at = '2026-11-20T00:01:00.000Z';
    const under = (requestId: string, from: number, to: number) =>
      groupResults(Array.from({ length: to - from }, (_, i) => ({ ...ok(from + i), requestId })));
    store.recordDevices('r1', 'report', [...under('tx-1', 0, 1000), ...under('tx-2', 1000, 1500)], at);
    store.recordDevices('r1', 'report', under('tx-1', 1500, 1700), at);
    store.recordDevices('r1', 'other', under('tx-3', 0, 10), at);
    await store.durable();
    store.recordDevices('r1', 'report', [{ ...under('tx-2', 0, 5)[0]!, outcome: 'accepted' }], at);
    const found = await store.resultsUnder('r1', 'report', ['tx-1', 'tx-2', 'tx-3', 'tx-4']);
    // Entry by entry, in order, the accepted one too: a resumed step tells them apart by their outcome.
    expect(found.map((g) => [g.requestId, g.outcome, g.ids.length, g.ids[0]])).to.deep.equal([
      ['tx-1', 'succeeded', 1000, imei(0)],
      ['tx-2', 'succeeded', 500, imei(1000)],
      ['tx-1', 'succeeded', 200, imei(1500)],
      ['tx-2', 'accepted', 5, imei(0)],
    ]);
  });

  it('a later result of a device replaces the earlier one, in reads, queries and the view', async () => {
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
    const rows = await store.deviceResults('r1', 'report');
    expect(rows.map((r) => [r.deviceId, r.outcome, r.attempts])).to.deep.equal([
      [imei(1), 'succeeded', 1],
      [imei(2), 'succeeded', 2],
      [imei(3), 'failed', 1],
    ]);
    expect((await store.queryLedger({ errorTypes: [MISS] })).map((r) => r.deviceId)).to.deep.equal([imei(3)]);
    expect((await store.queryLedger({ outcome: 'succeeded' })).map((r) => r.deviceId)).to.deep.equal([
      imei(1),
      imei(2),
    ]);
    // eachDeviceResult reads the entries a few at a time, in the order they came; deviceResults, sorted.
    expect(sorted(await allRows(store.eachDeviceResult('r1')))).to.deep.equal(rows);
    await store.durable();
    expect(await view(store)).to.deep.equal(rows.map(viewRow));
  });

  it('a read of a run gives it as it was when the read began, each device once', async () => {
    // More entries than a page reads: the read is under way when a later result comes.
    for (let i = 0; i < 200; i++)
      store.recordDevices('r1', 'suspend', groupResults([ok(i)]), '2026-11-20T00:01:00.000Z');
    await store.durable();
    const read = store.eachDeviceResult('r1')[Symbol.asyncIterator]();
    const first = await read.next();
    expect(first.done).to.equal(false);
    const rows = [...(first.value as LedgerRow[])];
    expect(rows.length).to.be.lessThan(200);
    store.recordDevices('r1', 'suspend', groupResults([miss(150), miss(0)]), '2026-11-20T00:02:00.000Z');
    await store.durable();
    for (let r = await read.next(); !r.done; r = await read.next()) rows.push(...r.value);
    expect(rows.map((r) => r.deviceId)).to.deep.equal(Array.from({ length: 200 }, (_, i) => imei(i)));
    expect(rows.every((r) => r.outcome === 'succeeded')).to.equal(true);
    // A read that begins after it gives the later results.
    const after = await allRows(store.eachDeviceResult('r1'));
    expect(after.filter((r) => r.outcome === 'failed').map((r) => r.deviceId)).to.deep.equal([
      imei(150),
      imei(0),
    ]);
    expect(after).to.have.length(200);
  });

  it('of a device given twice in one write, the last result counts', async () => {
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
    const rows = await store.deviceResults('r1');
    expect(rows.map((r) => [r.deviceId, r.outcome, r.attempts])).to.deep.equal([
      [imei(1), 'succeeded', 3],
      [imei(2), 'succeeded', 1],
    ]);
    // eachDeviceResult reads the entries a few at a time, in the order they came; deviceResults, sorted.
    expect(sorted(await allRows(store.eachDeviceResult('r1')))).to.deep.equal(rows);
    await store.durable();
    expect(await view(store)).to.deep.equal(rows.map(viewRow));
  });

  it('queries by playbook, last runs, step and error type, oldest first', async () => {
    store.createRun(finished('r0', 'nightly', '2026-11-19T00:00:00.000Z'));
    store.createRun(finished('x1', 'other', '2026-11-20T00:00:00.000Z'));
    store.recordDevices('r0', 'report', groupResults([miss(7)]), '2026-11-19T00:01:00.000Z');
    store.recordDevices('r1', 'report', groupResults([miss(8), ok(7)]), '2026-11-20T00:01:00.000Z');
    store.recordDevices('r1', 'other-step', groupResults([miss(9)]), '2026-11-20T00:01:00.000Z');
    store.recordDevices('x1', 'report', groupResults([miss(10)]), '2026-11-20T00:01:00.000Z');
    const ids = (rows: LedgerRow[]) => rows.map((r) => `${r.runId}:${r.deviceId}`);
    expect(ids(await store.queryLedger({ playbook: 'nightly', errorTypes: [MISS] }))).to.deep.equal([
      `r0:${imei(7)}`,
      `r1:${imei(8)}`,
      `r1:${imei(9)}`,
    ]);
    expect(
      ids(await store.queryLedger({ playbook: 'nightly', lastRuns: 1, step: 'report', errorTypes: [MISS] })),
    ).to.deep.equal([`r1:${imei(8)}`]);
    expect(
      ids(await store.queryLedger({ since: '2026-11-20T00:00:00.000Z', outcome: 'failed' })),
    ).to.deep.equal([`r1:${imei(8)}`, `r1:${imei(9)}`, `x1:${imei(10)}`]);
  });

  it('the view agrees with the store on a mix of writes', async () => {
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
    const rows = await store.deviceResults('r1');
    expect(rows.length).to.be.greaterThan(400);
    // eachDeviceResult reads the entries a few at a time, in the order they came; deviceResults, sorted.
    expect(sorted(await allRows(store.eachDeviceResult('r1')))).to.deep.equal(rows);
    await store.durable();
    expect(await view(store)).to.deep.equal(rows.map(viewRow));
  });

  it('keeps the latest result of each of 3,000 devices, read back in the promised orders', async function () {
    this.timeout(60_000);
    const at = (w: number) => `2026-11-20T01:${String(w).padStart(2, '0')}:00.000Z`;
    const N = 3_000;
    const writes: { step: string; groups: DeviceGroup[] }[] = [];
    // `list`: every device once, by descending number, so that the order results came is not the ids' order.
    for (let hi = N; hi > 0; hi -= 500)
      writes.push({
        step: 'list',
        groups: [
          {
            kind: 'imei',
            outcome: 'succeeded',
            attempts: 1,
            ids: range(hi - 500, hi)
              .map(imei)
              .reverse(),
          },
        ],
      });
    // `suspend`: all accepted, then confirmed in groups of 100 (a third failed), then every seventh retried,
    // and the list step's first device listed again last.
    writes.push({
      step: 'suspend',
      groups: [
        { kind: 'imei', outcome: 'accepted', attempts: 1, requestId: 'req-0', ids: range(0, N).map(imei) },
      ],
    });
    for (let lo = 0; lo < N; lo += 100)
      writes.push({
        step: 'suspend',
        groups: [
          {
            kind: 'imei',
            outcome: 'succeeded',
            attempts: 1,
            requestId: 'req-0',
            ids: range(lo, lo + 100)
              .filter((n) => n % 3)
              .map(imei),
          },
          {
            kind: 'imei',
            outcome: 'failed',
            errorType: MISS,
            errorClass: 'retryable',
            attempts: 1,
            requestId: 'req-0',
            ids: range(lo, lo + 100)
              .filter((n) => n % 3 === 0)
              .map(imei),
          },
        ],
      });
    writes.push({
      step: 'suspend',
      groups: [
        {
          kind: 'imei',
          outcome: 'succeeded',
          attempts: 2,
          ids: range(0, N)
            .filter((n) => n % 7 === 0)
            .map(imei),
        },
      ],
    });
    writes.push({
      step: 'list',
      groups: [{ kind: 'imei', outcome: 'skipped', attempts: 0, ids: [imei(N - 1)] }],
    });
    // Some writes in a turn of their own, some with a checkpoint: the ledger is the same.
    for (const [w, { step, groups }] of writes.entries()) {
      if (w % 3 === 0) store.saveStep('r1', `${step}-${w}`, { w }, { step, groups, at: at(w) });
      else store.recordDevices('r1', step, groups, at(w));
      if (w % 5 === 0) await store.durable();
    }

    // Each device at its latest result, and at the place of that result in the order results came.
    const latest = new Map<string, Map<string, LedgerRow>>();
    for (const [w, { step, groups }] of writes.entries()) {
      const ofStep = latest.get(step) ?? latest.set(step, new Map()).get(step)!;
      for (const { ids, ...g } of groups)
        for (const deviceId of ids) {
          ofStep.delete(deviceId);
          ofStep.set(deviceId, {
            runId: 'r1',
            step,
            deviceId,
            kind: g.kind,
            outcome: g.outcome,
            attempts: g.attempts,
            at: at(w),
            ...(g.errorType !== undefined ? { errorType: g.errorType } : {}),
            ...(g.errorClass !== undefined ? { errorClass: g.errorClass } : {}),
            ...(g.requestId !== undefined ? { requestId: g.requestId } : {}),
          });
        }
    }
    const inOrderCame = [...latest.keys()].sort().flatMap((step) => [...latest.get(step)!.values()]);
    const key = (r: LedgerRow) => `${r.step}/${r.deviceId}`;
    expect(inOrderCame).to.have.length(2 * N);

    const rows = await store.deviceResults('r1');
    expect(rows).to.deep.equal(sorted(inOrderCame));
    const each = await allRows(store.eachDeviceResult('r1'));
    expect(each.map(key)).to.deep.equal(inOrderCame.map(key));
    expect(each).to.deep.equal(inOrderCame);
    const suspend = await allRows(store.eachDeviceResult('r1', 'suspend'));
    expect(suspend).to.deep.equal(inOrderCame.filter((r) => r.step === 'suspend'));
    expect(suspend.filter((r) => r.attempts === 2)).to.have.length(Math.ceil(N / 7));
    expect(suspend.filter((r) => r.outcome === 'accepted')).to.deep.equal([]);

    const failed = inOrderCame
      .filter((r) => r.outcome === 'failed')
      .sort((x, y) => x.at.localeCompare(y.at) || x.deviceId.localeCompare(y.deviceId));
    expect(failed.length).to.be.greaterThan(800);
    expect(await store.queryLedger({ outcome: 'failed' })).to.deep.equal(failed);
    expect(await store.queryLedger({ errorTypes: [MISS], step: 'suspend' })).to.deep.equal(failed);
    await store.durable();
    expect(await view(store)).to.deep.equal(rows.map(viewRow));
  });

  /** The `device_results` view of r1 in SQL, as other tools read it: its rows as the store's, sorted. */
  async function view(s: Store) {
    const rows = await b.query<ViewRow>(
      s,
      `SELECT run_id, step, device_id, kind, outcome, error_type, attempts, at FROM device_results
       WHERE run_id = 'r1'`,
    );
    return rows
      .map((r) => viewRow({ ...r, attempts: Number(r.attempts) }))
      .sort((x, y) => x.step.localeCompare(y.step) || x.device_id.localeCompare(y.device_id));
  }
});

interface ViewRow {
  run_id: string;
  step: string;
  device_id: string;
  kind: string;
  outcome: string;
  error_type: string | null;
  attempts: number;
  at: string;
}

function viewRow(r: LedgerRow | ViewRow): ViewRow {
  if ('run_id' in r) return r;
  return {
    run_id: r.runId,
    step: r.step,
    device_id: r.deviceId,
    kind: r.kind,
    outcome: r.outcome,
    error_type: r.errorType ?? null,
    attempts: r.attempts,
    at: r.at,
  };
}

function range(from: number, to: number): number[] {
  return Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i);
}

forEachBackend('a run read a device at a time', (b) => {
  let store: Store;
  beforeEach(async () => {
    store = await b.open();
    store.createRun(finished('r1', 'nightly', '2026-11-20T00:00:00.000Z'));
    store.createRun(finished('r2', 'nightly', '2026-11-20T00:00:00.000Z'));
  });

  it("gives each device's latest result once, step by step, while the store is written between pages", async () => {
    const at = '2026-11-20T00:01:00.000Z';
    // 300 entries in step `report` (more than one read's worth), the first 10 devices retried at the end.
    for (let n = 0; n < 300; n++) store.recordDevices('r1', 'report', groupResults([miss(n)]), at);
    store.recordDevices('r1', 'report', groupResults([...Array(10).keys()].map((n) => ok(n, 2))), at);
    store.recordDevices('r1', 'list', groupResults([ok(1000)]), at);
    const seen: string[] = [];
    for await (const page of store.eachDeviceResult('r1'))
      for (const r of page) {
        seen.push(`${r.step}:${r.deviceId}:${r.outcome}`);
        // Another run writes while this one is read: the read does not hold the store.
        store.recordDevices('r2', 'report', groupResults([ok(seen.length)]), at);
      }
    expect(seen).to.have.length(301);
    expect(seen[0]).to.equal(`list:${imei(1000)}:succeeded`);
    // The devices in the order their results came: the retried ones at their latest result.
    expect(seen.slice(1, 3)).to.deep.equal([`report:${imei(10)}:failed`, `report:${imei(11)}:failed`]);
    expect(seen.slice(-10)).to.deep.equal([...Array(10).keys()].map((n) => `report:${imei(n)}:succeeded`));
    expect((await allRows(store.eachDeviceResult('r1', 'list'))).map((r) => r.deviceId)).to.deep.equal([
      imei(1000),
    ]);
    // The writes made while reading are all there.
    expect(await store.deviceResults('r2')).to.have.length(301);
  });
});

forEachBackend("a step's items", (b) => {
  it('keeps chunks in order per step key, read after a given chunk, and cleared', async () => {
    const store = await b.open({ memory: true });
    store.createRun(run('r1'));
    store.appendItems('r1', 'devices', 0, [['imei', [imei(1), imei(2)]]]);
    store.appendItems('r1', 'devices', 1, [
      ['imei', [imei(3)]],
      ['iccid', ['89148000000000000001']],
    ]);
    store.appendItems('r1', 'loop[0].devices', 0, [['imei', [imei(9)]]]);
    expect(await store.itemChunks('r1', 'devices', -1, 10)).to.deep.equal([
      { seq: 0, runs: [['imei', [imei(1), imei(2)]]] },
      {
        seq: 1,
        runs: [
          ['imei', [imei(3)]],
          ['iccid', ['89148000000000000001']],
        ],
      },
    ]);
    expect((await store.itemChunks('r1', 'devices', 0, 10)).map((c) => c.seq)).to.deep.equal([1]);
    expect((await store.itemChunks('r1', 'devices', -1, 1)).map((c) => c.seq)).to.deep.equal([0]);
    store.clearItems('r1', 'devices');
    expect(await store.itemChunks('r1', 'devices', -1, 10)).to.deep.equal([]);
    expect(await store.itemChunks('r1', 'loop[0].devices', -1, 10)).to.have.length(1);
    await store.close();
  });
});

describe('SQLite: migration of a schema-2 ledger', () => {
  it('keeps every device row, and the store reads them as before', async () => {
    const file = join(tempDir('fleetbook-ledger-'), 'state.db');
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
      const rows = await store.deviceResults('r1');
      expect(
        rows.map((r) => [r.step, r.deviceId, r.outcome, r.errorType ?? null, r.attempts, r.at]),
      ).to.deep.equal([
        ['report', imei(1), 'succeeded', null, 1, '2026-11-20T00:01:00.000Z'],
        ['report', imei(2), 'succeeded', null, 2, '2026-11-20T00:02:00.000Z'],
        ['report', imei(3), 'failed', MISS, 2, '2026-11-20T00:02:00.000Z'],
        ['suspend', imei(1), 'succeeded', null, 1, '2026-11-20T00:01:00.000Z'],
      ]);
      expect(sorted(await allRows(store.eachDeviceResult('r1')))).to.deep.equal(rows);
      // The view says the same in SQL.
      expect(store.db.prepare('SELECT count(*) AS n FROM device_results').get()).to.deep.equal({ n: 4 });
    } finally {
      await store.close();
    }
  });
});
