/**
 * A run's device table filtered by a step the run's playbook has not (`?step=reprot`) answered 200 with no
 * devices, as if the step had acted on none: a script that read it said the report reached no device. A step
 * the run's playbook version does not have is now answered 400, naming the steps it has, on the table and its
 * CSV; a step it has (inside a loop too) is read as before. The routes on a Fastify app of their own, a real
 * SQLite store, with `app.inject()`.
 */
import { expect } from 'chai';
import type { FastifyInstance } from 'fastify';
import { SqliteStore } from '../../src/store/sqlite.js';
import { consoleApp } from '../helpers/console.js';
import { group, imeis, run } from '../store/fixtures.js';

const VERSION = 'step-filter-version';
const PLAYBOOK = {
  version: 1,
  name: 'located',
  on: { manual: true },
  steps: [
    { id: 'devices', uses: 'devices.list', with: { accountName: '0000123456-00001' } },
    { id: 'report', uses: 'location.createReport', with: { accountName: '0000123456-00001' } },
    {
      id: 'each',
      forEach: { items: [1], steps: [{ id: 'again', uses: 'log', with: { message: 'x' } }] },
    },
  ],
};

describe("console: a run's device table filtered by a step", () => {
  let store: SqliteStore;
  let app: FastifyInstance;
  let close: () => Promise<void>;

  before(async () => {
    store = new SqliteStore(':memory:');
    await store.savePlaybookVersion(VERSION, JSON.stringify(PLAYBOOK));
    store.createRun(run('r1', { playbook: 'located', version: VERSION, status: 'succeeded' }));
    store.recordDevices('r1', 'report', [group(imeis(0, 3))], '2026-11-23T10:00:00.000Z');
    ({ app, close } = await consoleApp(store, 'device-step-filter-token'));
  });
  after(async () => {
    await close();
    await store.close();
  });

  const get = async (path: string) => {
    const r = await app.inject({ method: 'GET', url: `/console/api/runs/r1/${path}` });
    return { status: r.statusCode, body: r.body };
  };

  it('reads the devices of a step the run has', async () => {
    const table = await get('devices?step=report');
    expect(table.status).to.equal(200);
    expect(JSON.parse(table.body).devices).to.have.length(3);
    expect((await get('devices?step=again')).status).to.equal(200);
    const csv = await get('devices.csv?step=report');
    expect(csv.status).to.equal(200);
    expect(csv.body.trim().split('\n')).to.have.length(4);
  });

  it('refuses a step the run has not, naming those it has', async () => {
    const error =
      'step: run r1 (located) has no step `reprot` (did you mean `report`?): its steps are devices, report, each, again';
    for (const path of ['devices?step=reprot', 'devices.csv?step=reprot']) {
      const r = await get(path);
      expect(r.status, path).to.equal(400);
      expect(JSON.parse(r.body), path).to.deep.equal({ error });
    }
  });
});
