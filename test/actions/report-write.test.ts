/**
 * `report.write` on its own, over a real SQLite store seeded with ledger entries: the columns of per-device
 * results (the request id, then the keys of each device's data), the columns a step names, and a report of
 * 100,000 devices written a chunk at a time.
 */
import { expect } from 'chai';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkEngineInput, runEngineAction, type EngineContext } from '../../src/actions/executors.js';
import { listTable, pick, reportText } from '../../src/actions/report-table.js';
import { engineSettings } from '../../src/actions/settings.js';
import { systemClock } from '../../src/clock.js';
import { silentLogger } from '../../src/log.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { DeviceGroup } from '../../src/store/store.js';
import { csvObjects } from '../helpers/csv.js';

const AT = '2026-11-23T02:00:00.000Z';

describe('report.write: per-device results and their data', () => {
  let store: SqliteStore;
  let dir: string;
  let context: EngineContext;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetbook-report-'));
    store = new SqliteStore(':memory:');
    store.createRun({ id: 'r1', playbook: 'p', status: 'running', trigger: {}, inputs: {}, startedAt: AT });
    context = {
      store,
      runId: 'r1',
      playbook: 'p',
      logger: silentLogger,
      clock: systemClock,
      ledger: (step) => store.eachDeviceResult('r1', step),
      settings: engineSettings({ reportsDir: dir }),
    };
  });
  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  const write = (input: Record<string, unknown>) =>
    runEngineAction(checkEngineInput('report.write', input), context);
  const read = (name: string) => readFile(join(dir, name), 'utf8');

  it('writes requestId and one column per data key after the ledger columns; errors have no data', async () => {
    const located: DeviceGroup = {
      kind: 'imei',
      outcome: 'succeeded',
      attempts: 1,
      ids: ['1', '2'],
      data: [
        { latitude: 40.1, longitude: -74.2, radius: 75, time: '2026-11-23T01:59:00Z', cached: true },
        // A key of its own, and one named like a ledger column: it becomes `data.step`.
        { latitude: 41, longitude: -75, radius: 90, time: '2026-11-23T02:00:00Z', cached: false, step: 'x' },
      ],
    };
    store.recordDevices(
      'r1',
      'locate',
      [
        located,
        {
          kind: 'imei',
          outcome: 'failed',
          errorType: 'ABSENT SUBSCRIBER',
          errorClass: 'transient',
          attempts: 2,
          ids: ['3'],
        },
      ],
      AT,
    );
    store.recordDevices(
      'r1',
      'suspend',
      [{ kind: 'imei', outcome: 'accepted', attempts: 1, requestId: 'req-7', ids: ['1'] }],
      AT,
    );

    expect(await write({ path: 'locate.csv', step: 'locate' })).to.deep.include({ rows: 3, format: 'csv' });
    const csv = csvObjects(await read('locate.csv'));
    expect(csv.header).to.deep.equal([
      ...['runId', 'step', 'deviceId', 'kind', 'outcome', 'errorType', 'errorClass', 'attempts', 'at'],
      ...['requestId', 'latitude', 'longitude', 'radius', 'time', 'cached', 'data.step'],
    ]);
    const empty = {
      requestId: '',
      latitude: '',
      longitude: '',
      radius: '',
      time: '',
      cached: '',
      'data.step': '',
    };
    const ledger = (id: string, outcome: string, attempts: string) => ({
      runId: 'r1',
      step: 'locate',
      deviceId: id,
      kind: 'imei',
      outcome,
      errorType: '',
      errorClass: '',
      attempts,
      at: AT,
    });
    expect(csv.rows).to.deep.equal([
      {
        ...ledger('1', 'succeeded', '1'),
        ...empty,
        ...{
          latitude: '40.1',
          longitude: '-74.2',
          radius: '75',
          time: '2026-11-23T01:59:00Z',
          cached: 'true',
        },
      },
      {
        ...ledger('2', 'succeeded', '1'),
        ...{ requestId: '', latitude: '41', longitude: '-75', radius: '90', time: '2026-11-23T02:00:00Z' },
        ...{ cached: 'false', 'data.step': 'x' },
      },
      { ...ledger('3', 'failed', '2'), errorType: 'ABSENT SUBSCRIBER', errorClass: 'transient', ...empty },
    ]);

    // The whole run: the device-state step's row has its request id, and no data.
    await write({ path: 'run.json' });
    const json = JSON.parse(await read('run.json')) as Record<string, unknown>[];
    expect(json).to.have.length(4);
    expect(json[3]).to.deep.equal({
      runId: 'r1',
      step: 'suspend',
      deviceId: '1',
      kind: 'imei',
      outcome: 'accepted',
      attempts: 1,
      at: AT,
      requestId: 'req-7',
    });
    expect(json[1]).to.deep.include({
      deviceId: '2',
      latitude: 41,
      cached: false,
      'data.step': 'x',
      step: 'locate',
    });

    // The columns a step names, from the ledger and from the data alike, in its order.
    await write({
      path: 'some.csv',
      step: 'locate',
      columns: ['deviceId', 'cached', 'errorType', 'latitude'],
    });
    expect(await read('some.csv')).to.equal(
      'deviceId,cached,errorType,latitude\n1,true,,40.1\n2,false,,41\n3,,ABSENT SUBSCRIBER,\n',
    );
  });

  it('writes 100,000 devices in chunks, never as one string', async () => {
    const ids = Array.from({ length: 100_000 }, (_, i) => String(350260700000000 + i));
    const data = ids.map((_, i) => ({
      latitude: 40 + i / 1e6,
      longitude: -74,
      radius: 100,
      time: '2026-11-23T01:00:00Z',
      cached: true,
    }));
    store.recordDevices('r1', 'report', [{ kind: 'imei', outcome: 'succeeded', attempts: 1, ids, data }], AT);
    const result = (await write({ path: 'big.csv', step: 'report' })) as { rows: number };
    expect(result.rows).to.equal(100_000);
    const lines = (await read('big.csv')).trimEnd().split('\n');
    expect(lines).to.have.length(100_001);
    expect(lines[100_000]).to.match(/^r1,report,350260700099999,imei,succeeded,,,1,.*,,40\.099999,-74,100,/);

    // The text comes in chunks of about 64 KiB.
    const chunks: string[] = [];
    for await (const chunk of reportText(listTable(data), 'csv')) chunks.push(chunk);
    expect(chunks.length).to.be.greaterThan(50);
    for (const c of chunks) expect(c.length).to.be.below(70 * 1024);
  });

  it('reads a column as a key, else as a dotted path of own keys and list indexes', () => {
    const row = { 'a.b': 1, a: { b: 2, list: [{ c: 3 }] }, n: null };
    expect(pick(row, 'a.b')).to.equal(1);
    expect(pick(row, 'a.list.0.c')).to.equal(3);
    expect(pick(row, 'a.list.1.c')).to.equal(undefined);
    expect(pick(row, 'a.list.x')).to.equal(undefined);
    expect(pick(row, 'n.x')).to.equal(undefined);
    // Nothing from the prototype: these are nobody's columns.
    expect(pick(row, 'constructor')).to.equal(undefined);
    expect(pick(row, 'a.__proto__')).to.equal(undefined);
    expect(pick(row, 'a.list.length')).to.equal(undefined);
  });
});
