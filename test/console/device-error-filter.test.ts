/**
 * A run's device table filtered by an error type no device of the run has and fleetbook records under no such
 * name (`?errorType=SVC CACHE UNAVALABLE`) answered 200 with no devices, as if none had failed so: the operator
 * who looked for the cache misses to retry read that there were none. Such a type is now answered 400, naming the
 * type meant, on the table and its CSV. A type the run has is read as before, one fleetbook's catalog does not
 * list too (a code the service sent), and a type the catalog knows that no device of the run has is an empty
 * table, as it was. Looked up by the store's index of the types, never by reading the run's devices. The routes
 * on a Fastify app of their own with `app.inject()`, on a real SQLite file and a real PostgreSQL server.
 */
import { expect } from 'chai';
import type { FastifyInstance } from 'fastify';
import type { RunSummary, Store } from '../../src/store/store.js';
import { consoleApp } from '../helpers/console.js';
import { forEachBackend } from '../store/backends.js';
import { group, imeis, run } from '../store/fixtures.js';

const AT = '2026-11-23T10:00:00.000Z';
/** A type the service sent that no list of fleetbook's holds: the run has it, so it is found. */
const VENDOR = 'X42 PARTNER REFUSED';

forEachBackend("console: a run's device table filtered by an error type", (b) => {
  let store: Store;
  let app: FastifyInstance;
  let close: (() => Promise<void>) | undefined;

  beforeEach(async () => {
    store = await b.open();
    // r1 runs still (no summary); r2, another run, has a type r1 has not; r3 has ended with its summary.
    store.createRun(run('r1', { playbook: 'located' }));
    store.recordDevices(
      'r1',
      'report',
      [
        group(imeis(0, 3)),
        group(imeis(3, 5), {
          outcome: 'failed',
          errorType: 'SVC CACHE UNAVAILABLE',
          errorClass: 'remediable',
        }),
        group(imeis(5, 6), { outcome: 'failed', errorType: VENDOR, errorClass: 'permanent' }),
      ],
      AT,
    );
    store.createRun(run('r2', { playbook: 'other' }));
    store.recordDevices(
      'r2',
      'report',
      [group(imeis(10, 11), { outcome: 'failed', errorType: 'ONLY IN R2' })],
      AT,
    );
    store.createRun(run('r3', { playbook: 'located' }));
    store.recordDevices('r3', 'report', [group(imeis(20, 22), { outcome: 'failed', errorType: VENDOR })], AT);
    const counts = { total: 2, accepted: 0, succeeded: 0, failed: 2, skipped: 0, unconfirmed: 0 };
    const summary: RunSummary = {
      runId: 'r3',
      playbook: 'located',
      status: 'failed',
      startedAt: AT,
      endedAt: AT,
      steps: [],
      devices: { ...counts, byError: { [VENDOR]: 2 } },
    };
    store.updateRun('r3', { status: 'failed', endedAt: AT, summary });
    await store.durable();
    ({ app, close } = await consoleApp(store, 'device-error-filter-token'));
  });
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  const get = async (runId: string, path: string, errorType: string) => {
    const r = await app.inject({
      method: 'GET',
      url: `/console/api/runs/${runId}/${path}?errorType=${encodeURIComponent(errorType)}`,
    });
    return { status: r.statusCode, body: r.body };
  };
  /** The devices of the table, and the rows of the CSV below its header line. */
  const rows = async (runId: string, errorType: string) => {
    const table = await get(runId, 'devices', errorType);
    const csv = await get(runId, 'devices.csv', errorType);
    expect([table.status, csv.status], `${errorType}: ${table.body}`).to.deep.equal([200, 200]);
    return {
      devices: (JSON.parse(table.body) as { devices: { deviceId: string }[] }).devices.map((d) => d.deviceId),
      csv: csv.body.trim().split('\n').length - 1,
    };
  };

  it('reads a type the run has, and a known type it has not as an empty table', async () => {
    expect(await rows('r1', 'SVC CACHE UNAVAILABLE')).to.deep.equal({ devices: imeis(3, 5), csv: 2 });
    expect(await rows('r1', VENDOR)).to.deep.equal({ devices: imeis(5, 6), csv: 1 });
    expect(await rows('r3', VENDOR)).to.deep.equal({ devices: imeis(20, 22), csv: 2 });
    // Known to fleetbook, and no device of the run has them: spec 7.3's, the carrier's, its own, its codes.
    for (const known of ['ABSENT SUBSCRIBER', 'INVALID DEVICE STATE', 'OUTCOME UNKNOWN', 'FB_INPUT'])
      expect(await rows('r1', known), known).to.deep.equal({ devices: [], csv: 0 });
  });

  it('refuses a type no device of the run has and fleetbook does not record, naming the one meant', async () => {
    const refused: [runId: string, type: string, error: string][] = [
      [
        'r1',
        'SVC CACHE UNAVALABLE',
        'errorType: no device of run r1 has error type `SVC CACHE UNAVALABLE`, and fleetbook records no such type (did you mean `SVC CACHE UNAVAILABLE`?)',
      ],
      [
        'r1',
        'ACME CACHE UNAVAILABLE',
        "errorType: no device of run r1 has error type `ACME CACHE UNAVAILABLE`: fleetbook records it by its spec name, `SVC CACHE UNAVAILABLE` (the vendor's prefix is read as SVC)",
      ],
      // Another run's type is not this run's.
      [
        'r1',
        'ONLY IN R2',
        'errorType: no device of run r1 has error type `ONLY IN R2`, and fleetbook records no such type',
      ],
      // An ended run's summary names its types: the one meant may be one of them.
      [
        'r3',
        'X42 PARTNER REFUSD',
        'errorType: no device of run r3 has error type `X42 PARTNER REFUSD`, and fleetbook records no such type (did you mean `X42 PARTNER REFUSED`?)',
      ],
    ];
    for (const [runId, type, error] of refused)
      for (const path of ['devices', 'devices.csv']) {
        const r = await get(runId, path, type);
        expect(r.status, `${path} ${type}`).to.equal(400);
        expect(JSON.parse(r.body), `${path} ${type}`).to.deep.equal({ error });
      }
  });
});
