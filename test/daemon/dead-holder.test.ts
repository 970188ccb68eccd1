/**
 * A `fleetbook run` killed on the daemon's own host, with a long lease: the daemon knows its process is gone (the
 * same host and boot, no such pid), as `fleetbook serve` knew at its start. It waited until the dead process's
 * lease expired (FLEETBOOK_LEASE of that process, 60 s here) before it took the run up, where `runs show` and the
 * console say a live serve takes it up at its next lease renewal. Now every renewal lets go of the owners known
 * to be gone, and the run is taken up while the dead process's lease would still have held.
 */
import { spawn, spawnSync } from 'node:child_process';
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

  // Containers with the host's network share its host name and boot id, but not its pids: a pid of another pid
  // namespace may be no process here. Such a live owner was taken for dead (and, now at every renewal, let go).
  it('leaves alone a live `fleetbook run` of another pid namespace on this host', async function () {
    if (spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status !== 0) this.skip();
    const dir = join(world.dir, 'playbooks-ns');
    await mkdir(dir);
    await writeFile(join(dir, 'long-wait.yaml'), PLAYBOOK);
    const state = world.state('other-namespace.db');
    const d = await world.start('daemon', dir, { state, env: { FLEETBOOK_LEASE: '1500ms' } });
    // A pid that is no process here, given to the run in its namespace.
    let pid = 32_000;
    while (alive(pid)) pid--;
    const run = spawn(
      'unshare',
      [
        '--pid',
        '--fork',
        '--mount-proc',
        '--kill-child',
        'sh',
        '-c',
        `echo ${pid - 1} > /proc/sys/kernel/ns_last_pid; "${process.execPath}" "${BIN}" run "${join(dir, 'long-wait.yaml')}" & wait`,
      ],
      { env: { ...world.env(), FLEETBOOK_STATE: state, FLEETBOOK_LEASE: '60s' }, stdio: 'ignore' },
    );
    try {
      const held = await untilDaemons(
        [d],
        'the run held by `fleetbook run` in its namespace',
        async () =>
          readState(state, (db) =>
            db
              .prepare(
                `SELECT r.id, o.id AS owner, o.pid FROM runs r JOIN owners o ON o.id = r.owner
               WHERE o.role = 'run' AND r.status = 'running'`,
              )
              .get(),
          ) as { id: string; owner: string; pid: number } | undefined,
      );
      expect(held.pid, 'its pid in its namespace').to.equal(pid);
      // Three renewals of the daemon (every 500 ms): each would have let it go.
      const renewals = new Set<number>();
      await untilDaemons([d], 'three renewals of the daemon', async () => {
        renewals.add(
          readState(state, (db) =>
            db.prepare(`SELECT lease_until FROM owners WHERE role = 'daemon'`).pluck().get(),
          ) as number,
        );
        return renewals.size > 3 ? true : undefined;
      });
      const now = readState(state, (db) =>
        db.prepare('SELECT owner, status FROM runs WHERE id = ?').get(held.id),
      ) as Row;
      expect(now, 'the run, still held by `fleetbook run`').to.deep.equal({
        owner: held.owner,
        status: 'running',
      });
      expect(run.exitCode, '`fleetbook run` still running').to.equal(null);
    } finally {
      run.kill('SIGKILL');
    }
  });
});

/** Whether a process of this pid is there, as this process sees pids. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
