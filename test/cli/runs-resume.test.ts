/**
 * `fleetbook runs resume ID`: a run whose `fleetbook run` was killed (SIGKILL) after the service accepted its
 * suspend, and before the carrier carried it out, is left `running` with no process to go on with it: from cron,
 * no daemon takes it up. `runs show` says so and how to go on; `runs resume` refuses while a live process holds
 * the run, and while a secret it still reads is not set, leaving the run as it is; then goes on with it in the
 * foreground, confirming the request the service accepted without sending it again. The built binary in child
 * processes, on an emulator of this process whose clock stands still until the test moves it (dist/ must be
 * built; `npm test` builds it).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'chai';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import type { RunSummary } from '../../src/store/store.js';
import { BIN, emulatorEnv, fleetbook } from '../helpers/cli.js';
import { readState, runsIn } from '../helpers/daemon.js';
import { tempDir } from '../helpers/temp.js';
import { accountDevices, imei } from '../runner/helpers.js';

const PLAYBOOK = join(import.meta.dirname, '..', 'fixtures', 'runs-resume', 'suspend-then-note.yaml');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('fleetbook runs resume of a run its killed process left (child processes)', function () {
  this.timeout(90_000);
  let emu: Emulator;
  let tmp: string;

  before(async () => {
    // The clock stands still: the carrier carries out a request only once the test moves it.
    emu = await startEmulator({ port: 0, timeScale: 0, faults: { processingSeconds: 30 } });
    tmp = tempDir('fleetbook-runs-resume-');
  });
  after(async () => {
    await emu?.close();
  });

  it('goes on with it from its checkpoints, confirming the accepted request without sending it again', async () => {
    const account = emu.defaults.accounts[0]!;
    const active = (await accountDevices(emu, account)).filter((d) => d.state === 'active').slice(0, 3);
    const imeis = active.map(imei);
    const state = join(tmp, 'state.db');
    const env = { ...emulatorEnv(emu), FLEETBOOK_STATE: state };
    const note = { FLEETBOOK_SECRET_NOTE: 'resume-note' };
    const child = spawn(
      process.execPath,
      [BIN, 'run', PLAYBOOK, '--input', `account=${account}`, '--input', `imeis=${JSON.stringify(imeis)}`],
      { env: { PATH: process.env.PATH ?? '', ...env, ...note }, stdio: 'ignore' },
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
      if (seen.filter((o) => o === 'accepted').length === 3) break;
      if (Date.now() > deadline) throw new Error(`the suspend was not accepted: ${seen.join(', ')}`);
      await sleep(50);
    }
    const runId = runsIn(state, 'suspend-then-note')[0]!.id;

    // Its process alive, waiting for the carrier: the run is that process's.
    const held = await fleetbook(['runs', 'resume', runId], { ...env, ...note });
    expect(held.code, held.stderr).to.equal(1);
    expect(held.stderr).to.match(
      new RegExp(
        `^fleetbook: run ${runId} of suspend-then-note is held by \`fleetbook run\` \\(pid ${child.pid} on `,
      ),
    );

    child.kill('SIGKILL');
    await exited;
    const shown = await fleetbook(['runs', 'show', runId], env);
    expect(shown.stdout).to.match(/: running\n/);
    expect(shown.stdout).to.include(
      `no process holds this run (the process that ran it stopped): \`fleetbook runs resume ${runId}\` goes on with it here, from its checkpoints; \`fleetbook runs cancel ${runId}\` ends it`,
    );

    // The note it still reads is a secret nobody set: refused, the run left as it is.
    const unset = await fleetbook(['runs', 'resume', runId.slice(0, 12)], env);
    expect([unset.code, unset.stderr]).to.deep.equal([
      2,
      `fleetbook: run ${runId}: playbook suspend-then-note reads secrets.NOTE, not set: set FLEETBOOK_SECRET_NOTE\n`,
    ]);
    expect(runsIn(state, 'suspend-then-note')[0]!.status).to.equal('running');

    // The carrier carries out the request; the resumed run confirms it by its status.
    emu.advance(60);
    const resumed = await fleetbook(['runs', 'resume', runId.slice(0, 12), '--json'], { ...env, ...note });
    expect(resumed.code, resumed.stderr).to.equal(0);
    const summary = JSON.parse(resumed.stdout) as RunSummary;
    expect([summary.runId, summary.status]).to.deep.equal([runId, 'succeeded']);
    expect(summary.steps.map((s) => [s.id, s.status])).to.deep.equal([
      ['suspend', 'succeeded'],
      ['note', 'succeeded'],
    ]);
    expect(summary.devices).to.include({ total: 3, succeeded: 3, accepted: 0, unconfirmed: 0 });
    // Sent once, by the killed process: the resumed run confirmed that request.
    const sent = emu.requests().filter((r) => r.action === 'devices.suspend');
    expect(sent.map((r) => r.status)).to.deep.equal(['Success']);
    expect(summary.steps[0]!.confirmation).to.deep.equal({ callback: 0, requestStatus: 3, stateRead: 0 });

    const again = await fleetbook(['runs', 'resume', runId], { ...env, ...note });
    expect([again.code, again.stderr]).to.deep.equal([
      1,
      `fleetbook: run ${runId} of suspend-then-note has ended (succeeded): nothing to resume\n`,
    ]);
  });
});
