/**
 * The ledger tells what the service did, not what it accepted (issue: a suspend of a `deactive` and a `pending`
 * device ended `succeeded` for both; the emulator had refused them). Here `fleetbook run`'s runner, with no
 * listener, suspends a mix of active, suspended, pending and deactive devices: each device's ledger outcome
 * must equal the emulator's own record of what it did to it, and none it refused may be `succeeded`. A carrier
 * that takes time is waited for; a device it never finishes is `unconfirmed`, never `succeeded`.
 */
import { expect } from 'chai';
import type { Emulator } from '../../src/emulator/index.js';
import { runPlaybook } from '../../src/runner/runner.js';
import type { RunSummary } from '../../src/store/store.js';
import { expectLedgerIsTheTruth, mixOfStates } from '../helpers/confirm.js';
import { calls, clientFor, emulator, memoryStore, playbook, suspendYaml } from './helpers.js';

const SUSPEND = (account: string, ids: string[], confirm = '') =>
  suspendYaml('suspend-mix', account, ids, confirm);

describe('runner: confirmed per-device outcomes (no listener)', function () {
  this.timeout(60_000);
  let emu: Emulator;
  let account: string;
  let mix: Map<string, string>;

  before(async () => {
    emu = await emulator({ devicesPerAccount: 1000 });
    account = emu.defaults.accounts[0]!;
  });
  beforeEach(async () => {
    emu.reset({ devicesPerAccount: 1000 });
    mix = await mixOfStates(emu, account);
  });
  after(async () => emu?.close());

  async function run(yaml: string, o: { pollIntervalMs?: number; signal?: AbortSignal } = {}) {
    const store = memoryStore();
    const client = clientFor(emu);
    const summary = await runPlaybook(playbook(yaml), {
      client,
      store,
      pollIntervalMs: o.pollIntervalMs ?? 50,
      ...(o.signal ? { signal: o.signal } : {}),
    });
    const rows = await store.deviceResults(summary.runId, 'suspend');
    await client.close();
    await store.close();
    return { summary, rows };
  }

  const step = (s: RunSummary) => s.steps.find((x) => x.id === 'suspend')!;

  it('records what the emulator did to each device of a mix of states, refused ones failed', async () => {
    const { summary, rows } = await run(SUSPEND(account, [...mix.keys()]));
    expect(summary.status, summary.error).to.equal('succeeded');
    expect(rows).to.have.length(12);
    expectLedgerIsTheTruth(emu, rows, false);
    const by = new Map(rows.map((r) => [r.deviceId, r]));
    for (const [id, state] of mix) {
      // Suspending an active or an already suspended device leaves it suspended; the others are refused.
      const ok = state === 'active' || state === 'suspend';
      expect(by.get(id)?.outcome, `${id} was ${state}`).to.equal(ok ? 'succeeded' : 'failed');
    }
    expect(step(summary).devices).to.include({
      total: 12,
      succeeded: 6,
      failed: 6,
      accepted: 0,
      unconfirmed: 0,
    });
    // No listener: the request status said PartialSuccess, and the devices' state told which.
    expect(step(summary).confirmation).to.deep.equal({ callback: 0, requestStatus: 0, stateRead: 12 });
  });

  it('confirms a request of active devices by its status alone', async () => {
    const active = [...mix].filter(([, s]) => s === 'active').map(([id]) => id);
    const { summary, rows } = await run(SUSPEND(account, active));
    expectLedgerIsTheTruth(emu, rows, false);
    expect(rows.map((r) => r.outcome)).to.deep.equal(['succeeded', 'succeeded', 'succeeded']);
    expect(step(summary).confirmation).to.deep.equal({ callback: 0, requestStatus: 3, stateRead: 0 });
  });

  it("takes the real service's `Failure` for a finished request: its devices not changed failed", async () => {
    const refused = [...mix].filter(([, s]) => s === 'pending' || s === 'deactive').map(([id]) => id);
    const { summary, rows } = await run(
      SUSPEND(account, refused, 'confirm: { timeout: 2s, pollInterval: 50ms }'),
    );
    expect(emu.request(rows[0]!.requestId!)!.status).to.equal('Failure');
    expectLedgerIsTheTruth(emu, rows, false);
    expect(rows.map((r) => [r.outcome, r.errorType])).to.deep.equal(
      refused.map(() => ['failed', 'STATE NOT CHANGED']),
    );
    expect(step(summary).devices).to.include({ failed: refused.length, unconfirmed: 0 });
  });

  it('a run cancelled while it waits for the carrier: its step is cancelled, its devices unconfirmed', async () => {
    const active = [...mix].filter(([, s]) => s === 'active').map(([id]) => id);
    emu.setFaults({ processingSeconds: 30 });
    const cancel = new AbortController();
    const asked = async () => (await calls(emu)).actions['requests.status'] ?? 0;
    const before = await asked();
    const running = run(SUSPEND(account, active, 'confirm: { timeout: 30s, pollInterval: 100ms }'), {
      signal: cancel.signal,
    });
    // Cancelled once the run asks the request's status: its devices' acceptance is recorded by then.
    while ((await asked()) === before) await new Promise((r) => setTimeout(r, 20));
    cancel.abort(new Error('cancelled by the test'));
    const { summary, rows } = await running;
    expect(summary.status).to.equal('cancelled');
    expect(summary.error).to.equal('cancelled by the test');
    expect(step(summary)).to.include({ status: 'cancelled', error: 'cancelled by the test' });
    // The service took the request and had not finished it, and the run stopped looking: unconfirmed, under the
    // request id that a later CarrierService message names (the daemon records it then).
    expect(rows.map((r) => [r.deviceId, r.outcome, r.errorType])).to.deep.equal(
      active.map((id) => [id, 'unconfirmed', undefined]),
    );
    expect(new Set(rows.map((r) => r.requestId)).size).to.equal(1);
    expect(step(summary).devices).to.include({
      total: active.length,
      accepted: 0,
      unconfirmed: active.length,
    });
    expect(summary.devices).to.include({ total: active.length, accepted: 0, unconfirmed: active.length });
    expect(emu.request(rows[0]!.requestId!)!.status).to.equal('Pending');
  });

  it('a step that times out while it waits for the carrier: its devices unconfirmed, the run failed', async () => {
    const active = [...mix].filter(([, s]) => s === 'active').map(([id]) => id);
    emu.setFaults({ processingSeconds: 30 });
    const { summary, rows } = await run(
      SUSPEND(account, active, 'timeout: 1s\n    confirm: { timeout: 30s, pollInterval: 100ms }'),
    );
    expect(summary.status).to.equal('failed');
    expect(step(summary)).to.include({ status: 'failed' });
    expect(rows.map((r) => [r.deviceId, r.outcome])).to.deep.equal(active.map((id) => [id, 'unconfirmed']));
    expect(step(summary).devices).to.include({ accepted: 0, unconfirmed: active.length });
    expect(emu.request(rows[0]!.requestId!)!.status).to.equal('Pending');
  });

  it('waits for a carrier that takes time, and leaves a device it never finishes unconfirmed', async () => {
    const active = [...mix].filter(([, s]) => s === 'active').map(([id]) => id);
    const never = active[2]!;
    emu.setFaults({ processingSeconds: 30, neverFinishDevices: [never] });
    const sent = async () => (await calls(emu)).actions['devices.suspend'] ?? 0;
    const before = await sent();
    const running = run(SUSPEND(account, active, 'confirm: { timeout: 3s, pollInterval: 100ms }'));
    // The carrier finishes the others once its simulated time has passed since it took the request.
    while ((await sent()) === before) await new Promise((r) => setTimeout(r, 20));
    emu.advance(60);
    const { summary, rows } = await running;
    expectLedgerIsTheTruth(emu, rows, false);
    const by = new Map(rows.map((r) => [r.deviceId, r.outcome]));
    expect(by.get(never)).to.equal('unconfirmed');
    expect(active.filter((id) => id !== never).map((id) => by.get(id))).to.deep.equal([
      'succeeded',
      'succeeded',
    ]);
    expect(step(summary).devices).to.include({ succeeded: 2, unconfirmed: 1 });
  });

  it('devices.retry sends the confirmed failures of its type again, as a new request, confirmed in turn', async () => {
    const policy = `devices: { retry: [{ on: [STATE NOT CHANGED], maxAttempts: 2 }] }`;
    const { summary, rows } = await run(SUSPEND(account, [...mix.keys()], policy));
    expectLedgerIsTheTruth(emu, rows, false);
    const refused = [...mix].filter(([, s]) => s === 'pending' || s === 'deactive').map(([id]) => id);
    const by = new Map(rows.map((r) => [r.deviceId, r]));
    for (const id of refused) expect(by.get(id)).to.include({ outcome: 'failed', attempts: 2 });
    // The second request names only the refused devices.
    const second = emu.request(by.get(refused[0]!)!.requestId!)!;
    expect(second.devices.map((d) => d.deviceIds[0]!.id).sort()).to.deep.equal([...refused].sort());
    expect(step(summary).devices).to.include({ succeeded: 6, failed: 6 });
  });
});
