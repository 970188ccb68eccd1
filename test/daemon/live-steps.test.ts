/**
 * A run in progress shows its steps, from the checkpoints its process writes as it goes: `GET /runs/{id}`,
 * `fleetbook runs show` and `runs show --json` list the steps it ended as they ended (a step skipped by its `if`
 * too), the one it is in `running`, the rest `pending`; a loop under way is `running`, and so are the steps its
 * iterations reached. Before, a run in progress listed no step at all. And a run `fleetbook runs cancel` ends
 * while no process holds it (its daemon was killed) lists the steps its process ended, the one it was in
 * `cancelled`, the rest `unreached`: before, it listed none. A real `fleetbook serve` (dist/ must be built), on
 * an emulator over loopback, read by the built CLI on the same state file.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import type { Emulator } from '../../src/emulator/index.js';
import type { RunSummary } from '../../src/store/store.js';
import { until } from '../helpers/browser.js';
import { fleetbook } from '../helpers/cli.js';
import { DURATION, stepLines, took } from '../helpers/step-lines.js';
import { DaemonWorld, type DaemonProcess } from '../helpers/daemon.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'live-steps');
const TOKEN = 'live-steps-daemon-token';

type Json = Record<string, unknown>;
type Shown = Json & { steps?: RunSummary['steps'] };

const table = (s: Shown) => (s.steps ?? []).map((x) => [x.id, x.status, x.within ?? null]);

describe('a run in progress shows its steps (child process)', function () {
  this.timeout(90_000);
  let world: DaemonWorld;
  let emu: Emulator;
  let state: string;
  let daemon: DaemonProcess;
  const runs: Record<string, string> = {};

  before(async () => {
    world = await DaemonWorld.create('live-steps', {
      user: 'live-steps-listener',
      password: 'live-steps-listener-password',
    });
    emu = world.emu;
    state = world.state();
    daemon = await world.start('live-steps daemon', FIXTURES, { env: { FLEETBOOK_DAEMON_TOKEN: TOKEN } });
  });
  after(async () => world?.close());

  const get = (path: string): Promise<Shown> => daemon.getJson<Shown>(path);

  /** Starts a run of `playbook`, and waits for the daemon to log `line` (a step begun, a message). */
  async function started(playbook: string, line: (l: string) => boolean, inputs: Json = {}): Promise<string> {
    const runId = await daemon.startRun(playbook, TOKEN, inputs);
    await until(`run ${runId} of ${playbook} under way`, async (seen) => {
      seen(daemon.stderr.slice(-2000));
      return daemon.stderr.split('\n').some((l) => l.includes(runId) && line(l)) ? true : undefined;
    });
    return runId;
  }

  it('while it waits: the steps it ended as they ended, the one it is in `running`, the rest `pending`', async () => {
    const runId = (runs.goesOn = await started(
      'goes-on',
      (l) => l.includes('step started') && l.includes('"step":"hold"'),
    ));
    const api = await get(`/runs/${runId}`);
    expect([api.status, api.owner], JSON.stringify(api)).to.deep.equal(['running', (await self()).id]);
    expect(table(api), 'GET /runs/{id}').to.deep.equal([
      ['first', 'succeeded', null],
      ['quiet', 'skipped', null],
      ['each', 'succeeded', null],
      ['inner', 'succeeded', 'each'],
      ['hold', 'running', null],
      ['after', 'pending', null],
      ['bye', 'pending', null],
    ]);
    // The step it is in says when it began.
    expect(since(step(api, 'hold').startedAt, api.startedAt as string), JSON.stringify(api.steps)).to.equal(
      true,
    );
    // The skipped step says why; a step to come counts nothing yet, in the usual members.
    expect(api.steps!.find((x) => x.id === 'quiet')?.reason).to.equal('`if` was false');
    expect(api.steps!.find((x) => x.id === 'after')).to.deep.equal({
      id: 'after',
      status: 'pending',
      attempts: 0,
      calls: 0,
      devices: { total: 0, accepted: 0, succeeded: 0, failed: 0, skipped: 0, unconfirmed: 0, byError: {} },
    });

    const json = JSON.parse(
      (await fleetbook(['runs', 'show', runId, '--json'], { FLEETBOOK_STATE: state })).stdout,
    );
    expect((json as Shown).steps, 'runs show --json').to.deep.equal(api.steps);
    const text = await fleetbook(['runs', 'show', runId], { FLEETBOOK_STATE: state });
    expect(text.stdout.split('\n')[0]).to.equal(`run ${runId} of goes-on: running`);
    // Each step it ended says how long it took; the one it is in, how long so far and since when.
    const lines = stepLines(text.stdout);
    const hold = step(api, 'hold');
    expect(lines, `runs show: ${text.stdout}${text.stderr}`).to.deep.equal([
      ['  first', 'succeeded', took(step(api, 'first')), ''],
      ['  quiet', 'skipped', '-', '(`if` was false)'],
      ['  each', 'succeeded', took(step(api, 'each')), ''],
      ['    inner', 'succeeded', '-', ''],
      ['  hold', 'running', lines[4]![2]!, `(since ${hold.startedAt})`],
      ['  after', 'pending', '-', ''],
      ['  bye', 'pending', '-', ''],
    ]);
    expect(lines[4]![2], text.stdout).to.match(DURATION);
    expect(took(step(api, 'first'))).to.match(DURATION);
  });

  it('a loop under way is `running`, with the steps its iterations reached; those after it `pending`', async () => {
    const runId = (runs.waitsInside = await started('waits-inside', (l) => l.includes('noted item 1')));
    // The log line leaves as `note` runs: its checkpoint, and the wait's, come a moment later.
    const api = await until('the first iteration waiting', async (seen) => {
      const r = await get(`/runs/${runId}`);
      seen(JSON.stringify(r.steps));
      return r.steps?.some((x) => x.id === 'pause' && x.status !== 'pending') ? r : undefined;
    });
    expect(table(api), 'GET /runs/{id}').to.deep.equal([
      ['loop', 'running', null],
      ['note', 'running', 'loop'],
      ['pause', 'running', 'loop'],
      ['later', 'pending', 'loop'],
      ['done', 'pending', null],
    ]);
    const json = JSON.parse(
      (await fleetbook(['runs', 'show', runId, '--json'], { FLEETBOOK_STATE: state })).stdout,
    );
    expect((json as Shown).steps, 'runs show --json').to.deep.equal(api.steps);
  });

  /** The step `id` of `shown`, which must be there. */
  const step = (shown: Shown, id: string) => shown.steps!.find((x) => x.id === id)!;

  /** Whether `at` is a time between the run's start `from` and now. */
  const since = (at: string | undefined, from: string) =>
    typeof at === 'string' && Date.parse(at) >= Date.parse(from) && Date.parse(at) <= Date.now();

  it('a step skipped by its `if` is `skipped` at once, and the listing after it `running` since it began', async () => {
    // The service answers after a minute: the listing is under way all the while, and writes nothing as it goes.
    emu.setFaults({ latencyMs: 60_000 });
    try {
      const runId = await started(
        'skips-then-lists',
        (l) => l.includes('step started') && l.includes('"step":"listing"'),
        { account: emu.defaults.accounts[0] },
      );
      const api = await get(`/runs/${runId}`);
      expect(table(api), 'GET /runs/{id}').to.deep.equal([
        ['first', 'succeeded', null],
        ['quiet', 'skipped', null],
        ['listing', 'running', null],
        ['after', 'pending', null],
      ]);
      expect(step(api, 'quiet').reason).to.equal('`if` was false');
      // The step under way says when it began; one to come, none.
      expect(
        since(step(api, 'listing').startedAt, api.startedAt as string),
        JSON.stringify(api.steps),
      ).to.equal(true);
      expect(step(api, 'listing').endedAt).to.equal(undefined);
      expect(step(api, 'after').startedAt).to.equal(undefined);
      const json = JSON.parse(
        (await fleetbook(['runs', 'show', runId, '--json'], { FLEETBOOK_STATE: state })).stdout,
      ) as Shown;
      expect(json.steps, 'runs show --json').to.deep.equal(api.steps);
    } finally {
      emu.setFaults({ latencyMs: 0 });
    }
  });

  it('inside a loop, a step whose `if` was false in every iteration so far is `skipped`', async () => {
    const runId = await started('loop-skips', (l) => l.includes('noted item 2'));
    const api = await until('the second iteration waiting', async (seen) => {
      const r = await get(`/runs/${runId}`);
      seen(JSON.stringify(r.steps));
      return r.steps?.some((x) => x.id === 'pause' && x.status !== 'pending') ? r : undefined;
    });
    expect(table(api), 'GET /runs/{id}').to.deep.equal([
      ['loop', 'running', null],
      ['note', 'running', 'loop'],
      ['pause', 'running', 'loop'],
      ['never', 'skipped', 'loop'],
      ['done', 'pending', null],
    ]);
    expect(step(api, 'never').reason).to.equal('`if` was false');
    // The loop and the steps its iterations run say when they began.
    for (const id of ['loop', 'note', 'pause'])
      expect(since(step(api, id).startedAt, api.startedAt as string), id).to.equal(true);
  });

  it('a rescue under way is `running`, the rescue step after it `pending`', async () => {
    emu.setFaults({ latencyMs: 60_000 });
    try {
      const runId = await started(
        'rescued',
        (l) => l.includes('step failed') && l.includes('"step":"risky"'),
        { account: emu.defaults.accounts[0] },
      );
      const api = await until('the rescue under way', async (seen) => {
        const r = await get(`/runs/${runId}`);
        seen(JSON.stringify(r.steps));
        return r.steps?.some((x) => x.id === 'risky' && x.status !== 'pending') ? r : undefined;
      });
      expect(table(api), 'GET /runs/{id}').to.deep.equal([
        ['each', 'running', null],
        ['risky', 'running', 'each'],
        ['undo', 'running', 'risky'],
        ['tell', 'pending', 'risky'],
        ['after', 'pending', null],
      ]);
      expect(since(step(api, 'undo').startedAt, api.startedAt as string)).to.equal(true);
    } finally {
      emu.setFaults({ latencyMs: 0 });
    }
  });

  it('`runs cancel` of a run whose daemon was killed lists the steps it ended, the rest `unreached`', async () => {
    await daemon.kill();
    for (const id of Object.values(runs)) {
      const r = await fleetbook(['runs', 'cancel', id], { FLEETBOOK_STATE: state });
      expect([r.code, r.stderr]).to.deep.equal([0, '']);
    }
    const shown = async (id: string) =>
      JSON.parse(
        (await fleetbook(['runs', 'show', id, '--json'], { FLEETBOOK_STATE: state })).stdout,
      ) as Shown;
    const goesOn = await shown(runs.goesOn!);
    expect(goesOn.status).to.equal('cancelled');
    expect(table(goesOn), 'goes-on').to.deep.equal([
      ['first', 'succeeded', null],
      ['quiet', 'skipped', null],
      ['each', 'succeeded', null],
      ['inner', 'succeeded', 'each'],
      ['hold', 'cancelled', null],
      ['after', 'unreached', null],
      ['bye', 'unreached', null],
    ]);
    expect(table(await shown(runs.waitsInside!)), 'waits-inside').to.deep.equal([
      ['loop', 'cancelled', null],
      ['note', 'succeeded', 'loop'],
      ['pause', 'cancelled', 'loop'],
      ['later', 'unreached', 'loop'],
      ['done', 'unreached', null],
    ]);
    const text = await fleetbook(['runs', 'show', runs.goesOn!], { FLEETBOOK_STATE: state });
    expect(stepLines(text.stdout).map(([id, status]) => [id, status])).to.deep.equal([
      ['  first', 'succeeded'],
      ['  quiet', 'skipped'],
      ['  each', 'succeeded'],
      ['    inner', 'succeeded'],
      ['  hold', 'cancelled'],
      ['  after', 'unreached'],
      ['  bye', 'unreached'],
    ]);
  });

  /** This daemon's own owner, as /status names it. */
  async function self(): Promise<{ id: string }> {
    const status = (await get('/status')) as { owners?: { id: string; self?: boolean }[] };
    return status.owners!.find((o) => o.self)!;
  }
});
