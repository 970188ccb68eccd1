/**
 * Retention from outside the store: `fleetbook store prune` (child process on a state file written here; dist/
 * must be built), and `serve` with FLEETBOOK_RETENTION, which prunes as it starts. Without them a store kept every
 * run, checkpoint, ledger entry and callback forever: a fleet's nightly report of a million devices, a year of it.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import type { SqliteStore } from '../../src/store/sqlite.js';
import type { RunRecord } from '../../src/store/store.js';
import { fleetbook, stateFile } from '../helpers/cli.js';
import { DaemonWorld } from '../helpers/daemon.js';

const DAY = 24 * 60 * 60 * 1000;
const ago = (days: number) => new Date(Date.now() - days * DAY).toISOString();

/** A run that started and (unless running) ended `days` ago, with a device in the ledger. */
function seed(store: SqliteStore, id: string, days: number, status: RunRecord['status']): void {
  store.createRun({
    id,
    playbook: 'nightly',
    status,
    trigger: { type: 'schedule' },
    inputs: {},
    startedAt: ago(days),
    ...(status === 'running' ? {} : { endedAt: ago(days) }),
  });
  store.recordDevices(
    id,
    'locate',
    [{ ids: ['353456789012345'], kind: 'imei', outcome: 'succeeded', attempts: 1 }],
    ago(days),
  );
}

function seeded(store: SqliteStore): void {
  seed(store, 'a0000000-0000-4000-8000-000000000001', 120, 'succeeded');
  seed(store, 'a0000000-0000-4000-8000-000000000002', 100, 'failed');
  seed(store, 'a0000000-0000-4000-8000-000000000003', 10, 'succeeded');
  // A run that started long ago and waits still (a `wait:` of months): never pruned.
  seed(store, 'a0000000-0000-4000-8000-000000000004', 200, 'running');
}

describe('retention: fleetbook store prune, and serve with FLEETBOOK_RETENTION', function () {
  this.timeout(60_000);
  // Each test prunes its own.
  const state = stateFile(seeded, { each: true });
  const kept = () =>
    state.withStore(async (store) => (await store.listRuns()).map((r) => r.id.slice(-1)).sort());
  let world: DaemonWorld;
  before(async () => {
    world = await DaemonWorld.create('retention', {
      user: 'retention-listener',
      password: 'retention-password',
    });
  });
  after(() => world.close());

  it('store prune --older-than removes the runs that ended before, with their ledger, and says so', async () => {
    const r = await fleetbook(['store', 'prune', '--older-than', '90d'], state.env);
    expect([r.code, r.stderr]).to.deep.equal([0, '']);
    expect(r.stdout).to.match(
      /^the state file .*state\.db \(FLEETBOOK_STATE\): removed 2 run\(s\) that ended before \d{4}-\d\d-\d\dT\S+Z \(2 ledger entries\), 0 callback\(s\) processed before then and 0 playbook version\(s\) no run kept names\n$/,
    );
    expect(await kept()).to.deep.equal(['3', '4']);
    // FLEETBOOK_RETENTION when no --older-than is given.
    const again = await fleetbook(['store', 'prune'], { ...state.env, FLEETBOOK_RETENTION: '5d' });
    expect(again.stdout).to.include('removed 1 run(s)');
    expect(await kept()).to.deep.equal(['4']);
  });

  it('store prune refuses to guess how much to keep, and a duration it cannot read', async () => {
    const none = await fleetbook(['store', 'prune'], state.env);
    expect([none.code, none.stderr]).to.deep.equal([
      2,
      'fleetbook store prune: say how much to keep: --older-than 90d, or FLEETBOOK_RETENTION\n',
    ]);
    const bad = await fleetbook(['store', 'prune', '--older-than', '3 months'], state.env);
    expect([bad.code, bad.stderr]).to.deep.equal([
      2,
      'fleetbook store prune: --older-than must be a duration such as 90d, 12h or 30m (got "3 months")\n',
    ]);
    expect(await kept(), 'nothing pruned').to.deep.equal(['1', '2', '3', '4']);
  });

  it('serve with FLEETBOOK_RETENTION prunes as it starts', async () => {
    // A playbook that nothing starts: serve refuses a directory without any.
    const playbooks = join(world.dir, 'manual-only');
    await mkdir(playbooks);
    await writeFile(
      join(playbooks, 'say.yaml'),
      'version: 1\nname: say\non: { manual: true }\nsteps:\n  - id: say\n    uses: log\n    with: { message: hi }\n',
    );
    const d = await world.start('daemon with retention', playbooks, {
      state: state.file,
      env: { FLEETBOOK_RETENTION: '30d' },
    });
    const gone = async (id: string) => (await fetch(`${d.url}/runs/${id}`)).status === 404;
    const PRUNED = 'pruned what ended before the retention';
    // The pass logs once its deletes are committed, after a request may already find the runs gone.
    const deadline = Date.now() + 10_000;
    while (
      !((await gone('a0000000-0000-4000-8000-000000000002')) && d.stderr.includes(PRUNED)) &&
      Date.now() < deadline
    )
      await new Promise((r) => setTimeout(r, 50));
    expect(await gone('a0000000-0000-4000-8000-000000000001')).to.equal(true);
    expect(await gone('a0000000-0000-4000-8000-000000000002')).to.equal(true);
    expect(await gone('a0000000-0000-4000-8000-000000000003')).to.equal(false);
    expect(d.stderr).to.include(PRUNED);
    // Before the state file goes with the test.
    await d.kill();
  });
});
