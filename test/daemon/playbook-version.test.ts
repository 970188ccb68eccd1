/**
 * A run resumed after its playbook changed goes on with the version it was created with (playbook/version.ts):
 * the daemon killed mid-run, the playbook file edited, the daemon started again. Before, the resumed run took
 * the edited steps, with the checkpoints of the old ones: half one version, half the other.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import type { RunSummary } from '../../src/store/store.js';
import { DaemonWorld, type DaemonProcess } from '../helpers/daemon.js';

const TOKEN = 'version-test-daemon-token-0123456789';

/** The playbook, version `v`: a step, a wait the daemon is killed in, and a step after it. */
const playbook = (v: string, extra = '') => `version: 1
name: pinned
on: { manual: true }
steps:
  - id: first
    uses: log
    with: { message: '${v} first' }
  - id: hold
    wait: 2s
  - id: last
    uses: log
    with: { message: '${v} last' }
${extra}`;

describe('daemon: a run resumed after its playbook changed', function () {
  this.timeout(60_000);
  let world: DaemonWorld;
  let dir: string;
  before(async () => {
    world = await DaemonWorld.create('version', { user: 'version-listener', password: 'version-password' });
    dir = join(world.dir, 'playbooks');
    await mkdir(dir);
  });
  after(() => world.close());

  const start = (name: string) => world.start(name, dir, { env: { FLEETBOOK_DAEMON_TOKEN: TOKEN } });
  async function runOf(d: DaemonProcess, id: string): Promise<RunSummary> {
    return (await (await fetch(`${d.url}/runs/${id}`)).json()) as RunSummary;
  }

  it('goes on with the steps it started with; a new run takes the edited ones', async () => {
    await writeFile(join(dir, 'pinned.yaml'), playbook('v1'));
    const first = await start('daemon v1');
    const posted = await fetch(`${first.url}/playbooks/pinned/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: '{}',
    });
    const { runId } = (await posted.json()) as { runId: string };
    // Killed while the run waits, its first step done.
    const deadline = Date.now() + 10_000;
    while (!first.stderr.includes('v1 first') && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect(first.stderr).to.include('v1 first');
    await first.stop('SIGKILL');

    await writeFile(
      join(dir, 'pinned.yaml'),
      playbook('v2', '  - id: added\n    uses: log\n    with: { message: v2 added }\n'),
    );
    const second = await start('daemon v2');
    let run = await runOf(second, runId);
    while (run.status !== 'succeeded' && run.status !== 'failed' && Date.now() < deadline + 20_000) {
      await new Promise((r) => setTimeout(r, 100));
      run = await runOf(second, runId);
    }
    expect([run.status, run.error]).to.deep.equal(['succeeded', undefined]);
    expect(run.steps.map((s) => s.id)).to.deep.equal(['first', 'hold', 'last']);
    expect(second.stderr).to.include('v1 last');
    expect(second.stderr).not.to.include('v2 last');
    expect(second.stderr).to.include('the run goes on with the version of its playbook it was created with');

    const again = await fetch(`${second.url}/playbooks/pinned/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: '{}',
    });
    const next = ((await again.json()) as { runId: string }).runId;
    let edited = await runOf(second, next);
    while (edited.status !== 'succeeded' && edited.status !== 'failed' && Date.now() < deadline + 40_000) {
      await new Promise((r) => setTimeout(r, 100));
      edited = await runOf(second, next);
    }
    expect(edited.status).to.equal('succeeded');
    expect(edited.steps.map((s) => s.id)).to.deep.equal(['first', 'hold', 'last', 'added']);
    // Each summary names the version it executed.
    expect(run.version).to.match(/^[0-9a-f]{16}$/);
    expect(edited.version).to.match(/^[0-9a-f]{16}$/);
    expect(edited.version).not.to.equal(run.version);
    expect(second.stderr).to.include('v2 last');
  });

  it('does not start without a secret that a run to resume reads, and names the run; with it, the run ends', async () => {
    const secretDir = join(world.dir, 'playbooks-secret');
    await mkdir(secretDir);
    const state = join(world.dir, 'secret.db');
    const file = join(secretDir, 'pinned.yaml');
    const reads = (v: string) =>
      `version: 1
name: pinned
on: { manual: true }
steps:
  - id: first
    uses: log
    with: { message: '${v} first' }
  - id: hold
    wait: 2s
  - id: last
    uses: log
    with: { message: '${v} last with \${{ secrets.PINNED_KEY }}' }
`;
    const withSecret = { FLEETBOOK_DAEMON_TOKEN: TOKEN, FLEETBOOK_SECRET_PINNED_KEY: 'pinned-key-value' };
    await writeFile(file, reads('v1'));
    const first = await world.start('daemon v1 with the secret', secretDir, { state, env: withSecret });
    const posted = await fetch(`${first.url}/playbooks/pinned/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: '{}',
    });
    const { runId } = (await posted.json()) as { runId: string };
    const deadline = Date.now() + 10_000;
    while (!first.stderr.includes('v1 first') && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    await first.stop('SIGKILL');

    // The edited playbook no longer reads the secret, and the daemon is started without it: the run it would
    // resume still does, at a step it has not reached.
    await writeFile(file, playbook('v2'));
    const refused = await world
      .start('daemon v2 without the secret', secretDir, { state, env: { FLEETBOOK_DAEMON_TOKEN: TOKEN } })
      .then(
        () => undefined,
        (e: Error) => e.message,
      );
    expect(refused, 'the daemon started').to.be.a('string');
    expect(refused).to.include(runId);
    expect(refused).to.include('secrets.PINNED_KEY');
    expect(refused).to.include('FLEETBOOK_SECRET_PINNED_KEY');

    const third = await world.start('daemon v2 with the secret', secretDir, { state, env: withSecret });
    let run = await runOf(third, runId);
    while (run.status !== 'succeeded' && run.status !== 'failed' && Date.now() < deadline + 20_000) {
      await new Promise((r) => setTimeout(r, 100));
      run = await runOf(third, runId);
    }
    expect([run.status, run.error]).to.deep.equal(['succeeded', undefined]);
    expect(third.stderr).to.include('v1 last with');
  });
});
