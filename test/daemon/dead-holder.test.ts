/**
 * A `fleetbook run` killed on the daemon's own host, with a long lease: the daemon knows its process is gone (the
 * same host and boot, no such pid), as `fleetbook serve` knew at its start. It waited until the dead process's
 * lease expired (FLEETBOOK_LEASE of that process, 60 s here) before it took the run up, where `runs show` and the
 * console say a live serve takes it up at its next lease renewal. Now every renewal lets go of the owners known
 * to be gone, and the run is taken up while the dead process's lease would still have held.
 */
import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { BIN } from '../helpers/cli.js';
import { DaemonWorld, readState, untilDaemons } from '../helpers/daemon.js';

const PLAYBOOK = `version: 1
name: long-wait
on: { manual: true }
steps:
  - id: began
    uses: log
    with: { message: 'long-wait began' }
  - id: hold
    wait: 60s
`;

interface Row {
  owner: string | null;
  status: string;
}

describe('daemon: a run whose holder died on this host', function () {
  this.timeout(60_000);
  let world: DaemonWorld;

  before(async () => {
    world = await DaemonWorld.create('dead-holder', {
      user: 'dead-holder-listener',
      password: 'dead-holder-pw',
    });
  });
  after(() => world.close());

  it('is taken up at a renewal of the daemon, not when the dead process’s lease expires', async () => {
    const dir = join(world.dir, 'playbooks');
    await mkdir(dir);
    await writeFile(join(dir, 'long-wait.yaml'), PLAYBOOK);
    const state = world.state('dead-holder.db');
    const d = await world.start('daemon', dir, { state, env: { FLEETBOOK_LEASE: '1500ms' } });
    const run = spawn(process.execPath, [BIN, 'run', join(dir, 'long-wait.yaml')], {
      env: { ...world.env(), FLEETBOOK_STATE: state, FLEETBOOK_LEASE: '60s' },
      stdio: 'ignore',
    });
    const held = await untilDaemons([d], 'the run held by `fleetbook run`', async () => {
      const r = readState(state, (db) =>
        db
          .prepare(
            `SELECT r.id, o.lease_until AS leaseUntil FROM runs r JOIN owners o ON o.id = r.owner
             WHERE o.role = 'run' AND r.status = 'running'`,
          )
          .get(),
      ) as { id: string; leaseUntil: number } | undefined;
      return r;
    });
    run.kill('SIGKILL');
    await new Promise((r) => run.once('exit', r));

    const daemonOwner = readState(state, (db) =>
      db.prepare(`SELECT id FROM owners WHERE role = 'daemon'`).pluck().get(),
    ) as string;
    await untilDaemons(
      [d],
      'the daemon to take the run up',
      async () => {
        const r = readState(state, (db) =>
          db.prepare('SELECT owner, status FROM runs WHERE id = ?').get(held.id),
        ) as Row;
        return r.owner === daemonOwner ? r : undefined;
      },
      30_000,
    );
    expect(Date.now(), 'taken up before the dead process’s lease expired').to.be.below(held.leaseUntil);
  });
});
