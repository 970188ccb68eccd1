/**
 * The runs `missed: all` makes up after a downtime are each dated by the night they are for. `run.date` was
 * the day the run was created: three missed nights caught up on one morning all wrote
 * `<today>-nightly.csv`, each over the one before, so two nights of reports were lost and the one kept was
 * named for the wrong night.
 *
 * A real daemon (`fleetbook serve`, the built binary) on a state file whose daily schedule last fired three
 * nights before the last one due; each run writes a report named by `run.date`.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { DaemonWorld, runsIn } from '../helpers/daemon.js';
import { threeMissedNights } from '../helpers/missed-nights.js';

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
    const { playbooks, state, fires } = await threeMissedNights(world, 'playbooks', 'state.db');
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

    const nights = fires.map((at) => at.slice(0, 10));
    expect(runsIn(state, 'nightly')).to.have.length(3);
    expect((await readdir(reports)).sort()).to.deep.equal(nights.map((d) => `${d}-nightly.csv`));
    for (const at of fires)
      expect(await readFile(join(reports, `${at.slice(0, 10)}-nightly.csv`), 'utf8')).to.equal(
        `date,scheduledAt\n${at.slice(0, 10)},${at}\n`,
      );
  });
});
