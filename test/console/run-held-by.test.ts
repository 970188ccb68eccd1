/**
 * The console's run detail (`GET /console/api/runs/{id}`) names the process that holds a run not ended
 * (`heldBy`), as `fleetbook runs list` names it: the run page showed the owner's id, a UUID that tells an
 * operator nothing, and the same for a run whose process had died. A run no live process holds, and one that
 * ended, have no `heldBy`. The routes on a Fastify app of their own, a real SQLite store, with `app.inject()`.
 */
import { hostname } from 'node:os';
import { expect } from 'chai';
import { BOOT } from '../../src/store/lease.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { consoleApp } from '../helpers/console.js';
import { run } from '../store/fixtures.js';

const TOKEN = 'run-held-by-token';
const LIVE = 'held-by-live-owner';

describe("console: a run's detail names the process that holds it", () => {
  let store: SqliteStore;
  let app: Awaited<ReturnType<typeof consoleApp>>;

  before(async () => {
    store = new SqliteStore(':memory:');
    // This process, as a `fleetbook run` registered on the store, with its lease a minute long.
    const at = Date.now();
    await store.registerOwner(
      {
        id: LIVE,
        role: 'run',
        pid: process.pid,
        host: hostname(),
        boot: BOOT,
        startedAt: new Date(at).toISOString(),
      },
      at,
      60_000,
      false,
    );
    store.createRun(run('held', { owner: LIVE }));
    // Its owner is no process on the store: a `fleetbook run` killed, its lease let go.
    store.createRun(run('orphaned', { owner: 'held-by-gone-owner' }));
    store.createRun(run('ended', { owner: LIVE, status: 'succeeded', endedAt: '2026-11-23T10:00:05.000Z' }));
    app = await consoleApp(store, TOKEN);
  });
  after(async () => {
    await app.close();
    await store.close();
  });

  const detail = async (id: string) => {
    const r = await app.app.inject({
      method: 'GET',
      url: `/console/api/runs/${id}`,
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(r.statusCode, r.body).to.equal(200);
    return JSON.parse(r.body) as { heldBy?: string };
  };

  it('names the live holder of a run not ended, and no one for a run orphaned or ended', async () => {
    expect((await detail('held')).heldBy).to.match(
      new RegExp(`^\`fleetbook run\` \\(pid ${process.pid} on ${hostname()}, since `),
    );
    expect(await detail('orphaned')).to.not.have.property('heldBy');
    expect(await detail('ended')).to.not.have.property('heldBy');
  });
});
