/**
 * Confirmed outcomes in the daemon (issue: the ledger recorded what the service accepted). A real `fleetbook
 * serve` suspends a mix of active, suspended, pending and deactive devices: with its listener registered, each
 * device is confirmed by its CarrierService message, with the service's reason for the refused ones; killed
 * (SIGKILL) after the service accepted the request and before the carrier acted, the next daemon confirms the
 * same request without sending it again. Each time, every device's ledger outcome equals the emulator's own
 * record of what it did.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { fleetbook } from '../helpers/cli.js';
import { DaemonWorld, readState, runsIn, type DaemonProcess } from '../helpers/daemon.js';
import { expectLedgerIsTheTruth, mixOfStates, suspendLedger } from '../helpers/confirm.js';
import { calls, onRequestRead } from '../runner/helpers.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'confirm');
const TOKEN = 'confirm-test-daemon-token-0123456789';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

describe('daemon: confirmed per-device outcomes', function () {
  this.timeout(120_000);
  let world: DaemonWorld;
  let account: string;
  let mix: Map<string, string>;

  before(async () => {
    world = await DaemonWorld.create('confirm', { user: 'confirm-test', password: 'confirm-test-password' });
    account = world.emu.defaults.accounts[0]!;
  });
  beforeEach(async () => {
    world.emu.reset({ devicesPerAccount: 1000 });
    mix = await mixOfStates(world.emu, account);
  });
  after(async () => world?.close());

  const env = (): Record<string, string> => ({
    FLEETBOOK_DAEMON_TOKEN: TOKEN,
    FLEETBOOK_LOG_LEVEL: 'info',
    // The account whose CarrierService messages the listener registers for.
    FLEETBOOK_CALLBACK_ACCOUNTS: account,
  });

  const start = (d: DaemonProcess, playbook = 'suspend-mix', imeis = [...mix.keys()]): Promise<string> =>
    d.startRun(playbook, TOKEN, { account, imeis });

  const status = (state: string, runId: string, playbook = 'suspend-mix') =>
    runsIn(state, playbook).find((r) => r.id === runId)?.status;
  const summaryOf = (state: string, runId: string) =>
    readState(state, (db) =>
      JSON.parse(
        (db.prepare('SELECT summary_json FROM runs WHERE id = ?').get(runId) as { summary_json: string })
          .summary_json,
      ),
    ) as { steps: { id: string; confirmation?: unknown; devices: Record<string, number> }[] };

  it('confirms each device by its CarrierService message, with the reason of the refused ones', async () => {
    const state = world.state('listener.db');
    const daemon = await world.start('listening daemon', FIXTURES, { state, env: env() });
    const runId = await start(daemon);
    await until('the run ends', () => status(state, runId) === 'succeeded');
    const rows = suspendLedger(state, runId);
    expect(rows).to.have.length(12);
    expectLedgerIsTheTruth(world.emu, rows, true);
    const step = summaryOf(state, runId).steps.find((s) => s.id === 'suspend')!;
    expect(step.confirmation).to.deep.equal({ callback: 12, requestStatus: 0, stateRead: 0 });
    expect(step.devices).to.include({ succeeded: 6, failed: 6, unconfirmed: 0 });
    // The metrics count the confirmed outcomes too.
    const metrics = await (await fetch(`${daemon.url}/metrics`)).text();
    expect(metrics).to.match(/fleetbook_device_outcomes_total\{playbook="suspend-mix",outcome="failed"\} 6/);
    expect(metrics).to.match(
      /fleetbook_device_outcomes_total\{playbook="suspend-mix",outcome="succeeded"\} 6/,
    );
  });

  it('confirms by callback while the run queue is full and the matcher holds back', async () => {
    const state = world.state('backlog.db');
    // The carrier acts once the test moves the emulator's clock; one run at a time.
    world.emu.setFaults({ processingSeconds: 30 });
    const daemon = await world.start('backlogged daemon', FIXTURES, {
      state,
      env: { ...env(), FLEETBOOK_MAX_RUNS: '1' },
    });
    const runId = await start(daemon);
    await until('the devices are accepted', () =>
      suspendLedger(state, runId).some((r) => r.outcome === 'accepted'),
    );
    // 1,200 callbacks, each starting a run that waits behind the confirming one: more than the matcher lets
    // queue (1,000), so it stops taking stored messages until the queue drains.
    const posts = Array.from({ length: 1200 }, (_, i) => i);
    for (let i = 0; i < posts.length; i += 50)
      await Promise.all(
        posts.slice(i, i + 50).map(async (n) => {
          const res = await fetch(`${daemon.url}/callbacks/DeviceUsage`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({
              username: 'confirm-test',
              password: 'confirm-test-password',
              requestId: `usage-${n}`,
              deviceResponse: { alertServiceResponse: { triggerName: 'queue', accountName: account } },
            }),
          });
          expect(res.status).to.equal(200);
        }),
      );
    await until('the queue holds the runs', async () => {
      const s = (await (await fetch(`${daemon.url}/status`)).json()) as { runs: { queued: number } };
      return s.runs.queued > 1000;
    });
    // The carrier acts now: its messages are stored behind the 1,200 and must still reach the confirming run,
    // which asks the service only every 10 minutes.
    world.emu.advance(60);
    await until('the run ends', () => status(state, runId) === 'succeeded');
    await daemon.kill();
    expect(summaryOf(state, runId).steps.find((s) => s.id === 'suspend')?.confirmation).to.deep.equal({
      callback: 12,
      requestStatus: 0,
      stateRead: 0,
    });
    expectLedgerIsTheTruth(world.emu, suspendLedger(state, runId), true);
  });

  it('after a SIGKILL between acceptance and confirmation, the next daemon confirms without sending again', async () => {
    const state = world.state('killed.db');
    // The carrier takes 30 simulated seconds, and the emulator's clock stands still until the test moves it.
    world.emu.setFaults({ processingSeconds: 30 });
    const first = await world.start('first daemon', FIXTURES, { state, env: env() });
    const runId = await start(first);
    await until('the devices are accepted', () =>
      suspendLedger(state, runId).some((r) => r.outcome === 'accepted'),
    );
    await first.kill();
    const accepted = suspendLedger(state, runId);
    expect(accepted.map((r) => r.outcome)).to.deep.equal(new Array(12).fill('accepted'));
    // The carrier acts while no daemon runs: its messages reach nobody.
    world.emu.advance(60);
    const second = await world.start('second daemon', FIXTURES, { state, env: env() });
    await until('the resumed run ends', () => status(state, runId) === 'succeeded');
    await second.kill();
    const rows = suspendLedger(state, runId);
    expectLedgerIsTheTruth(world.emu, rows, false);
    expect(new Set(rows.map((r) => r.requestId)).size, 'one request').to.equal(1);
    const seen = await calls(world.emu);
    for (const id of mix.keys()) {
      const suspended = (seen.devices[id] ?? []).filter((m) => m.action === 'devices.suspend');
      expect(suspended.length, `${id} suspended at most once`).to.be.at.most(1);
    }
    const sent = seen.actions['devices.suspend'];
    expect(sent, 'suspend requests').to.equal(1);
  });

  it('a run resumed after a SIGKILL counts how the devices confirmed before the kill were confirmed', async () => {
    const state = world.state('resumed-count.db');
    // The carrier acts once the test moves the emulator's clock: one request at a time, each confirmed by its
    // message before the next is sent, and the third left accepted when the daemon is killed.
    world.emu.setFaults({ processingSeconds: 30 });
    const imeis = [...mix].filter(([, s]) => s === 'active').map(([id]) => id);
    const first = await world.start('first daemon', FIXTURES, { state, env: env() });
    const runId = await start(first, 'suspend-one-by-one', imeis);
    const outcomes = () => suspendLedger(state, runId).map((r) => r.outcome);
    for (let n = 1; n <= 2; n++) {
      await until(`request ${n} is accepted`, () => outcomes().filter((o) => o === 'accepted').length === 1);
      world.emu.advance(60);
      await until(`device ${n} is confirmed`, () => outcomes().filter((o) => o === 'succeeded').length === n);
    }
    await until('the third request is accepted', () => outcomes().includes('accepted'));
    await first.kill();
    world.emu.advance(60);
    const second = await world.start('second daemon', FIXTURES, { state, env: env() });
    await until('the resumed run ends', () => status(state, runId, 'suspend-one-by-one') === 'succeeded');
    await second.kill();
    expectLedgerIsTheTruth(world.emu, suspendLedger(state, runId), true);
    const step = summaryOf(state, runId).steps.find((s) => s.id === 'suspend')!;
    expect(step.devices).to.include({ total: 3, succeeded: 3 });
    // The two confirmed by their messages before the kill, and the third by whatever means the second found.
    const by = step.confirmation as { callback: number; requestStatus: number; stateRead: number };
    expect(by.callback, JSON.stringify(by)).to.be.at.least(2);
    expect(by.callback + by.requestStatus + by.stateRead, JSON.stringify(by)).to.equal(3);
    const shown = await fleetbook(['runs', 'show', runId], { FLEETBOOK_STATE: state });
    expect(shown.stdout).to.match(
      /suspend +succeeded +[\dhms ]+ calls \d+ devices 3: 3 succeeded, 0 failed, 0 skipped \(confirmed by callback [23], request status [01], state read [01]\)/,
    );
  });

  it('a run resumed after a SIGKILL counts the calls made before the kill', async () => {
    const state = world.state('resumed-calls.db');
    // The carrier acts once the test moves the emulator's clock: until then the step asks the request's status.
    world.emu.setFaults({ processingSeconds: 30 });
    const imeis = [...mix].filter(([, s]) => s === 'active').map(([id]) => id);
    const stepCalls = async () => {
      const seen = (await calls(world.emu)).actions;
      return (seen['devices.suspend'] ?? 0) + (seen['requests.status'] ?? 0);
    };
    const before = await stepCalls();
    // No listener: the step confirms by the request's status alone.
    const first = await world.start('first daemon', FIXTURES, {
      state,
      env: { FLEETBOOK_DAEMON_TOKEN: TOKEN },
    });
    const runId = await start(first, 'suspend-polled', imeis);
    // As each request leaves, the step's counts are written alone (step_calls), not its checkpoint again.
    const kept = () =>
      readState(state, (db) => {
        const row = db
          .prepare("SELECT calls FROM step_calls WHERE run_id = ? AND step_key = 'suspend'")
          .get(runId) as { calls: number } | undefined;
        return row?.calls ?? 0;
      });
    const checkpoint = () =>
      readState(state, (db) => {
        const row = db
          .prepare("SELECT state_json FROM run_steps WHERE run_id = ? AND step_key = 'suspend'")
          .get(runId) as { state_json: string };
        return JSON.parse(row.state_json) as { status: string; accepted?: { devices?: unknown }[] };
      });
    // The suspend and three status reads, each kept in the step's checkpoint as it is made.
    await until('the step has asked the status three times', async () => (await stepCalls()) - before >= 4);
    await until('the store keeps every call made', async () => kept() === (await stepCalls()) - before);
    // The checkpoint names the accepted request, not its devices: the ledger holds them, and the resume reads them.
    const cp = checkpoint();
    expect(cp.status).to.equal('confirming');
    expect(cp.accepted).to.have.length(1);
    expect(cp.accepted?.[0]).to.not.have.property('devices');
    // Killed in the turn the emulator has read the next status request whole: its count, written as it left, and
    // the request itself both reached their ends, and nothing else is in flight.
    await onRequestRead(world.emu, /^\/m2m\/v1\/accounts\/[^/]+\/requests\/[^/]+\/status$/u, 1, () =>
      first.proc.kill('SIGKILL'),
    );
    await first.kill();
    world.emu.advance(60);
    const second = await world.start('second daemon', FIXTURES, {
      state,
      env: { FLEETBOOK_DAEMON_TOKEN: TOKEN },
    });
    await until('the resumed run ends', () => status(state, runId, 'suspend-polled') === 'succeeded');
    await second.kill();
    const made = (await stepCalls()) - before;
    expect(made, 'calls the emulator saw').to.be.at.least(5);
    const step = summaryOf(state, runId).steps.find((s) => s.id === 'suspend') as { calls?: number };
    expect(step.calls, 'the summary').to.equal(made);
    const shown = await fleetbook(['runs', 'show', runId], { FLEETBOOK_STATE: state });
    expect(shown.stdout).to.match(new RegExp(`suspend +succeeded +[\\dhms ]+ calls ${made} devices`));
  });

  it('a run cancelled while it waits for the carrier: the messages that come afterwards are recorded', async () => {
    const state = world.state('cancelled.db');
    world.emu.setFaults({ processingSeconds: 30 });
    const daemon = await world.start('daemon of a cancelled run', FIXTURES, {
      state,
      env: { ...env(), FLEETBOOK_CONSOLE_TOKEN: TOKEN },
    });
    const imeis = [...mix].filter(([, s]) => s !== 'suspend').map(([id]) => id);
    const runId = await start(daemon, 'suspend-mix', imeis);
    await until('the devices are accepted', () =>
      suspendLedger(state, runId).some((r) => r.outcome === 'accepted'),
    );
    const cancel = await fetch(`${daemon.url}/console/api/runs/${runId}/cancel`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(cancel.status).to.equal(202);
    await until('the run is cancelled', () => status(state, runId) === 'cancelled');
    // The run stopped looking: unconfirmed, not `accepted` for good.
    expect(suspendLedger(state, runId).map((r) => r.outcome)).to.deep.equal(new Array(9).fill('unconfirmed'));
    expect(summaryOf(state, runId).steps.find((s) => s.id === 'suspend')?.devices).to.include({
      accepted: 0,
      unconfirmed: 9,
    });
    // The carrier acts now: its messages come to a daemon whose run was cancelled.
    world.emu.advance(60);
    await until('every device has its outcome', () =>
      suspendLedger(state, runId).every((r) => r.outcome !== 'unconfirmed'),
    );
    await daemon.kill();
    expectLedgerIsTheTruth(world.emu, suspendLedger(state, runId), true);
    const step = summaryOf(state, runId).steps.find((s) => s.id === 'suspend')!;
    expect(step.devices).to.include({ succeeded: 3, failed: 6, unconfirmed: 0, accepted: 0 });
    expect(step.confirmation).to.deep.include({ afterRun: 9 });
    expect(status(state, runId)).to.equal('cancelled');
  });

  it('records the outcome a CarrierService message gives after the run ended unconfirmed', async () => {
    const state = world.state('late.db');
    // The carrier acts once the test moves the emulator's clock, long after the step's second of confirmation.
    world.emu.setFaults({ processingSeconds: 30 });
    const daemon = await world.start('daemon of late messages', FIXTURES, { state, env: env() });
    // Not the devices already suspended: the last look at their state, already the target one, confirms them.
    const imeis = [...mix].filter(([, s]) => s !== 'suspend').map(([id]) => id);
    const runId = await start(daemon, 'suspend-late', imeis);
    await until('the run ends', () => status(state, runId, 'suspend-late') === 'succeeded');
    const left = suspendLedger(state, runId);
    expect(left.map((r) => r.outcome)).to.deep.equal(new Array(9).fill('unconfirmed'));
    // The carrier acts now: its messages come to a daemon whose run has ended.
    world.emu.advance(60);
    await until('every device has its outcome', () =>
      suspendLedger(state, runId).every((r) => r.outcome !== 'unconfirmed'),
    );
    const metrics = await (await fetch(`${daemon.url}/metrics`)).text();
    expect(metrics).to.match(/fleetbook_late_device_outcomes_total\{outcome="succeeded"\} 3/);
    expect(metrics).to.match(/fleetbook_late_device_outcomes_total\{outcome="failed"\} 6/);
    await daemon.kill();
    expectLedgerIsTheTruth(world.emu, suspendLedger(state, runId), true);
    const step = summaryOf(state, runId).steps.find((s) => s.id === 'suspend')!;
    expect(step.confirmation).to.deep.equal({ callback: 0, requestStatus: 0, stateRead: 0, afterRun: 9 });
    expect(step.devices).to.include({ succeeded: 3, failed: 6, unconfirmed: 0 });
    const shown = await fleetbook(['runs', 'show', runId], { FLEETBOOK_STATE: state });
    expect(shown.stdout).to.match(
      /suspend +succeeded +[\dhms ]+ calls \d+ devices 9: 3 succeeded, 6 failed, 0 skipped \(confirmed by callback 0, request status 0, state read 0, callback after the step ended 9\)/,
    );
  });
});
