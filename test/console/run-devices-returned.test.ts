/**
 * A run's device table (`GET /console/api/runs/{id}/devices`) and its CSV gave no device what its step returned:
 * the table read the ledger's entries without their data, so a location report's page in the console showed no
 * location, where a device's page, `runs show --devices` and report.write gave it. Each row now carries it as
 * `data`, read for the page's rows only; the CSV has a column for each member of it, as report.write writes the
 * ledger. The routes on a Fastify app of their own, a real SQLite store, with `app.inject()`.
 */
import http from 'node:http';
import { expect } from 'chai';
import type { FastifyInstance } from 'fastify';
import { SqliteStore } from '../../src/store/sqlite.js';
import { consoleApp } from '../helpers/console.js';
import { group, imei, imeis, MISS, run } from '../store/fixtures.js';

const TOKEN = 'run-devices-returned-token';
const AT = '2026-11-23T10:00:01.000Z';
const location = (n: number) => ({
  latitude: 25.018455 + n,
  longitude: -121.65645,
  radius: 416 + n,
  time: '2026-01-04T22:37:27Z',
  cached: n % 2 === 0,
});

describe("console: a run's device table gives what each step returned", () => {
  let store: SqliteStore;
  let app: FastifyInstance;
  let close: () => Promise<void>;

  /** The app's address on a real socket (a download closed part-way, a response cut): listening from the first call. */
  let address: URL | undefined;
  const listening = async () => (address ??= new URL(await app.listen({ port: 0, host: '127.0.0.1' })));

  const get = async (path: string) => {
    const r = await app.inject({
      method: 'GET',
      url: `/console/api/runs/report-run/${path}`,
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(r.statusCode, r.body).to.equal(200);
    return r;
  };

  before(async () => {
    store = new SqliteStore(':memory:');
    store.createRun(run('report-run', { playbook: 'nightly', status: 'succeeded' }));
    // Three devices located; a fourth missed, then located on a retry; a fifth refused; a suspend of the first.
    store.recordDevices(
      'report-run',
      'report',
      [
        group(imeis(1, 4), { data: [location(1), location(2), location(3)] }),
        group([imei(4)], { outcome: 'failed', errorType: MISS, errorClass: 'remediable' }),
        group([imei(5)], {
          outcome: 'failed',
          errorType: 'SVC CONSENT CHECK FAILED',
          errorClass: 'permanent',
        }),
      ],
      AT,
    );
    store.recordDevices('report-run', 'report', [group([imei(4)], { attempts: 2, data: [location(4)] })], AT);
    store.recordDevices('report-run', 'suspend', [group([imei(1)], { requestId: 'req-1' })], AT);
    await store.durable();
    ({ app, close } = await consoleApp(store, TOKEN));
  });
  after(async () => {
    await close();
    await store.close();
  });

  it('gives each row its location, the retry’s for a retried device, and none where nothing was returned', async () => {
    const rows = (await get('devices?limit=2')).json<{
      devices: { deviceId: string; data?: unknown }[];
      next: string;
    }>();
    const next = (await get(`devices?after=${encodeURIComponent(rows.next)}`)).json<{
      devices: { step: string; deviceId: string; data?: unknown }[];
    }>();
    expect([...rows.devices, ...next.devices].map((d) => [d.deviceId, d.data])).to.deep.equal([
      [imei(1), location(1)],
      [imei(2), location(2)],
      [imei(3), location(3)],
      [imei(5), undefined],
      [imei(4), location(4)],
      [imei(1), undefined],
    ]);
  });

  it('writes a CSV column for each member of what the steps returned', async () => {
    const lines = (await get('devices.csv')).body.split('\n').filter((l) => l !== '');
    expect(lines[0]).to.equal(
      'runId,step,deviceId,kind,outcome,errorType,errorClass,attempts,at,requestId,latitude,longitude,radius,time,cached',
    );
    expect(lines.slice(1)).to.deep.equal([
      `report-run,report,${imei(1)},imei,succeeded,,,1,${AT},,26.018455,-121.65645,417,2026-01-04T22:37:27Z,false`,
      `report-run,report,${imei(2)},imei,succeeded,,,1,${AT},,27.018455,-121.65645,418,2026-01-04T22:37:27Z,true`,
      `report-run,report,${imei(3)},imei,succeeded,,,1,${AT},,28.018455,-121.65645,419,2026-01-04T22:37:27Z,false`,
      `report-run,report,${imei(5)},imei,failed,SVC CONSENT CHECK FAILED,permanent,1,${AT},,,,,,`,
      `report-run,report,${imei(4)},imei,succeeded,,,2,${AT},,29.018455,-121.65645,420,2026-01-04T22:37:27Z,true`,
      `report-run,suspend,${imei(1)},imei,succeeded,,,1,${AT},req-1,,,,,`,
    ]);
    // Filtered to rows of no data, the ledger's columns only.
    const refused = (await get('devices.csv?outcome=failed')).body.split('\n').filter((l) => l !== '');
    expect(refused[0]).to.equal(
      'runId,step,deviceId,kind,outcome,errorType,errorClass,attempts,at,requestId',
    );
  });

  it('reads a download given up no further', async () => {
    // A run of 100,000 located devices (100 pages of the store's read, each read twice: its columns, then its
    // rows), downloaded by a client that reads the first bytes and goes.
    store.createRun(run('large-run', { playbook: 'nightly', status: 'succeeded' }));
    for (let e = 0; e < 100; e++)
      store.recordDevices(
        'large-run',
        'report',
        [group(imeis(e * 1000, e * 1000 + 1000), { data: imeis(0, 1000).map((_, n) => location(n)) })],
        AT,
      );
    await store.durable();
    let pages = 0;
    let reads = 0;
    const each = store.eachDeviceResult.bind(store);
    store.eachDeviceResult = (runId, step) =>
      (async function* () {
        try {
          for await (const page of each(runId, step)) {
            pages++;
            yield page;
          }
        } finally {
          reads++;
        }
      })();
    const url = await listening();
    // The first bytes, then the connection closed, as a browser's cancelled download closes it.
    const head = await new Promise<string>((resolve, reject) => {
      const req = http.get(
        {
          host: url.hostname,
          port: url.port,
          path: '/console/api/runs/large-run/devices.csv',
          headers: { authorization: `Bearer ${TOKEN}` },
        },
        (res) => {
          if (res.statusCode !== 200) reject(new Error(`status ${res.statusCode}`));
          res.once('data', (chunk: Buffer) => {
            req.destroy();
            resolve(chunk.toString('utf8'));
          });
        },
      );
      req.on('error', reject);
    });
    expect(head.split('\n')[0]).to.match(/^runId,.*,latitude,longitude/);
    for (let i = 0; reads < 2 && i < 200; i++) await new Promise((r) => setTimeout(r, 25));
    expect(reads, 'both reads of the rows ended').to.equal(2);
    expect(pages, 'pages read: all for the columns, a few of the rows').to.be.within(100, 150);
  });

  it('fails a download of a run that went on between its reads with data its columns miss', async () => {
    // The report's first batch missed; the second is located after the columns were read.
    store.createRun(run('moving-run', { playbook: 'nightly', status: 'running' }));
    store.recordDevices(
      'moving-run',
      'report',
      [group([imei(1)], { outcome: 'failed', errorType: MISS, errorClass: 'remediable' })],
      AT,
    );
    await store.durable();
    const each = store.eachDeviceResult.bind(store);
    let reads = 0;
    store.eachDeviceResult = (runId, step) =>
      (async function* () {
        yield* each(runId, step);
        if (runId === 'moving-run' && ++reads === 1) {
          store.recordDevices('moving-run', 'report', [group([imei(2)], { data: [location(2)] })], AT);
          await store.durable();
        }
      })();
    const url = await listening();
    const got = await new Promise<{ status?: number; body: string; error?: string }>((resolve) => {
      let body = '';
      http
        .get(
          {
            host: url.hostname,
            port: url.port,
            path: '/console/api/runs/moving-run/devices.csv',
            headers: { authorization: `Bearer ${TOKEN}` },
          },
          (res) => {
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => (body += chunk));
            res.on('error', (e) => resolve({ status: res.statusCode, body, error: e.message }));
            res.on('end', () => resolve({ status: res.statusCode, body }));
          },
        )
        .on('error', (e) => resolve({ body, error: e.message }));
    });
    // Cut before its first row: the client sees the connection close (`socket hang up`, or `aborted` once the
    // headers came).
    expect(got.error, `the download ended whole: ${got.body}`).to.be.oneOf(['socket hang up', 'aborted']);
    expect(got.body, 'no row without its location').to.not.include(imei(2));
  });
});
