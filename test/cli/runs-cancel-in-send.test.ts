/**
 * `fleetbook runs cancel` of a `fleetbook run` whose suspend is on its way, as a person does it: the built binary in
 * child processes, the emulator over loopback holding the suspend for its latency (it then acts, whoever still
 * listens). The holder cancels the run at its next lease renewal, while the request is in flight. The service has
 * the request and suspends the devices: `runs show --devices`, the run's counts and its `finally` say they are
 * `unconfirmed` (`OUTCOME UNKNOWN`), not `failed` (`FB_ABORTED`) as they did before.
 */
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import type { RunSummary } from '../../src/store/store.js';
import { BIN, deviceLine, emulatorEnv, fleetbook } from '../helpers/cli.js';
import { readState } from '../helpers/daemon.js';
import { tempDir } from '../helpers/temp.js';
import { accountDevices, calls, emulator, imei, onRequestRead, suspendYaml } from '../runner/helpers.js';

const SUSPEND_PATH = '/m2m/v1/devices/actions/suspend';
/** The emulator's latency once the run has logged in: the cancel, read within a third of the lease, lands within it. */
const LATENCY_MS = 5000;

describe('fleetbook runs cancel: a run whose device action is on its way', function () {
  this.timeout(60_000);

  it("records the request's devices unconfirmed, as the service may have acted on them", async () => {
    const emu = await emulator({ devicesPerAccount: 50 });
    try {
      const account = emu.defaults.accounts[0]!;
      const active = (await accountDevices(emu, account))
        .filter((d) => d.state === 'active')
        .slice(0, 3)
        .map(imei)
        .sort();
      const tmp = tempDir('fleetbook-runs-cancel-in-send-');
      const file = join(tmp, 'suspend.yaml');
      const state = join(tmp, 'state.db');
      await writeFile(
        file,
        suspendYaml(
          'suspend-then-cancel',
          account,
          active,
          '',
          `finally:
  - id: after
    uses: log
    with: { message: "after: \${{ steps.suspend.status }}, \${{ steps.suspend.devices.unconfirmed }} unconfirmed" }
`,
        ),
      );
      // The latency from the login on: the token request before it is answered at once.
      const slow = onRequestRead(emu, '/m2m/v1/session/login', 1, () =>
        emu.setFaults({ latencyMs: LATENCY_MS }),
      );
      const read = onRequestRead(emu, SUSPEND_PATH, 1, () => undefined);
      const child = spawn(process.execPath, [BIN, 'run', file, '--json'], {
        env: {
          PATH: process.env.PATH ?? '',
          ...emulatorEnv(emu),
          FLEETBOOK_STATE: state,
          FLEETBOOK_LEASE: '1s',
          FLEETBOOK_LOG_LEVEL: 'info',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
      await slow;
      await read;
      // The emulator holds the suspend: the run is cancelled from another process meanwhile.
      const [{ id }] = readState(state, (db) => db.prepare('SELECT id FROM runs').all()) as [{ id: string }];
      const cancel = await fleetbook(['runs', 'cancel', id], { FLEETBOOK_STATE: state });
      expect([cancel.code, cancel.stderr]).to.deep.equal([0, '']);
      expect(await exited, stderr).to.equal(1);
      const summary = JSON.parse(stdout) as RunSummary;
      expect([summary.status, summary.error]).to.deep.equal([
        'cancelled',
        'cancelled by `fleetbook runs cancel`',
      ]);
      expect(stderr).to.include('after: cancelled, 3 unconfirmed');
      // The service had the request: it suspends the devices once its latency has passed.
      for (let i = 0; ; i++) {
        const devices = (await calls(emu)).devices;
        if (active.every((d) => devices[d]?.some((m) => m.action === 'devices.suspend'))) break;
        expect(i, 'the emulator suspended the devices').to.be.below(500);
        await new Promise((r) => setTimeout(r, 20));
      }
      const shown = await fleetbook(['runs', 'show', id, '--devices'], { FLEETBOOK_STATE: state });
      expect([shown.code, shown.stderr]).to.deep.equal([0, '']);
      expect(shown.stdout).to.match(
        /\n {2}suspend +cancelled .* devices 3: 0 succeeded, 0 failed, 0 skipped, 3 unconfirmed \(cancelled by `fleetbook runs cancel`\)\n +3 × OUTCOME UNKNOWN\n/,
      );
      const lines = shown.stdout.split('\n');
      for (const deviceId of active)
        expect(lines).to.include(
          deviceLine({ step: 'suspend', deviceId, outcome: 'unconfirmed', errorType: 'OUTCOME UNKNOWN' }),
        );
    } finally {
      await emu.close();
    }
  });
});
