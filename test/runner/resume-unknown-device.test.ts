/**
 * A device-state call sent for a device the service does not have, its process stopped before the answer, then
 * resumed: the resumed run read the device's state every poll interval for the whole confirmation time (118 reads in
 * 10 minutes) before it sent the call again and got the service's 400. A device the service does not have cannot
 * reach the state asked for: the first listing that shows the account without it settles it, and the call is sent
 * again at once for the service to say why.
 */
import { expect } from 'chai';
import type { Client } from '../../src/api/client.js';
import type { Emulator } from '../../src/emulator/index.js';
import type { Playbook } from '../../src/playbook/schema.js';
import { runPlaybook } from '../../src/runner/runner.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import {
  accountDevices,
  actionCounts,
  clientFor,
  emulator,
  imei,
  suspendYaml,
  interruptedRun,
  memoryStore,
  playbook,
  setFaults,
  skippingClock,
} from './helpers.js';

/** A well-formed IMEI (its Luhn digit holds) that no seeded account has. */
const UNKNOWN_IMEI = '490154203237518';

describe('runner: a resumed device-state call for a device the service does not have', () => {
  let emu: Emulator;
  let account: string;
  let client: Client;
  let store: SqliteStore;
  before(async () => {
    emu = await emulator({ devicesPerAccount: 20 });
    account = emu.defaults.accounts[0]!;
  });
  after(async () => emu.close());
  // A client of its own for each test: a reset ends the sessions, and the request a session ended would be read twice.
  beforeEach(() => {
    emu.reset({ seed: 1, accounts: 1, devicesPerAccount: 20 });
    client = clientFor(emu);
    store = memoryStore();
  });
  afterEach(async () => {
    await store.close();
    await client.close();
  });

  const reads = async () => (await actionCounts(emu))['devices.list'] ?? 0;

  /**
   * Runs `pb` as run `runId` until its suspend is on its way, then stops the process as a restart would: the
   * service gets the request after the stop, and its answer reaches no one. The `sending` checkpoint stays.
   */
  async function stoppedWhileSending(pb: Playbook, runId: string): Promise<void> {
    const hold = emu.hold('devices.suspend');
    try {
      await interruptedRun(pb, { client: client, store: store, runId }, () => hold.held === 1);
    } finally {
      hold.release();
    }
    const steps = await store.loadSteps(runId);
    expect(steps.get('suspend')).to.deep.include({ status: 'sending' });
  }

  /** Resumes run `runId` on a clock whose waits end at once; returns its summary and the state reads it made. */
  async function resumed(pb: Playbook, runId: string) {
    const before = await reads();
    const slept: number[] = [];
    const summary = await runPlaybook(pb, {
      client: client,
      store: store,
      runId,
      clock: skippingClock(Date.now(), slept),
    });
    return { summary, reads: (await reads()) - before, slept };
  }

  const suspend = (name: string, ids: string[]) => playbook(suspendYaml(name, account, ids));

  it('settles a device the account does not have at the first reads, and records the service refusing it', async () => {
    const pb = suspend('resume-unknown', [UNKNOWN_IMEI]);
    await stoppedWhileSending(pb, 'u1');

    const { summary, reads: n, slept } = await resumed(pb, 'u1');

    // One read of the devices in the target state, one of the account: not one every poll interval for 10 minutes.
    expect(n, 'state reads').to.equal(2);
    expect(slept, 'waits').to.deep.equal([]);
    expect(summary.status).to.equal('failed');
    const step = summary.steps.find((s) => s.id === 'suspend')!;
    expect(step.status).to.equal('failed');
    expect(step.error).to.match(/HTTP 400 INVALID_PARAMETER: Device not found: imei 490154203237518/);
    expect(step.devices).to.include({ total: 1, succeeded: 0, failed: 1 });
    expect(step.devices?.byError).to.deep.equal({ INVALID_PARAMETER: 1 });
    const rows = await store.deviceResults('u1', 'suspend');
    expect(rows.map((r) => [r.deviceId, r.outcome, r.errorType, r.errorClass])).to.deep.equal([
      [UNKNOWN_IMEI, 'failed', 'INVALID_PARAMETER', 'permanent'],
    ]);
  });

  it('keeps what the reads found of the devices the account has, and settles the one it does not have', async () => {
    // Already suspended before the run: the reads find it in the target state.
    const done = (await accountDevices(emu, account)).find((d) => d.state === 'suspend')!;
    const pb = suspend('resume-unknown-mixed', [imei(done), UNKNOWN_IMEI]);
    await stoppedWhileSending(pb, 'u2');

    const { summary, reads: n, slept } = await resumed(pb, 'u2');

    expect(n, 'state reads').to.equal(2);
    expect(slept, 'waits').to.deep.equal([]);
    const step = summary.steps.find((s) => s.id === 'suspend')!;
    expect(step.status).to.equal('failed');
    expect(step.error).to.match(/Device not found: imei 490154203237518/);
    expect(step.devices).to.include({ total: 2, succeeded: 1, failed: 1 });
    expect(step.confirmation).to.deep.equal({ callback: 0, requestStatus: 0, stateRead: 1 });
    const rows = await store.deviceResults('u2', 'suspend');
    expect(rows.map((r) => [r.deviceId, r.outcome, r.errorType])).to.have.deep.members([
      [imei(done), 'succeeded', undefined],
      [UNKNOWN_IMEI, 'failed', 'INVALID_PARAMETER'],
    ]);
  });

  it('settles it as quickly when the answer is lost during a run, not after a stop', async () => {
    const pb = suspend('lost-unknown', [UNKNOWN_IMEI]);
    // The service refuses the request, and the connection is reset before its answer: a lost answer.
    await setFaults(emu, { resetNext: { 'devices.suspend': 1 } });
    const before = await reads();
    const slept: number[] = [];
    const summary = await runPlaybook(pb, { client, store, clock: skippingClock(Date.now(), slept) });
    await setFaults(emu, {});

    expect((await reads()) - before, 'state reads').to.equal(2);
    expect(slept, 'waits').to.deep.equal([]);
    // The step's retry does not send again after a lost answer: what the service did is unknown, and said so.
    const step = summary.steps.find((s) => s.id === 'suspend')!;
    expect(step.error).to.match(/other side closed/);
    expect(step.devices).to.include({ total: 1, unconfirmed: 1 });
    const rows = await store.deviceResults(summary.runId, 'suspend');
    expect(rows.map((r) => [r.deviceId, r.outcome, r.errorType, r.attempts])).to.deep.equal([
      [UNKNOWN_IMEI, 'unconfirmed', 'OUTCOME UNKNOWN', 1],
    ]);
  });
});
