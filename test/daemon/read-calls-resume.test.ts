/**
 * The calls of steps that only read, across a SIGKILL of a real `fleetbook serve` and the next one's resume: a
 * listing killed after some of its pages, and a plain read killed while it waited for its answer. The resumed step
 * lists (or reads) again from the start, and its calls count the requests sent before the kill too, as the service
 * received them. Before, neither had an under-way checkpoint: the resumed run counted only its own requests.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { DaemonWorld, readState, runsIn, untilDaemons } from '../helpers/daemon.js';
import { calls, onRequestRead } from '../runner/helpers.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'read-calls');
const TOKEN = 'read-calls-test-daemon-token-0123456789';

describe('daemon: the calls of a read killed and resumed', function () {
  this.timeout(120_000);
  let world: DaemonWorld;
  let account: string;

  before(async () => {
    world = await DaemonWorld.create('read-calls', { user: 'read-calls', password: 'read-calls-password' });
    account = world.emu.defaults.accounts[0]!;
  });
  beforeEach(() => world.emu.reset({ devicesPerAccount: 1000 }));
  after(async () => world?.close());

  const env = { FLEETBOOK_DAEMON_TOKEN: TOKEN };
  const received = async (action: string) => (await calls(world.emu)).actions[action] ?? 0;

  /** The calls of step `id` in the summary of run `runId`, once it ended. */
  const stepCalls = (state: string, runId: string, id: string) =>
    readState(state, (db) => {
      const row = db.prepare('SELECT summary_json FROM runs WHERE id = ?').get(runId) as {
        summary_json: string;
      };
      const summary = JSON.parse(row.summary_json) as { steps: { id: string; calls: number }[] };
      return summary.steps.find((s) => s.id === id)?.calls;
    });

  /**
   * Kills the first daemon (SIGKILL) in the turn the emulator has read the whole of its `nth` request to `path`,
   * while it waits for that request's answer with nothing else in flight; resumes the run in a second daemon, and
   * returns both counts.
   */
  async function killAndResume(
    name: string,
    playbook: string,
    action: string,
    kill: { path: string; nth: number },
  ): Promise<{ made: number; counted: number | undefined; beforeKill: number }> {
    const state = world.state(`${name}.db`);
    const before = await received(action);
    const first = await world.start(`${name}: first daemon`, FIXTURES, { state, env });
    let killed = false;
    void onRequestRead(world.emu, kill.path, kill.nth, () => {
      first.proc.kill('SIGKILL');
      killed = true;
    });
    const runId = await first.startRun(playbook, TOKEN, { account });
    await untilDaemons([first], 'the daemon killed as the request is read', async () => killed || undefined);
    await first.kill();
    // The request in flight at the kill reaches the service all the same: the emulator counts it as it answers,
    // once its latency has passed.
    await untilDaemons([first], 'the emulator to answer what the killed daemon sent', async () =>
      world.emu.requestsInFlight() === 0 ? true : undefined,
    );
    const beforeKill = (await received(action)) - before;
    world.emu.setFaults({ latencyMs: 0 });
    const second = await world.start(`${name}: second daemon`, FIXTURES, { state, env });
    await untilDaemons([second], 'the resumed run ends', async () =>
      runsIn(state, playbook).find((r) => r.id === runId)?.status === 'succeeded' ? true : undefined,
    );
    await second.kill();
    return {
      made: (await received(action)) - before,
      counted: stepCalls(state, runId, playbook === 'list-slowly' ? 'devices' : 'plans'),
      beforeKill,
    };
  }

  it('a listing killed after some of its pages counts those pages too', async () => {
    // Twenty pages of fifty devices, each answered after 100 ms. Killed as the fifth page is read: a kill at a
    // moment of the test's own choosing could land between a page's count and its leaving, a page counted that the
    // service never got.
    world.emu.setFaults({ latencyMs: 100 });
    const r = await killAndResume('listing', 'list-slowly', 'devices.list', {
      path: '/m2m/v1/devices/actions/list',
      nth: 5,
    });
    expect(r.beforeKill, 'pages received before the kill').to.equal(5);
    // Listed again whole after the restart.
    expect(r.made, 'pages the service received').to.be.at.least(r.beforeKill + 20);
    expect(r.counted, 'the step counts every page sent').to.equal(r.made);
  });

  it('a plain read killed while it waits for its answer counts the request it sent', async () => {
    // Every answer takes a second: killed as the read's request is read, while the read waits for its answer,
    // whatever the machine's speed.
    world.emu.setFaults({ latencyMs: 1000 });
    const r = await killAndResume('read', 'read-once', 'plans.list', {
      path: `/m2m/v1/plans/${encodeURIComponent(account)}`,
      nth: 1,
    });
    expect(r.beforeKill, 'the read sent before the kill').to.equal(1);
    expect(r.made, 'reads the service received').to.equal(2);
    expect(r.counted, 'the step counts both').to.equal(2);
  });
});
