/**
 * SIGTERM while `fleetbook serve` is still starting (registering its callback listener with a slow service, one
 * call per account and service, after it has resumed the unfinished runs) stops it as a SIGTERM after the start
 * does: it lets the running steps finish, checkpoints the rest, logs `stopped` and exits 0. Before, the signal
 * handlers were installed only once the start was over: the process died of the signal (exit 143), its resumed
 * runs cut off mid-step as by a SIGKILL, with no word in its log.
 *
 * The built binary in a child process, on an emulator of this process that answers every call after a while.
 */
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { BIN } from '../helpers/cli.js';
import { DaemonWorld, untilDaemons } from '../helpers/daemon.js';

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
    const child = spawn(process.execPath, [BIN, 'serve', '--playbooks', playbooks], {
      env: {
        PATH: process.env.PATH ?? '',
        ...world.env({
          FLEETBOOK_STATE: world.state(),
          FLEETBOOK_LISTEN: '127.0.0.1:0',
          FLEETBOOK_CALLBACK_URL: 'http://127.0.0.1:9',
          FLEETBOOK_CALLBACK_ACCOUNTS: world.emu.defaults.accounts[0] as string,
        }),
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (s: string) => (err += s));
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    try {
      // Listening, its runs resumed, and not yet through its registrations.
      await untilDaemons([], 'the daemon listening', async () =>
        err.includes('"message":"listening"') ? true : undefined,
      );
      expect(err).to.not.include('fleetbook serve: listening on');
      child.kill('SIGTERM');
      const exit = await exited;
      const messages = err
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => (JSON.parse(l) as { message: string }).message);
      expect({ exit, stopped: messages.includes('stopped') }, err).to.deep.equal({
        exit: { code: 0, signal: null },
        stopped: true,
      });
    } finally {
      world.emu.setFaults({ latencyMs: 0 });
      child.kill('SIGKILL');
    }
  });
});
