/**
 * A `fleetbook run` killed (SIGKILL) mid-run, then `fleetbook serve` started on the same state file: the run it
 * takes up shows its steps as they were. A step the first process finished stays as it finished, whatever its
 * `if` gives now (the daemon's environment says otherwise): its checkpoint is the truth, and it is not skipped.
 * Before, the resumed run evaluated the `if` again before it read the checkpoint, and showed the step `skipped`.
 * The built binary in child processes, on an emulator of this process (dist/ must be built; `npm test` builds it).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'chai';
import type { RunSummary } from '../../src/store/store.js';
import { until } from '../helpers/browser.js';
import { BIN, fleetbook } from '../helpers/cli.js';
import { DaemonWorld, readState, runsIn, untilDaemons } from '../helpers/daemon.js';

const DIR = join(import.meta.dirname, '..', 'fixtures', 'resume-steps');

describe('a run killed and taken up by the daemon shows its steps as they were', function () {
  this.timeout(90_000);
  let world: DaemonWorld;

  before(async () => {
    world = await DaemonWorld.create('resume-steps', {
      user: 'resume-listener',
      password: 'resume-listener-password',
    });
  });
  after(async () => world?.close());

  /** The checkpoints of the run in `state`, by key, once the state file is there. */
  const checkpoints = (state: string): Record<string, Record<string, unknown>> => {
    try {
      return readState(state, (db) =>
        Object.fromEntries(
          (
            db.prepare('SELECT step_key, state_json FROM run_steps').all() as {
              step_key: string;
              state_json: string;
            }[]
          ).map((r) => [r.step_key, JSON.parse(r.state_json) as Record<string, unknown>]),
        ),
      );
    } catch {
      return {};
    }
  };

  /**
   * Runs `playbook` in a `fleetbook run` with `env`, kills it once `ready` holds of its checkpoints, and has a
   * `fleetbook serve` with `serveEnv` take the run up and end it; its summary as `runs show --json` gives it,
   * and the checkpoints as the killed process left them.
   */
  async function killedThenResumed(
    playbook: string,
    args: string[],
    env: Record<string, string>,
    serveEnv: Record<string, string>,
    ready: (cps: Record<string, Record<string, unknown>>) => boolean,
  ) {
    const state = world.state(`${playbook}.db`);
    // The service answers after a minute: the kill lands while the run is in its listing.
    world.emu.setFaults({ latencyMs: 60_000 });
    const child = spawn(process.execPath, [BIN, 'run', join(DIR, `${playbook}.yaml`), ...args], {
      env: { PATH: process.env.PATH ?? '', ...world.env({ FLEETBOOK_STATE: state, ...env }) },
      stdio: 'ignore',
    });
    const exited = new Promise<unknown>((resolve) => child.on('exit', resolve));
    const left = await until(
      'the run to get there',
      async (seen) => {
        const cps = checkpoints(state);
        seen(JSON.stringify(cps));
        return ready(cps) ? cps : undefined;
      },
      30_000,
      50,
    );
    child.kill('SIGKILL');
    await exited;
    world.emu.setFaults({ latencyMs: 0 });

    const daemon = await world.start(`serve ${playbook}`, DIR, { state, env: serveEnv });
    const runId = runsIn(state, playbook)[0]!.id;
    await untilDaemons([daemon], 'the run to end', async () => {
      const [run] = runsIn(state, playbook);
      return run && run.status !== 'running' && run.status !== 'queued' ? true : undefined;
    });
    await daemon.stop();
    const shown = JSON.parse(
      (await fleetbook(['runs', 'show', runId, '--json'], { FLEETBOOK_STATE: state })).stdout,
    ) as RunSummary;
    return { shown, left, state, runId };
  }

  it('a step it finished whose `if` is false now stays as it finished, with its times', async () => {
    const account = world.emu.defaults.accounts[0]!;
    const { shown, left } = await killedThenResumed(
      'greets-then-lists',
      ['--input', `account=${account}`],
      { GREETING: 'on' },
      { GREETING: 'off' },
      (cps) => cps.greet?.status === 'succeeded' && cps.listing !== undefined,
    );
    expect(shown.status).to.equal('succeeded');
    expect(shown.steps.map((s) => [s.id, s.status, s.reason ?? null])).to.deep.equal([
      ['greet', 'succeeded', null],
      ['listing', 'succeeded', null],
    ]);
    // When it ran: in the first process, as its checkpoint says, not when the run was taken up.
    const greet = shown.steps.find((s) => s.id === 'greet')!;
    expect([greet.startedAt, greet.endedAt]).to.deep.equal([left.greet!.startedAt, left.greet!.endedAt]);
  });
});
