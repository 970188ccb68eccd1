/**
 * The service's reason supersedes a state read's guess (product.md 5a, docs/ledger.md). A daemon killed while
 * the carrier works on its suspend misses the carrier's CarrierService messages, which the emulator sends again
 * later; the next daemon (on the same address) resumes the run and, before they come, asks the request's status
 * and reads the devices' state: each device is settled by that read, the refused ones `STATE NOT CHANGED`, the
 * ones already suspended `succeeded`. The messages that come after that carry the service's outcome and reason,
 * and the ledger records them in place of the read's guess, counted under `afterRun`. Real `fleetbook serve`
 * processes, a real emulator over loopback.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { DaemonProcess, DaemonWorld, readState, runsIn } from '../helpers/daemon.js';
import { expectLedgerIsTheTruth, mixOfStates, suspendLedger } from '../helpers/confirm.js';

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

  it('records the service reason of each device a resumed run settled by reading their state', async () => {
    world.emu.reset({ devicesPerAccount: 1000 });
    const mix = await mixOfStates(world.emu, account);
    const state = world.state('late-reasons.db');
    // The carrier acts once the test moves the emulator's clock; a message not acknowledged is sent again 8 s
    // later, long after the resumed run's first poll (300 ms).
    world.emu.setFaults({ processingSeconds: 30, callbackRetryMs: 8000 });
    const env = world.env({ FLEETBOOK_DAEMON_TOKEN: TOKEN, FLEETBOOK_CALLBACK_ACCOUNTS: account });
    const first = await DaemonProcess.start('first daemon', { playbooks: FIXTURES, state, env });
    started.push(first);
    const runId = await first.startRun('suspend-polled', TOKEN, { account, imeis: [...mix.keys()] });
    await until('the devices are accepted', () =>
      suspendLedger(state, runId).some((r) => r.outcome === 'accepted'),
    );
    await first.kill();
    // The carrier acts while no daemon listens: each message's first delivery fails.
    world.emu.advance(60);
    const port = Number(new URL(first.url).port);
    const second = await DaemonProcess.start('second daemon', { playbooks: FIXTURES, state, env, port });
    started.push(second);
    const status = () => runsIn(state, 'suspend-polled').find((r) => r.id === runId)?.status;
    await until('the resumed run ends', () => status() === 'succeeded');
    // Settled by the read of their state, before the messages came: the read's guess.
    const guessed = suspendLedger(state, runId);
    expect(
      guessed.filter((r) => r.errorType === 'STATE NOT CHANGED').length,
      JSON.stringify(guessed),
    ).to.equal(6);
    // The messages sent again reach the second daemon.
    await world.emu.callbacksIdle();
    const truth = () => {
      try {
        expectLedgerIsTheTruth(world.emu, suspendLedger(state, runId), true);
        return true;
      } catch {
        return false;
      }
    };
    await until('the service reasons are recorded', truth, 15_000).catch(() => false);
    const rows = suspendLedger(state, runId);
    expectLedgerIsTheTruth(world.emu, rows, true);
    const summary = readState(
      state,
      (db) =>
        JSON.parse(
          (db.prepare('SELECT summary_json FROM runs WHERE id = ?').get(runId) as { summary_json: string })
            .summary_json,
        ) as { steps: { id: string; confirmation?: unknown; devices: Record<string, unknown> }[] },
    );
    const step = summary.steps.find((s) => s.id === 'suspend')!;
    // The summary's counts say the service's reasons, and that its messages confirmed every device.
    expect(step.devices).to.deep.include({
      succeeded: 6,
      failed: 6,
      unconfirmed: 0,
      byError: { 'INVALID DEVICE STATE': 3, 'DEVICE DEACTIVATED': 3 },
    });
    expect(step.confirmation).to.deep.equal({ callback: 0, requestStatus: 0, stateRead: 0, afterRun: 12 });
  });
});
