/**
 * 20,000 devices suspended in batches of 500, four at a time, against the emulator with faults: injected 500s
 * (answered before the service acts) and 429s above a request rate, and, separately, connections reset after
 * the service acted (the unknown outcome the runner must reconcile before sending again). Whatever the faults,
 * the emulator's per-device mutations show every device suspended exactly once, and the summary is complete.
 */
import { expect } from 'chai';
import type { Client } from '../../src/api/client.js';
import type { Emulator, Faults } from '../../src/emulator/index.js';
import { NetworkError } from '../../src/errors.js';
import { runPlaybook } from '../../src/runner/runner.js';
import type { RunSummary } from '../../src/store/store.js';
import {
  accountDevices,
  calls,
  clientFor,
  emulator,
  imei,
  memoryStore,
  playbook,
  setFaults,
  sizeForActive,
  spy,
  type Calls,
  type SpiedCall,
  watchAnswers,
} from './helpers.js';

const DEVICES = 20_000;

const SUSPEND_ALL = `
version: 1
name: suspend-fleet
on: { manual: true }
inputs:
  account: { type: string, required: true }
steps:
  - id: devices
    uses: devices.list
    with: { accountName: \${{ inputs.account }}, currentState: active, maxNumberOfDevices: 2000 }
    retry: { on: [http.5xx, http.429, network], maxAttempts: 6, delay: 10ms, maxDelay: 200ms }
  - id: batches
    forEach:
      items: \${{ steps.devices.items }}
      batchSize: 500
      concurrency: 4
      steps:
        - id: suspend
          uses: devices.suspend
          with: { accountName: \${{ inputs.account }}, devices: \${{ item }} }
          retry: { on: [http.5xx, http.429, network], maxAttempts: 10, delay: 20ms, maxDelay: 500ms }
`;

describe('runner: 20,000 devices suspended in batches under faults', function () {
  this.timeout(60_000);
  let emu: Emulator;
  let account: string;
  /** The first identifiers of the account's active devices: what must be suspended, exactly once each. */
  let active: string[];
  let devicesPerAccount: number;

  before(async () => {
    emu = await emulator({ devicesPerAccount: 24_000 });
    account = emu.defaults.accounts[0]!;
    devicesPerAccount = await sizeForActive(emu, account, DEVICES);
    expect(devicesPerAccount, 'the seed has 20,000 active devices').to.be.greaterThan(0);
  });
  after(() => emu.close());

  async function suspendAll(faults: Partial<Faults>): Promise<{
    summary: RunSummary;
    calls: Calls;
    client: Client;
    sent: SpiedCall[];
    statuses: Record<number, number>;
  }> {
    emu.reset({ devicesPerAccount });
    active = (await accountDevices(emu, account)).filter((d) => d.state === 'active').map(imei);
    expect(active).to.have.length(DEVICES);
    await setFaults(emu, faults);
    const client = clientFor(emu);
    const sent = spy(client);
    const store = memoryStore();
    const wire = watchAnswers(emu.url);
    try {
      const summary = await runPlaybook(playbook(SUSPEND_ALL), { client, store, inputs: { account } });
      await setFaults(emu, {});
      expect(summary.status, summary.error).to.equal('succeeded');
      // The ledger agrees with the summary: one succeeded row per device.
      const rows = await store.deviceResults(summary.runId, 'suspend');
      expect(rows).to.have.length(DEVICES);
      expect(rows.filter((r) => r.outcome === 'succeeded')).to.have.length(DEVICES);
      const statuses: Record<number, number> = {};
      for (const a of wire.answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
      return { summary, calls: await calls(emu), client, sent, statuses };
    } finally {
      wire.stop();
      await store.close();
      await client.close();
    }
  }

  function expectExactlyOnce(summary: RunSummary, c: Calls): void {
    expect(summary.status, summary.error).to.equal('succeeded');
    const suspend = summary.steps.find((s) => s.id === 'suspend')!;
    expect(suspend.devices).to.deep.equal({
      total: DEVICES,
      accepted: 0,
      succeeded: DEVICES,
      failed: 0,
      skipped: 0,
      unconfirmed: 0,
      byError: {},
    });
    expect(summary.devices.succeeded).to.equal(DEVICES);
    expect(summary.devices.total).to.equal(DEVICES);
    // Every active device has exactly one devices.suspend mutation, and no other device has any.
    const twice: string[] = [];
    const missing: string[] = [];
    for (const id of active) {
      const m = c.devices[id] ?? [];
      if (m.length === 0) missing.push(id);
      else if (m.length > 1 || m[0]!.action !== 'devices.suspend') twice.push(id);
    }
    expect(missing, 'devices never suspended').to.deep.equal([]);
    expect(twice, 'devices mutated more than once').to.deep.equal([]);
    expect(Object.keys(c.devices)).to.have.length(DEVICES);
  }

  it('with 5 % 500s and 429s above a request rate', async () => {
    const r = await suspendAll({ errorRate: 0.05, maxRequestsPerSecond: 30 });
    expectExactlyOnce(r.summary, r.calls);
    // The faults did happen: the client received 500s and 429s, and the 429s slowed the m2m area down.
    expect(r.statuses[500] ?? 0, '500s received').to.be.greaterThan(0);
    expect(r.statuses[429] ?? 0, '429s received').to.be.greaterThan(0);
    expect(r.client.areas.m2m.stats.throttled).to.be.greaterThan(0);
  });

  it('with connections reset after the service acted: unknown outcomes are reconciled, not re-sent', async () => {
    // 40 suspends: at a rate of 0.1 none of them was reset once in a full run of the suite (0.9^40, 1.5 %);
    // at 0.2 that is 0.8^40, about one in 7,500.
    const r = await suspendAll({ resetRate: 0.2 });
    expectExactlyOnce(r.summary, r.calls);
    // Some suspend answers were lost after the service acted; reading the device states settled them.
    const lost = r.sent.filter(
      (c) => c.action === 'devices.suspend' && c.error instanceof NetworkError && c.error.sent,
    );
    expect(lost.length, 'suspend answers lost').to.be.greaterThan(0);
    // A lost answer was settled by reading device states, never by a second suspend: the only suspends sent
    // beyond one per batch are the resends of calls the service did not act on (their login was reset).
    const suspends = r.sent.filter((c) => c.action === 'devices.suspend');
    expect(r.calls.actions['devices.suspend']).to.equal(suspends.length);
    const notActed = suspends.filter(
      (c) => c.error && !(c.error instanceof NetworkError && c.error.action === 'devices.suspend'),
    );
    expect(suspends.length - DEVICES / 500).to.equal(notActed.length);
    // The reconciling reads: more device listings than the first step's pages.
    expect(r.calls.actions['devices.list']).to.be.greaterThan(DEVICES / 2000 + 1);
  });
});
