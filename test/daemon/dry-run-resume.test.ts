/**
 * A `fleetbook run --dry-run` killed (SIGKILL) mid-run, then `fleetbook serve` started on the same state file:
 * the daemon takes the run up as it does any run a dead process left, and it must go on as what it was, a dry
 * run. Taken up as a real run, it sent the suspend the user had only asked to see planned. The built binary in
 * child processes, on an emulator of this process (dist/ must be built; `npm test` builds it).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'chai';
import type { RunSummary } from '../../src/store/store.js';
import { BIN, fleetbook } from '../helpers/cli.js';
import { DaemonWorld, runsIn } from '../helpers/daemon.js';
import { accountDevices, calls, imei, setFaults } from '../runner/helpers.js';

const DIR = join(import.meta.dirname, '..', 'fixtures', 'dry-run-resume');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a dry run killed and taken up by the daemon', function () {
  this.timeout(60_000);
  let world: DaemonWorld;

  before(async () => {
    world = await DaemonWorld.create('dry-run-resume', {
      user: 'dry-listener',
      password: 'dry-listener-password',
    });
  });
  after(async () => world?.close());

  it('goes on as a dry run: the suspend it plans is never sent', async () => {
    const account = world.emu.defaults.accounts[0]!;
    const device = imei((await accountDevices(world.emu, account)).find((d) => d.state === 'active')!);
    const state = world.state();
    // The listing answers slowly: the kill lands while the run is in it.
    await setFaults(world.emu, { latencyMs: 3000 });
    const child = spawn(
      process.execPath,
      [
        BIN,
        'run',
        join(DIR, 'look-then-suspend.yaml'),
        '--dry-run',
        '--input',
        `account=${account}`,
        '--input',
        `imei=${device}`,
      ],
      { env: { PATH: process.env.PATH ?? '', ...world.env({ FLEETBOOK_STATE: state }) }, stdio: 'ignore' },
    );
    const exited = new Promise<unknown>((resolve) => child.on('exit', resolve));
    const deadline = Date.now() + 20_000;
    for (;;) {
      let runs: { status: string }[] = [];
      try {
        runs = runsIn(state, 'look-then-suspend');
      } catch {
        // The state file is not there yet.
      }
      if (runs[0]?.status === 'running') break;
      if (Date.now() > deadline) throw new Error('the dry run never started');
      await sleep(50);
    }
    child.kill('SIGKILL');
    await exited;
    await setFaults(world.emu, { latencyMs: 0 });

    const daemon = await world.start('serve', DIR);
    const runId = runsIn(state, 'look-then-suspend')[0]!.id;
    for (;;) {
      const [run] = runsIn(state, 'look-then-suspend');
      if (run && run.status !== 'running' && run.status !== 'queued') break;
      if (Date.now() > deadline + 20_000)
        throw new Error(`the run did not end:\n${daemon.stderr.slice(-3000)}`);
      await sleep(50);
    }
    await daemon.stop();
    expect((await calls(world.emu)).actions['devices.suspend'] ?? 0, 'suspends sent').to.equal(0);
    const shown = JSON.parse(
      (await fleetbook(['runs', 'show', runId, '--json'], { FLEETBOOK_STATE: state })).stdout,
    ) as RunSummary;
    expect([shown.status, shown.dryRun]).to.deep.equal(['succeeded', true]);
    expect(shown.planned).to.deep.equal([
      { step: 'suspend', action: 'devices.suspend', calls: 1, devices: 1 },
    ]);
  });
});
