/**
 * `fleetbook runs cancel` of a run whose `fleetbook run` was killed (SIGKILL) inside a `forEach`, one iteration
 * waiting for the carrier: the summary it leaves says what a cancel in the process would have said. The step the
 * run was in is `cancelled`, not `succeeded` because the iterations before had succeeded, and it counts how its
 * devices were confirmed. The built binary in child processes, on an emulator of this process (dist/ must be
 * built; `npm test` builds it).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'chai';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import type { RunSummary } from '../../src/store/store.js';
import { BIN, emulatorEnv, fleetbook } from '../helpers/cli.js';
import { readState, runsIn } from '../helpers/daemon.js';
import { accountDevices, imei } from '../runner/helpers.js';
import { tempDir } from '../helpers/temp.js';

const PLAYBOOK = join(import.meta.dirname, '..', 'fixtures', 'confirm', 'suspend-one-by-one.yaml');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('fleetbook runs cancel of a run killed inside a forEach (child process)', function () {
  this.timeout(60_000);
  let emu: Emulator;
  let tmp: string;

  before(async () => {
    emu = await startEmulator({ port: 0, timeScale: 0 });
    tmp = tempDir('fleetbook-runs-cancel-killed-loop-');
  });
  after(async () => {
    await emu?.close();
  });

  it('shows the step it was in cancelled, with how its devices were confirmed', async () => {
    const account = emu.defaults.accounts[0]!;
    const active = (await accountDevices(emu, account)).filter((d) => d.state === 'active').slice(0, 3);
    const imeis = active.map(imei);
    // The carrier never carries out the third device's request: its iteration waits for it.
    emu.setFaults({ neverFinishDevices: [imeis[2]!] });
    const state = join(tmp, 'state.db');
    const env = { FLEETBOOK_STATE: state };
    const child = spawn(
      process.execPath,
      [BIN, 'run', PLAYBOOK, '--input', `account=${account}`, '--input', `imeis=${JSON.stringify(imeis)}`],
      { env: { PATH: process.env.PATH ?? '', ...emulatorEnv(emu), ...env }, stdio: 'ignore' },
    );
    const exited = new Promise<unknown>((resolve) => child.on('exit', resolve));
    const outcomes = () =>
      readState(state, (db) =>
        (db.prepare('SELECT outcome FROM device_results').all() as { outcome: string }[]).map(
          (r) => r.outcome,
        ),
      );
    const deadline = Date.now() + 30_000;
    for (;;) {
      let seen: string[] = [];
      try {
        seen = outcomes();
      } catch {
        // The state file is not there yet.
      }
      if (seen.filter((o) => o === 'succeeded').length === 2 && seen.includes('accepted')) break;
      if (Date.now() > deadline) throw new Error(`the third request was not accepted: ${seen.join(', ')}`);
      await sleep(50);
    }
    child.kill('SIGKILL');
    await exited;
    const runId = runsIn(state, 'suspend-one-by-one')[0]!.id;

    const cancel = await fleetbook(['runs', 'cancel', runId], env);
    expect([cancel.code, cancel.stderr]).to.deep.equal([0, '']);
    const shown = JSON.parse((await fleetbook(['runs', 'show', runId, '--json'], env)).stdout) as RunSummary;
    expect(shown.status).to.equal('cancelled');
    const steps = shown.steps.map((s) => [s.id, s.status, s.within ?? null]);
    expect(steps).to.deep.equal([
      ['each', 'cancelled', null],
      ['suspend', 'cancelled', 'each'],
    ]);
    const suspend = shown.steps.find((s) => s.id === 'suspend')!;
    expect(suspend.devices).to.include({ total: 3, succeeded: 2, unconfirmed: 1, accepted: 0 });
    // Without a listener, `fleetbook run` confirmed the first two by the request's status.
    expect(suspend.confirmation).to.deep.equal({ callback: 0, requestStatus: 2, stateRead: 0 });
    const text = await fleetbook(['runs', 'show', runId], env);
    expect(text.stdout).to.match(
      /suspend +cancelled +[\dhms -]+ calls \d+ devices 3: 2 succeeded, 0 failed, 0 skipped, 1 unconfirmed \(confirmed by callback 0, request status 2, state read 0\)/,
    );
  });
});
