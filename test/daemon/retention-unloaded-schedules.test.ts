/**
 * `serve` with FLEETBOOK_RETENTION keeps a backfill (`fleetbook run --scheduled-at`) of a fire its schedule has
 * not passed, however long ago it ended. A backfill of a schedule whose key the daemon no longer loads (its cron
 * edited, its playbook removed) was kept for ever, since no schedule would ever pass that fire; the daemon now
 * prunes it as any run once no prune pass has found its schedule loaded for a day, and still keeps the backfill
 * of a schedule it loads, and that of a schedule another process had loaded an hour ago.
 *
 * A real daemon (the built binary) on a state file written here, as a daemon that ran the old schedule left it.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { stateFile } from '../helpers/cli.js';
import { DaemonWorld } from '../helpers/daemon.js';

const DAY = 86_400_000;
const ago = (days: number) => new Date(Date.now() - days * DAY).toISOString();
const year = new Date().getUTCFullYear();
/** The schedule loaded fired last on January 1st; the night backfilled is the next one. */
const LOADED = 'yearly#UTC#0 3 1 1 *';

describe('serve with FLEETBOOK_RETENTION: a backfill of a schedule no longer loaded', function () {
  this.timeout(60_000);
  let world: DaemonWorld;
  before(async () => {
    world = await DaemonWorld.create('retention-unloaded-schedules', {
      user: 'retention-listener',
      password: 'retention-password',
    });
  });
  after(async () => world?.close());

  // The state as a daemon that ran them left it: a backfill, ahead of the last fire recorded, of the schedule
  // loaded, of that schedule as it was before its hour was edited, and of the schedule of a playbook since removed.
  const state = stateFile(async (store) => {
    const backfill = (id: string, schedule: string, scheduledAt: string) =>
      store.createRun({
        id,
        playbook: schedule.split('#')[0]!,
        status: 'succeeded',
        trigger: { type: 'schedule', schedule, scheduledAt, reason: 'backfill' },
        inputs: {},
        startedAt: ago(100),
        endedAt: ago(100),
      });
    for (const key of [LOADED, 'yearly#UTC#0 4 1 1 *', 'gone#UTC#0 2 * * *'])
      await store.recordFire(key, key === LOADED ? `${year}-01-01T03:00:00.000Z` : ago(200));
    backfill('b0000000-0000-4000-8000-000000000001', LOADED, `${year + 1}-01-01T03:00:00.000Z`);
    backfill('b0000000-0000-4000-8000-000000000002', 'yearly#UTC#0 4 1 1 *', ago(150));
    backfill('b0000000-0000-4000-8000-000000000003', 'gone#UTC#0 2 * * *', ago(150));
    // A schedule another process (a replica on other playbooks) had loaded an hour ago.
    await store.recordFire('other#UTC#0 2 * * *', ago(200));
    backfill('b0000000-0000-4000-8000-000000000004', 'other#UTC#0 2 * * *', ago(150));
    // Each schedule's last prune pass: two days ago, but that of the other process's schedule.
    await store.recordLoaded([], ago(2));
    await store.recordLoaded(['other#UTC#0 2 * * *'], ago(1 / 24));
  });

  it('is pruned, while the backfill of a schedule it loads is kept', async () => {
    const playbooks = join(world.dir, 'playbooks');
    await mkdir(playbooks);
    await writeFile(
      join(playbooks, 'yearly.yaml'),
      `version: 1
name: yearly
on: { schedule: { cron: "0 3 1 1 *", timezone: UTC, missed: none } }
steps:
  - id: say
    uses: log
    with: { message: hi }
`,
    );
    const d = await world.start('daemon with retention', playbooks, {
      state: state.file,
      env: { FLEETBOOK_RETENTION: '30d' },
    });
    const gone = async (n: number) =>
      (await fetch(`${d.url}/runs/b0000000-0000-4000-8000-00000000000${n}`)).status === 404;
    const PRUNED = 'pruned what ended before the retention';
    // The pass logs once its deletes are committed, after a request may already find the runs gone.
    const deadline = Date.now() + 10_000;
    while (!((await gone(2)) && (await gone(3)) && d.stderr.includes(PRUNED)) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect([await gone(1), await gone(2), await gone(3), await gone(4)]).to.deep.equal([
      false,
      true,
      true,
      false,
    ]);
    expect(d.stderr).to.include(PRUNED);
  });
});
