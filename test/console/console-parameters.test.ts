/**
 * The console's runs listing read parameters looser than docs/console.md says ("A bad parameter is answered 400
 * … naming it"):
 * - a `before` cursor whose time is no time (base64 of `["not-a-date","x"]`) listed the newest runs;
 * - `from=0` and `from=2026` were taken as times (`Date.parse` takes them);
 * - `status=` and `playbook=`, empty, were taken as no filter.
 * Each is now answered 400 naming the parameter. The routes on a Fastify app of their own, a real SQLite store,
 * with `app.inject()`.
 */
import { expect } from 'chai';
import type { FastifyInstance } from 'fastify';
import { SqliteStore } from '../../src/store/sqlite.js';
import { consoleApp } from '../helpers/console.js';

const cursor = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

describe('console: the parameters of the runs listing', () => {
  let store: SqliteStore;
  let app: FastifyInstance;
  let close: () => Promise<void>;

  before(async () => {
    store = new SqliteStore(':memory:');
    for (const [id, startedAt] of [
      ['run-old', '2026-11-01T08:00:00.000Z'],
      ['run-new', '2026-11-02T08:00:00.000Z'],
    ] as const)
      store.createRun({
        id,
        playbook: 'listed',
        status: 'succeeded',
        trigger: { type: 'manual' },
        inputs: {},
        startedAt,
        endedAt: startedAt,
      });
    ({ app, close } = await consoleApp(store, 'console-parameters-token'));
  });
  after(async () => {
    await close();
    await store.close();
  });

  const get = async (query: string) => {
    const r = await app.inject({ method: 'GET', url: `/console/api/runs?${query}` });
    const body = r.json<{ error?: string; runs?: { id: string }[] }>();
    return r.statusCode === 200
      ? `200 ${body.runs?.map((run) => run.id).join(',')}`
      : `${r.statusCode} ${body.error}`;
  };

  it('lists what good parameters ask for', async () => {
    expect(await get('limit=1')).to.equal('200 run-new');
    expect(await get(`before=${cursor(['2026-11-02T08:00:00.000Z', 'run-new'])}`)).to.equal('200 run-old');
    expect(await get('from=2026-11-02')).to.equal('200 run-new');
    expect(await get('to=2026-11-01T09:00:00Z&status=succeeded&playbook=listed')).to.equal('200 run-old');
    expect(await get('from=2026-11-01T12:00:00%2B02:00')).to.equal('200 run-new');
  });

  it('refuses a cursor whose time is no time, as any other malformed cursor', async () => {
    const bad = cursor(['not-a-date', 'x']);
    expect(await get(`before=${bad}`)).to.equal(`400 before is not a cursor of this listing: "${bad}"`);
  });

  it('refuses a time that is not ISO 8601, naming the parameter', async () => {
    for (const [name, v] of [
      ['from', '0'],
      ['from', '2026'],
      ['to', '1700000000000'],
      ['from', '2026-11-01T08:00'],
    ])
      expect(await get(`${name}=${v}`), `${name}=${v}`).to.equal(
        `400 ${name} must be a time (ISO 8601: 2026-11-01, or 2026-11-01T08:00:00Z), got "${v}"`,
      );
  });

  it('refuses a parameter given empty, naming it', async () => {
    for (const name of ['status', 'playbook', 'before', 'from', 'limit'])
      expect(await get(`${name}=`), name).to.equal(`400 ${name} is empty: give it a value, or leave it out`);
  });
});
