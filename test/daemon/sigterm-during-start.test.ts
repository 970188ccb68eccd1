/**
 * SIGTERM while `fleetbook serve` is still starting (registering its callback listener with a slow service, one
 * call per account and service, after it has resumed the unfinished runs) stops it as a SIGTERM after the start
 * does: it lets the running steps finish, checkpoints the rest, logs `stopped` and exits 0. Before, the signal
 * handlers were installed only once the start was over: the process died of the signal (exit 143), its resumed
 * runs cut off mid-step as by a SIGKILL, with no word in its log.
 *
 * The built binary in a child process, on an emulator of this process that answers every call after a while.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { DaemonProcess, DaemonWorld, untilDaemons } from '../helpers/daemon.js';

const PLAYBOOK = `version: 1
name: on-usage
on: { callback: { service: DeviceUsage } }
steps:
  - id: say
    uses: log
    with: { message: 'usage' }
`;

describe('daemon: SIGTERM during its start (child process)', function () {
  this.timeout(120_000);
  let world: DaemonWorld;
  before(async () => {
    world = await DaemonWorld.create('sigterm-start', { user: 'start-listener', password: 'start-password' });
  });
  after(() => world.close());

  it('stops cleanly, exit 0, while its registrations wait on the service', async () => {
    const playbooks = join(world.dir, 'on-usage.yaml');
    await writeFile(playbooks, PLAYBOOK);
    // Every answer late: the start waits on its session login (shared by every call, so not given up with the
    // registration that asked for it; it ends as it would) and then on its first registration.
    world.emu.setFaults({ latencyMs: 5_000 });
    const d = DaemonProcess.spawn('starting daemon', {
      playbooks,
      state: world.state(),
      env: world.env({
        FLEETBOOK_CALLBACK_URL: 'http://127.0.0.1:9',
        FLEETBOOK_CALLBACK_ACCOUNTS: world.emu.defaults.accounts[0] as string,
      }),
    });
    try {
      // Listening, its runs resumed, and not yet through its registrations.
      await untilDaemons([], 'the daemon listening', async () =>
        d.stderr.includes('"message":"listening"') ? true : undefined,
      );
      expect(d.stderr).to.not.include('fleetbook serve: listening on');
      d.proc.kill('SIGTERM');
      const exit = await d.exited;
      const messages = d.stderr
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => (JSON.parse(l) as { message: string }).message);
      expect({ exit, stopped: messages.includes('stopped') }, d.stderr).to.deep.equal({
        exit: { code: 0, signal: null },
        stopped: true,
      });
    } finally {
      world.emu.setFaults({ latencyMs: 0 });
      d.proc.kill('SIGKILL');
    }
  });
});
