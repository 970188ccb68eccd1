/**
 * The service's reason supersedes a state read's guess (product.md 5a, docs/ledger.md). A daemon killed while
 * the carrier works on its suspend misses the carrier's CarrierService messages, which the emulator sends again
 * later; the next daemon (on the same address) resumes the run and, before they come, asks the request's status
 * and reads the devices' state: each device is settled by that read, the refused ones `STATE NOT CHANGED`, the
 * ones already suspended `succeeded`. The messages that come after that carry the service's outcome and reason,
 * and the ledger records them in place of the read's guess, counted under `afterRun`: once the run has ended,
 * and as they come while it still goes on (a later step waits), when the run's own summary, written as it ends,
 * counts them too, once. Real `fleetbook serve` processes, a real emulator over loopback.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { DaemonProcess, DaemonWorld, readState, runsIn } from '../helpers/daemon.js';
import { expectLedgerIsTheTruth, mixOfStates, suspendLedger } from '../helpers/confirm.js';
import type { RunSummary } from '../../src/store/store.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'confirm');
const TOKEN = 'late-reasons-daemon-token-0123456789';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 30_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
  return true;
}

describe('daemon: a CarrierService message after a state read supersedes its guess', function () {
  this.timeout(120_000);
  let world: DaemonWorld;
  let account: string;
  const started: DaemonProcess[] = [];

  before(async () => {
    world = await DaemonWorld.create('late-reasons', {
      user: 'late-reasons',
      password: 'late-reasons-password',
    });
    account = world.emu.defaults.accounts[0]!;
  });
  after(async () => {
    for (const d of started) await d.kill();
    await world?.close();
  });

  /**
   * A run of `playbook` on the devices of a mix of states, resumed by a second daemon that settles them by reading
   * their state: the carrier acts while no daemon listens, and holds the messages it failed to deliver until the
   * test sends them again (`resendMissed`). Resolves once the read's guess is in the ledger.
   */
  async function settledByRead(playbook: string, file: string, inputs: Record<string, unknown> = {}) {
    world.emu.reset({ devicesPerAccount: 1000 });
    const mix = await mixOfStates(world.emu, account);
    const state = world.state(file);
    // The carrier acts once the test moves the emulator's clock; a message not acknowledged waits to be sent
    // again for longer than any test runs, until the test sends it.
    world.emu.setFaults({ processingSeconds: 30, callbackRetryMs: 3_600_000 });
    const env = world.env({ FLEETBOOK_DAEMON_TOKEN: TOKEN, FLEETBOOK_CALLBACK_ACCOUNTS: account });
    const first = await DaemonProcess.start('first daemon', { playbooks: FIXTURES, state, env });
    started.push(first);
    const runId = await first.startRun(playbook, TOKEN, { account, imeis: [...mix.keys()], ...inputs });
    await until('the devices are accepted', () =>
      suspendLedger(state, runId).some((r) => r.outcome === 'accepted'),
    );
    await first.kill();
    // The carrier acts while no daemon listens: each message's first delivery fails.
    world.emu.advance(60);
    const port = Number(new URL(first.url).port);
    const second = await DaemonProcess.start('second daemon', { playbooks: FIXTURES, state, env, port });
    started.push(second);
    const status = () => runsIn(state, playbook).find((r) => r.id === runId)?.status;
    // Settled by the read of their state, before the messages came: the read's guess.
    const guessed = () => suspendLedger(state, runId).filter((r) => r.errorType === 'STATE NOT CHANGED');
    await until('the read settles the devices', () => guessed().length === 6);
    return { state, runId, status, daemon: second };
  }

  /** Sends again the messages of the mix (one per device) that no daemon took: each waits to be sent again. */
  const resendMissed = () =>
    expect(world.emu.resendCallbacksNow(), 'the messages no daemon took').to.equal(12);

  /** Whether the ledger of the run's suspend step says what the service did, and why, of each device. */
  const truthOf = (state: string, runId: string) => () => {
    try {
      expectLedgerIsTheTruth(world.emu, suspendLedger(state, runId), true);
      return true;
    } catch {
      return false;
    }
  };

  /** The service's outcomes and reasons of the mix, confirmed by their messages after the read. */
  const SERVICE_COUNTS = {
    succeeded: 6,
    failed: 6,
    unconfirmed: 0,
    byError: { 'INVALID DEVICE STATE': 3, 'DEVICE DEACTIVATED': 3 },
  };
  const BY_MESSAGES = { callback: 0, requestStatus: 0, stateRead: 0, afterRun: 12 };

  /** The summary of the run's suspend step, as the state file keeps it. */
  const suspendSummary = (state: string, runId: string) =>
    readState(
      state,
      (db) =>
        JSON.parse(
          (db.prepare('SELECT summary_json FROM runs WHERE id = ?').get(runId) as { summary_json: string })
            .summary_json,
        ) as { steps: { id: string; confirmation?: unknown; devices: Record<string, unknown> }[] },
    ).steps.find((s) => s.id === 'suspend')!;

  it('records the service reason of each device a resumed run settled by reading their state', async () => {
    const { state, runId, status } = await settledByRead('suspend-polled', 'late-reasons.db');
    await until('the resumed run ends', () => status() === 'succeeded');
    // The messages sent again, after the run has ended, reach the second daemon.
    resendMissed();
    await world.emu.callbacksIdle();
    await until('the service reasons are recorded', truthOf(state, runId), 15_000).catch(() => false);
    expectLedgerIsTheTruth(world.emu, suspendLedger(state, runId), true);
    const step = suspendSummary(state, runId);
    // The summary's counts say the service's reasons, and that its messages confirmed every device.
    expect(step.devices).to.deep.include(SERVICE_COUNTS);
    expect(step.confirmation).to.deep.equal(BY_MESSAGES);
  });

  it('records them at once while the run is still going, and counts them once when it ends', async () => {
    const { state, runId, status, daemon } = await settledByRead('suspend-then-wait', 'late-running.db', {
      request: 'go-on',
    });
    // The messages sent again reach the second daemon while the run waits for its DeviceUsage callback.
    await until('the run waits for its callback', async () => {
      const live = await daemon.getJson<RunSummary>(`/runs/${runId}`);
      return live.steps.find((s) => s.id === 'hold')?.status === 'running';
    });
    resendMissed();
    await world.emu.callbacksIdle();
    await until('the service reasons are recorded', truthOf(state, runId), 15_000).catch(() => false);
    expectLedgerIsTheTruth(world.emu, suspendLedger(state, runId), true);
    expect(status(), 'the run, still waiting').to.equal('running');
    // What the run shows of itself meanwhile counts the service's word too.
    const live = await daemon.getJson<RunSummary>(`/runs/${runId}`);
    const shown = live.steps.find((s) => s.id === 'suspend')!;
    expect(shown.devices).to.deep.include(SERVICE_COUNTS);
    expect(shown.confirmation).to.deep.equal(BY_MESSAGES);

    const ack = await fetch(`${daemon.url}/callbacks/DeviceUsage`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        username: 'late-reasons',
        password: 'late-reasons-password',
        requestId: 'go-on',
        deviceResponse: { alertServiceResponse: { triggerName: 'overuse', accountName: account } },
      }),
    });
    expect(ack.status, await ack.clone().text()).to.equal(200);
    await until('the run ends', () => status() === 'succeeded');
    // The run's own summary, written as it ended, with the results recorded while it went on: each device once.
    const ended = await daemon.getJson<RunSummary>(`/runs/${runId}`);
    expect(ended.devices).to.deep.include(SERVICE_COUNTS);
    const step = ended.steps.find((s) => s.id === 'suspend')!;
    expect(step.devices).to.deep.include(SERVICE_COUNTS);
    expect(step.confirmation).to.deep.equal(BY_MESSAGES);
    expectLedgerIsTheTruth(world.emu, suspendLedger(state, runId), true);
  });
});
