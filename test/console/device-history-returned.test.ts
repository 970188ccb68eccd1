/**
 * A device's page (`GET /console/api/devices/{id}`, the console's `#/devices/<id>`) listed each result of the
 * device without what its step returned: the ledger keeps a located device's location (product.md 5a: "reports
 * carry the data a step returned"), `runs show --devices` gave it, and the console's page of the device did not.
 * Each result now carries it as `data`. The routes on a Fastify app of their own, a real SQLite store, with
 * `app.inject()`.
 */
import { expect } from 'chai';
import type { FastifyInstance } from 'fastify';
import { SqliteStore } from '../../src/store/sqlite.js';
import { consoleApp } from '../helpers/console.js';
import { group, imei, run } from '../store/fixtures.js';

const TOKEN = 'device-history-returned-token';
const LOCATION = {
  latitude: 25.018455,
  longitude: -121.65645,
  radius: 416,
  time: '2026-01-04T22:37:27Z',
  cached: true,
};

describe("console: a device's page gives what each step returned for it", () => {
  let store: SqliteStore;
  let app: FastifyInstance;
  let close: () => Promise<void>;

  before(async () => {
    store = new SqliteStore(':memory:');
    store.createRun(run('report-run', { playbook: 'nightly', status: 'succeeded' }));
    store.recordDevices(
      'report-run',
      'report',
      [group([imei(1), imei(2)], { data: [LOCATION, LOCATION] })],
      '2026-11-23T10:00:01.000Z',
    );
    store.recordDevices(
      'report-run',
      'suspend',
      [group([imei(1)], { requestId: 'req-1' })],
      '2026-11-23T10:00:02.000Z',
    );
    await store.durable();
    ({ app, close } = await consoleApp(store, TOKEN));
  });
  after(async () => {
    await close();
    await store.close();
  });

  it('gives a located result its location, and none to a result without data', async () => {
    const r = await app.inject({
      method: 'GET',
      url: `/console/api/devices/${imei(1)}`,
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(r.statusCode, r.body).to.equal(200);
    const results = r.json<{ results: { step: string; data?: unknown }[] }>().results;
    expect(results.map((x) => [x.step, x.data])).to.deep.equal([
      ['suspend', undefined],
      ['report', LOCATION],
    ]);
  });

  it('refuses an empty device id, rather than answer that nothing touched it', async () => {
    const r = await app.inject({
      method: 'GET',
      url: '/console/api/devices/',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(r.statusCode, r.body).to.equal(400);
    expect(r.json<{ error: string }>().error).to.equal('the device id is empty: /console/api/devices/{id}');
  });
});
