/**
 * A run resumed after its playbook changed goes on with the version it was created with (playbook/version.ts):
 * the daemon killed mid-run, the playbook file edited, the daemon started again. Before, the resumed run took
 * the edited steps, with the checkpoints of the old ones: half one version, half the other. And a run to resume
 * that reads a secret not set stops the start, as a loaded playbook that reads one does.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import type { RunSummary } from '../../src/store/store.js';
import { fleetbook } from '../helpers/cli.js';
import { DaemonWorld, readState, type DaemonProcess } from '../helpers/daemon.js';

const TOKEN = 'version-test-daemon-token-0123456789';

/**
 * The playbook, version `v`: a step that logs `first`, a wait the daemon is killed in, and a step after it that
 * logs `last`; `extra` after them (more steps, a `finally`).
 */
const playbook = (v: string, extra = '', last = `${v} last`, first = `${v} first`) => `version: 1
name: pinned
on: { manual: true }
steps:
  - id: first
    uses: log
    with: { message: '${first}' }
  - id: hold
    wait: 2s
  - id: last
    uses: log
    with: { message: '${last}' }
${extra}`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('daemon: a run resumed after its playbook changed', function () {
  this.timeout(60_000);
  let world: DaemonWorld;
  before(async () => {
    world = await DaemonWorld.create('version', { user: 'version-listener', password: 'version-password' });
  });
  after(() => world.close());

  /** A directory of playbooks and a state file of their own, for one test. */
  async function place(name: string): Promise<{ dir: string; file: string; state: string }> {
    const dir = join(world.dir, name);
    await mkdir(dir);
    return { dir, file: join(dir, 'pinned.yaml'), state: join(world.dir, `${name}.db`) };
  }

  async function runOf(d: DaemonProcess, id: string): Promise<RunSummary> {
    return (await (await fetch(`${d.url}/runs/${id}`)).json()) as RunSummary;
  }

  /** Starts a run of `pinned` on `d`: its id. */
  const startRun = (d: DaemonProcess): Promise<string> => d.startRun('pinned', TOKEN);

  /** Kills `d` while its run waits, once the run's first step (of version `v`) has logged. */
  async function killAfterFirst(d: DaemonProcess, v: string): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (!d.stderr.includes(`${v} first`) && Date.now() < deadline) await sleep(50);
    expect(d.stderr).to.include(`${v} first`);
    await d.stop('SIGKILL');
  }

  /** Kills `d` once its log has a line with each of `texts` (a step started, a message logged). */
  async function killAt(d: DaemonProcess, ...texts: string[]): Promise<void> {
    const seen = () => d.stderr.split('\n').some((line) => texts.every((t) => line.includes(t)));
    const deadline = Date.now() + 10_000;
    while (!seen() && Date.now() < deadline) await sleep(50);
    expect(seen(), texts.join(' ')).to.equal(true);
    await d.stop('SIGKILL');
  }

  /**
   * Kills `d` once its log has `logged` and the checkpoint that ends its run's step `first` is in the state file,
   * as another process reads it. (Its log says the next step started in the same turn of the event loop as `first`
   * ended, before the turn's writes commit; and the step's start mark, `running`, may be committed before its
   * end.)
   */
  async function killOnceFirstEnded(
    d: DaemonProcess,
    state: string,
    runId: string,
    logged: string,
  ): Promise<void> {
    const ended = () =>
      d.stderr.includes(logged) &&
      readState(state, (db) =>
        db
          .prepare(
            `SELECT 1 FROM run_steps WHERE run_id = ? AND step_key = 'first' AND json_extract(state_json, '$.status') = 'succeeded'`,
          )
          .get(runId),
      ) !== undefined;
    const deadline = Date.now() + 10_000;
    while (!ended() && Date.now() < deadline) await sleep(20);
    expect(ended(), `${logged} logged and the step first checkpointed`).to.equal(true);
    await d.stop('SIGKILL');
  }

  /** The message of a start that failed, or undefined when the daemon started. */
  const startFails = (name: string, dir: string, state: string, env: Record<string, string>) =>
    world.start(name, dir, { state, env }).then(
      () => undefined,
      (e: Error) => e.message,
    );

  /** What a refused start says of the run to resume that reads PINNED_KEY, not set. */
  function refusedFor(refused: string | undefined, runId: string): void {
    expect(refused, 'the daemon started').to.be.a('string');
    expect(refused).to.include('runs to resume cannot go on; not starting:\n');
    expect(refused).to.match(
      new RegExp(
        `run ${runId}: playbook pinned \\(version [0-9a-f]{16}\\) reads secrets\\.PINNED_KEY, not set: set FLEETBOOK_SECRET_PINNED_KEY\n`,
      ),
    );
    expect(refused).to.include(
      'Set each variable, or end such a run without resuming it: fleetbook runs cancel ID',
    );
  }

  /** The run's summary once it has ended, within 20 s. */
  async function ended(d: DaemonProcess, id: string): Promise<RunSummary> {
    const deadline = Date.now() + 20_000;
    let run = await runOf(d, id);
    while (run.status !== 'succeeded' && run.status !== 'failed' && Date.now() < deadline) {
      await sleep(100);
      run = await runOf(d, id);
    }
    return run;
  }

  it('goes on with the steps it started with; a new run takes the edited ones', async () => {
    const { dir, file, state } = await place('playbooks');
    const start = (name: string) => world.start(name, dir, { state, env: { FLEETBOOK_DAEMON_TOKEN: TOKEN } });
    await writeFile(file, playbook('v1'));
    const first = await start('daemon v1');
    const runId = await startRun(first);
    await killAfterFirst(first, 'v1');

    await writeFile(file, playbook('v2', '  - id: added\n    uses: log\n    with: { message: v2 added }\n'));
    const second = await start('daemon v2');
    expect(second.stderr).to.include('resuming unfinished runs');
    const run = await ended(second, runId);
    expect([run.status, run.error]).to.deep.equal(['succeeded', undefined]);
    expect(run.steps.map((s) => s.id)).to.deep.equal(['first', 'hold', 'last']);
    expect(second.stderr).to.include('v1 last');
    expect(second.stderr).not.to.include('v2 last');
    expect(second.stderr).to.include('the run goes on with the version of its playbook it was created with');

    const edited = await ended(second, await startRun(second));
    expect(edited.status).to.equal('succeeded');
    expect(edited.steps.map((s) => s.id)).to.deep.equal(['first', 'hold', 'last', 'added']);
    // Each summary names the version it executed.
    expect(run.version).to.match(/^[0-9a-f]{16}$/);
    expect(edited.version).to.match(/^[0-9a-f]{16}$/);
    expect(edited.version).not.to.equal(run.version);
    expect(second.stderr).to.include('v2 last');
  });

  it('does not start without a secret that a run to resume reads, and names the run; with it, the run ends', async () => {
    const { dir, file, state } = await place('playbooks-secret');
    const withSecret = { FLEETBOOK_DAEMON_TOKEN: TOKEN, FLEETBOOK_SECRET_PINNED_KEY: 'pinned-key-value' };
    await writeFile(file, playbook('v1', '', 'v1 last with ${{ secrets.PINNED_KEY }}'));
    const first = await world.start('daemon v1 with the secret', dir, { state, env: withSecret });
    const runId = await startRun(first);
    await killAfterFirst(first, 'v1');

    // The edited playbook no longer reads the secret, and the daemon is started without it: the run it would
    // resume still does, at a step it has not reached.
    await writeFile(file, playbook('v2'));
    const refused = await world
      .start('daemon v2 without the secret', dir, { state, env: { FLEETBOOK_DAEMON_TOKEN: TOKEN } })
      .then(
        () => undefined,
        (e: Error) => e.message,
      );
    expect(refused, 'the daemon started').to.be.a('string');
    expect(refused).to.include(runId);
    expect(refused).to.include('secrets.PINNED_KEY');
    expect(refused).to.include('FLEETBOOK_SECRET_PINNED_KEY');

    expect(refused).to.include('fleetbook runs cancel ID');

    const third = await world.start('daemon v2 with the secret', dir, { state, env: withSecret });
    const run = await ended(third, runId);
    expect([run.status, run.error]).to.deep.equal(['succeeded', undefined]);
    expect(third.stderr).to.include('v1 last with');
  });

  it('without the secret, `fleetbook runs cancel` ends the run no process holds, and the daemon starts', async () => {
    const { dir, file, state } = await place('playbooks-cancel');
    const env = { FLEETBOOK_DAEMON_TOKEN: TOKEN };
    await writeFile(file, playbook('v1', '', 'v1 last with ${{ secrets.PINNED_KEY }}'));
    const first = await world.start('daemon v1 with the secret', dir, {
      state,
      env: { ...env, FLEETBOOK_SECRET_PINNED_KEY: 'pinned-key-value' },
    });
    const runId = await startRun(first);
    await killAfterFirst(first, 'v1');

    await writeFile(file, playbook('v2'));
    const cancelled = await fleetbook(['runs', 'cancel', runId.slice(0, 12)], { FLEETBOOK_STATE: state });
    expect([cancelled.code, cancelled.stderr]).to.deep.equal([0, '']);
    expect(cancelled.stdout).to.equal(
      `run ${runId} of pinned cancelled; its finally steps did not run.\nIt had recorded no device outcome.\n`,
    );
    const again = await fleetbook(['runs', 'cancel', runId], { FLEETBOOK_STATE: state });
    expect([again.code, again.stderr]).to.deep.equal([
      1,
      `fleetbook: run ${runId} has already ended (cancelled): nothing to cancel\n`,
    ]);

    // Nothing is left to resume: the daemon starts without the secret, and does not run the cancelled run.
    const second = await world.start('daemon v2 without the secret', dir, { state, env });
    const run = await runOf(second, runId);
    expect([run.status, run.error]).to.deep.equal([
      'cancelled',
      'cancelled by `fleetbook runs cancel` while no process held it: its finally steps did not run',
    ]);
    // serve claims the runs to resume before it listens: it found none (as the first test's serve finds one).
    expect(second.stderr).not.to.include('resuming unfinished runs');
  });

  it('starts without a secret that only a step the run finished read, and the run ends', async () => {
    const { dir, file, state } = await place('playbooks-finished-secret');
    const env = { FLEETBOOK_DAEMON_TOKEN: TOKEN };
    await writeFile(file, playbook('v1', '', 'v1 last', 'v1 first with ${{ secrets.PINNED_KEY }}'));
    const first = await world.start('daemon v1 with the secret', dir, {
      state,
      env: { ...env, FLEETBOOK_SECRET_PINNED_KEY: 'pinned-key-value' },
    });
    const runId = await startRun(first);
    // `first` has ended and its checkpoint is committed: the secret was read; the run waits in `hold` (2 s).
    await killOnceFirstEnded(first, state, runId, 'v1 first with');

    // The secret rotated away, the step that read it edited out: the run still to resume no longer reads it.
    await writeFile(file, playbook('v2'));
    const second = await world.start('daemon v2 without the secret', dir, { state, env });
    expect(second.stderr).to.include('resuming unfinished runs');
    const run = await ended(second, runId);
    expect([run.status, run.error]).to.deep.equal(['succeeded', undefined]);
    expect(run.steps.map((s) => [s.id, s.status])).to.deep.equal([
      ['first', 'succeeded'],
      ['hold', 'succeeded'],
      ['last', 'succeeded'],
    ]);
    // `first` was not run again, `last` was.
    expect(second.stderr).not.to.include('v1 first');
    expect(second.stderr).to.include('v1 last');
  });

  it('does not start without a secret that the iterations of a forEach still to run read', async () => {
    const { dir, file, state } = await place('playbooks-foreach-secret');
    const env = { FLEETBOOK_DAEMON_TOKEN: TOKEN };
    const loop = `  - id: each
    forEach:
      items: [1, 2, 3]
      steps:
        - id: note
          uses: log
          with: { message: 'v1 item \${{ item }} with \${{ secrets.PINNED_KEY }}' }
        - id: pause
          wait: 1s
`;
    await writeFile(file, playbook('v1', loop));
    const first = await world.start('daemon v1 with the secret', dir, {
      state,
      env: { ...env, FLEETBOOK_SECRET_PINNED_KEY: 'pinned-key-value' },
    });
    const runId = await startRun(first);
    // The first iteration has read the secret; the third has not.
    await killAt(first, 'v1 item 1 with');

    await writeFile(file, playbook('v2'));
    refusedFor(await startFails('daemon v2 without the secret', dir, state, env), runId);
  });

  it('does not start without a secret that a finally step reads, and with it the run ends', async () => {
    const { dir, file, state } = await place('playbooks-finally-secret');
    const env = { FLEETBOOK_DAEMON_TOKEN: TOKEN };
    const withSecret = { ...env, FLEETBOOK_SECRET_PINNED_KEY: 'pinned-key-value' };
    const cleanup = `finally:
  - id: cleanup
    uses: log
    with: { message: 'v1 cleanup with \${{ secrets.PINNED_KEY }}' }
`;
    await writeFile(file, playbook('v1', cleanup));
    const first = await world.start('daemon v1 with the secret', dir, { state, env: withSecret });
    const runId = await startRun(first);
    await killAt(first, '"step started"', '"step":"hold"');

    await writeFile(file, playbook('v2'));
    refusedFor(await startFails('daemon v2 without the secret', dir, state, env), runId);

    const third = await world.start('daemon v2 with the secret', dir, { state, env: withSecret });
    const run = await ended(third, runId);
    expect([run.status, run.error]).to.deep.equal(['succeeded', undefined]);
    expect(third.stderr).to.include('v1 cleanup with');
  });
});
