/**
 * A run is cancelled from another process than the one that holds it: `fleetbook runs cancel` while `serve` runs
 * it, and the console's Cancel while a `fleetbook run` on the same state file runs it (as a console on one replica
 * while another holds the run). Before, the CLI refused a held run and the console answered 409 "executed by
 * another process": a deployment of replicas behind a load balancer could cancel a run only by luck. The holder
 * now reads the request at its next lease renewal and cancels the run as its own Cancel would: its `finally` runs.
 */
import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import type { RunSummary } from '../../src/store/store.js';
import { BIN, fleetbook } from '../helpers/cli.js';
import { DaemonWorld, readState, untilDaemons } from '../helpers/daemon.js';

const TOKEN = 'cancel-requests-token-0123456789';
/** Renewed every 500 ms: a request is read within that. */
const LEASE = '1500ms';

const PLAYBOOK = `version: 1
name: long-wait
on: { manual: true }
steps:
  - id: began
    uses: log
    with: { message: 'long-wait began' }
  - id: hold
    wait: 60s
  - id: never
    uses: log
    with: { message: 'long-wait never' }
finally:
  - id: tidy
    uses: log
    with: { message: 'long-wait finally ran' }
`;

/** A run whose `finally` waits: a second cancel is what stops it. */
const SLOW_FINALLY = `version: 1
name: slow-finally
on: { manual: true }
steps:
  - id: hold
    wait: 60s
finally:
  - id: undo
    wait: 60s
`;

