/**
 * The runs `missed: all` makes up after a downtime are each dated by the night they are for. `run.date` was
 * the day the run was created: three missed nights caught up on one morning all wrote
 * `<today>-nightly.csv`, each over the one before, so two nights of reports were lost and the one kept was
 * named for the wrong night.
 *
 * A real daemon (`fleetbook serve`, the built binary) on a state file whose daily schedule last fired three
 * nights before the last one due; each run writes a report named by `run.date`.
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { SqliteStore } from '../../src/store/sqlite.js';
import { DaemonWorld, runsIn } from '../helpers/daemon.js';

const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'missed-nights', 'nightly.yaml');
const DAY = 86_400_000;

describe('missed: all dates each made-up run by its fire time', function () {
  this.timeout(60_000);
  let world: DaemonWorld;

  before(async () => {
    world = await DaemonWorld.create('missed-nights', {
      user: 'nights-listener',
      password: 'nights-password',
    });
  });
  after(async () => world?.close());

  it('three missed nights write three reports, each named by its night', async () => {
    // The schedule fires half a day from now, on the hour: no fire falls due while the test runs.
    const now = Date.now();
    const hour = (new Date(now).getUTCHours() + 12) % 24;
    const playbooks = join(world.dir, 'playbooks');
    await mkdir(playbooks);
    await writeFile(
      join(playbooks, 'nightly.yaml'),
      (await readFile(FIXTURE, 'utf8')).replace("'0 HOUR ", `'0 ${hour} `),
    );
    // Its latest fire, up to a day ago; the last one recorded, three fires before it.
    let latest = Date.UTC(
      new Date(now).getUTCFullYear(),
      new Date(now).getUTCMonth(),
      new Date(now).getUTCDate(),
      hour,
    );
    if (latest > now) latest -= DAY;
    const state = world.state();
    const store = new SqliteStore(state);
    await store.recordFire(`nightly#UTC#0 ${hour} * * *`, new Date(latest - 3 * DAY).toISOString());
    await store.close();

    const reports = join(world.dir, 'reports');
    const daemon = await world.start('missed-nights daemon', playbooks, {
      state,
      env: { FLEETBOOK_REPORTS_DIR: reports },
    });
    const deadline = Date.now() + 30_000;
    const ended = () => runsIn(state, 'nightly').filter((r) => r.status === 'succeeded').length;
    while (ended() < 3) {
      if (Date.now() > deadline)
        throw new Error(`the missed runs did not end:\n${daemon.stderr.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    await daemon.stop();

    const fires = [2, 1, 0].map((n) => new Date(latest - n * DAY).toISOString());
    const nights = fires.map((at) => at.slice(0, 10));
    expect(runsIn(state, 'nightly')).to.have.length(3);
    expect((await readdir(reports)).sort()).to.deep.equal(nights.map((d) => `${d}-nightly.csv`));
    for (const at of fires)
      expect(await readFile(join(reports, `${at.slice(0, 10)}-nightly.csv`), 'utf8')).to.equal(
        `date,scheduledAt\n${at.slice(0, 10)},${at}\n`,
      );
  });
});