describe('daemon: a run cancelled from another process than its holder', function () {
  this.timeout(60_000);
  let world: DaemonWorld;
  let dir: string;
  before(async () => {
    world = await DaemonWorld.create('cancel', { user: 'cancel-listener', password: 'cancel-password' });
    dir = join(world.dir, 'playbooks');
    await mkdir(dir);
    await writeFile(join(dir, 'long-wait.yaml'), PLAYBOOK);
    await writeFile(join(dir, 'slow-finally.yaml'), SLOW_FINALLY);
  });
  after(() => world.close());

  it('`fleetbook runs cancel` of a run serve holds: serve cancels it, and its finally runs', async () => {
    const state = world.state('held-by-serve.db');
    const d = await world.start('daemon', dir, {
      state,
      env: { FLEETBOOK_DAEMON_TOKEN: TOKEN, FLEETBOOK_LEASE: LEASE },
    });
    const runId = await d.startRun('long-wait', TOKEN);
    await untilDaemons([d], 'the run began', async () =>
      d.stderr.includes('long-wait began') ? true : undefined,
    );

    const r = await fleetbook(['runs', 'cancel', runId], { FLEETBOOK_STATE: state });
    expect([r.code, r.stderr]).to.deep.equal([0, '']);
    expect(r.stdout).to.match(
      new RegExp(
        `^run ${runId} of long-wait is held by \`fleetbook serve\` \\(pid ${d.proc.pid} on .*\\): asked it to cancel the run`,
      ),
    );
    const run = await untilDaemons([d], 'the run ended', async () => {
      const s = (await (await fetch(`${d.url}/runs/${runId}`)).json()) as RunSummary;
      return s.status === 'running' || s.status === 'queued' ? undefined : s;
    });
    expect([run.status, run.error]).to.deep.equal(['cancelled', 'cancelled by `fleetbook runs cancel`']);
    expect(run.steps.map((s) => [s.id, s.status])).to.deep.equal([
      ['began', 'succeeded'],
      ['hold', 'cancelled'],
      ['never', 'unreached'],
      ['tidy', 'succeeded'],
    ]);
    expect(d.stderr).to.include('long-wait finally ran');
    expect(d.stderr).not.to.include('long-wait never');
  });

  it('after `fleetbook runs cancel`, the console of the daemon that holds the run can still stop its finally', async () => {
    const state = world.state('second-cancel.db');
    const d = await world.start('daemon', dir, {
      state,
      env: { FLEETBOOK_DAEMON_TOKEN: TOKEN, FLEETBOOK_CONSOLE_TOKEN: TOKEN, FLEETBOOK_LEASE: LEASE },
    });
    const runId = await d.startRun('slow-finally', TOKEN);
    const detail = async () =>
      (await (
        await fetch(`${d.url}/console/api/runs/${runId}`, { headers: { authorization: `Bearer ${TOKEN}` } })
      ).json()) as { run: { status: string; cancelRequested?: string }; cancellable: boolean };
    await untilDaemons([d], 'the run waits', async () =>
      (await detail()).run.status === 'running' ? true : undefined,
    );
    const r = await fleetbook(['runs', 'cancel', runId], { FLEETBOOK_STATE: state });
    expect([r.code, r.stderr]).to.deep.equal([0, '']);
    // serve cancels it at its next renewal; its finally then waits.
    await untilDaemons([d], 'the finally waits', async () =>
      d.stderr.includes('"step":"undo"') ? true : undefined,
    );
    const during = await detail();
    expect([during.run.status, during.run.cancelRequested, during.cancellable]).to.deep.equal([
      'running',
      'cancelled by `fleetbook runs cancel`',
      true,
    ]);
    const again = await fetch(`${d.url}/console/api/runs/${runId}/cancel`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect([again.status, await again.json()]).to.deep.equal([202, { status: 'cancelling' }]);
    const run = await untilDaemons([d], 'the run ended', async () => {
      const s = (await (await fetch(`${d.url}/runs/${runId}`)).json()) as RunSummary;
      return s.status === 'running' || s.status === 'queued' ? undefined : s;
    });
    expect([run.status, run.error]).to.deep.equal(['cancelled', 'cancelled by `fleetbook runs cancel`']);
    expect(run.steps.map((s) => [s.id, s.status])).to.deep.equal([
      ['hold', 'cancelled'],
      ['undo', 'cancelled'],
    ]);
  });

  it("the console's Cancel of a run a `fleetbook run` holds: that process cancels it", async () => {
    const state = world.state('held-by-run.db');
    const d = await world.start('daemon', dir, {
      state,
      env: { FLEETBOOK_CONSOLE_TOKEN: TOKEN, FLEETBOOK_LEASE: LEASE },
    });
    // The run in a process of its own, on the daemon's state file. Its lease outlasts the pause below.
    const child = spawn(process.execPath, [BIN, 'run', join(dir, 'long-wait.yaml'), '--json'], {
      env: { PATH: process.env.PATH ?? '', ...world.env({ FLEETBOOK_STATE: state, FLEETBOOK_LEASE: '6s' }) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      // Its wait is marked begun: `began`'s checkpoint alone may commit in a store turn before `hold`'s mark.
      const runId = await untilDaemons([d], 'the run is stored and waits', async () =>
        readState(state, (db) => {
          const row = db
            .prepare(
              `SELECT r.id FROM runs r JOIN run_steps s ON s.run_id = r.id
               WHERE r.playbook = 'long-wait' AND r.status = 'running' AND s.step_key = 'hold'`,
            )
            .get() as { id: string } | undefined;
          return row?.id;
        }),
      );
      // Paused, the holder cannot read the request yet: what the console and the CLI say meanwhile is seen.
      child.kill('SIGSTOP');
      const cancel = await fetch(`${d.url}/console/api/runs/${runId}/cancel`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect([cancel.status, await cancel.json()]).to.deep.equal([202, { status: 'cancel requested' }]);
      const detail = (await (await fetch(`${d.url}/console/api/runs/${runId}`)).json()) as {
        run: { status: string; cancelRequested?: string };
        cancellable: boolean;
      };
      expect([detail.run.status, detail.run.cancelRequested, detail.cancellable]).to.deep.equal([
        'running',
        'cancelled from the console',
        false,
      ]);
      const shown = await fleetbook(['runs', 'show', runId], { FLEETBOOK_STATE: state });
      // Stopped, not gone: its lease holds, and it is the one that cancels the run.
      expect(shown.stdout).to.match(
        new RegExp(
          `^run ${runId} of long-wait: running\n(?:  .*\n)*  hold +running .*\n(?:  .*\n)*cancel requested \\(cancelled from the console\\): \`fleetbook run\` \\(pid ${child.pid} on .*\\), which holds the run, cancels it by its next lease renewal \\(within a third of FLEETBOOK_LEASE\\); its finally steps run there\n$`,
        ),
      );
      const listed = await fleetbook(['runs', 'list'], { FLEETBOOK_STATE: state });
      expect(listed.stdout).to.match(
        new RegExp(
          `^${runId}  \\S+  running, cancel requested  manual +long-wait +run pid ${child.pid} on \\S+$`,
          'm',
        ),
      );
      child.kill('SIGCONT');
      expect(await exited).to.equal(1);
      const summary = JSON.parse(out) as RunSummary;
      expect([summary.runId, summary.status, summary.error]).to.deep.equal([
        runId,
        'cancelled',
        'cancelled from the console',
      ]);
      expect(summary.steps.map((s) => [s.id, s.status])).to.deep.equal([
        ['began', 'succeeded'],
        ['hold', 'cancelled'],
        ['never', 'unreached'],
        ['tidy', 'succeeded'],
      ]);
      // Asked again once it has ended: refused.
      const again = await fetch(`${d.url}/console/api/runs/${runId}/cancel`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(again.status).to.equal(409);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
