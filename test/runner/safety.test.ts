/**
 * Safety, against the emulator's counters: `limits` stop a run before the first mutating call that would pass
 * them, with a clear message; a dry run makes the read-only calls, none of the mutating ones, and lists the
 * calls it would have made with their device counts.
 */
import { expect } from 'chai';
import type { Client } from '../../src/api/client.js';
import type { Emulator } from '../../src/emulator/index.js';
import { runPlaybook } from '../../src/runner/runner.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import {
  accountDevices,
  calls,
  clientFor,
  emulator,
  imei,
  memoryStore,
  playbook,
  type SeedDevice,
} from './helpers.js';

const MUTATING = ['devices.suspend', 'location.createReport', 'devices.restore', 'devices.deactivate'];

describe('runner: limits and dry run', function () {
  this.timeout(20_000);
  let emu: Emulator;
  let client: Client;
  let store: SqliteStore;
  let account: string;
  let devices: SeedDevice[];
  let active: SeedDevice[];

  beforeEach(async () => {
    emu = await emulator({ devicesPerAccount: 50 });
    account = emu.defaults.accounts[0]!;
    devices = await accountDevices(emu, account);
    active = devices.filter((d) => d.state === 'active');
    client = clientFor(emu);
    store = memoryStore();
  });
  afterEach(async () => {
    await store.close();
    await client.close();
    await emu.close();
  });

  async function expectNoMutation(): Promise<void> {
    const c = await calls(emu);
    for (const a of MUTATING) expect(c.actions[a] ?? 0, a).to.equal(0);
    expect(c.devices).to.deep.equal({});
  }

  const flat = (list: SeedDevice[]) => list.map((d) => ({ id: imei(d), kind: 'imei' }));

  describe('limits', () => {
    /** The account's active devices suspended in batches of `size`, `concurrency` at a time, under `limits`. */
    const inBatches = (size: number, concurrency: number, limits: string) =>
      playbook(`
version: 1
name: suspend-in-batches
on: { manual: true }
inputs:
  account: { type: string, required: true }
steps:
  - id: devices
    uses: devices.list
    with: { accountName: \${{ inputs.account }}, currentState: active }
  - id: batches
    forEach:
      items: \${{ steps.devices.items }}
      batchSize: ${size}
      concurrency: ${concurrency}
      toleratedFailurePercent: 100
      steps:
        - id: suspend
          uses: devices.suspend
          with: { accountName: \${{ inputs.account }}, devices: \${{ item }} }
          limits: ${limits}
`);

    it('maxDevices smaller than the device list stops the run before any mutation', async () => {
      const pb = playbook(`
version: 1
name: suspend-listed
on: { manual: true }
limits: { maxDevices: 10 }
inputs:
  account: { type: string, required: true }
steps:
  - id: devices
    uses: devices.list
    with: { accountName: \${{ inputs.account }}, currentState: active }
  - id: suspend
    uses: devices.suspend
    with: { accountName: \${{ inputs.account }}, devices: \${{ steps.devices.items }} }
    # A limit is not an error to shrug off.
    onError: continue
  - id: after
    uses: log
    with: { message: never }
`);
      const summary = await runPlaybook(pb, { client, store, inputs: { account } });
      expect(summary.status).to.equal('failed');
      expect(summary.error).to.equal(
        `limits.maxDevices is 10: step \`suspend\` would bring this run to ${active.length} devices; nothing was sent`,
      );
      const suspend = summary.steps.find((s) => s.id === 'suspend');
      expect(suspend?.status).to.equal('failed');
      expect(summary.steps.find((s) => s.id === 'after')).to.equal(undefined);
      // Each device the limit kept back is in the ledger and the counts: skipped, and why. Before, the ledger
      // and the summary said nothing of them.
      const ledger = await store.deviceResults(summary.runId);
      expect(ledger.map((r) => r.deviceId).sort()).to.deep.equal(active.map(imei).sort());
      expect(new Set(ledger.map((r) => `${r.step} ${r.outcome} ${r.errorType}`))).to.deep.equal(
        new Set(['suspend skipped LIMIT EXCEEDED']),
      );
      expect(suspend?.devices).to.deep.include({ total: active.length, skipped: active.length });
      expect(summary.devices.byError).to.deep.equal({ 'LIMIT EXCEEDED': active.length });
      expect((await store.getRun(summary.runId))?.status).to.equal('failed');
      // The list was read; nothing was changed.
      expect((await calls(emu)).actions['devices.list']).to.be.greaterThan(0);
      await expectNoMutation();
    });

    it('maxPercentOfFleet stops the run before any mutation, and lets a smaller change through', async () => {
      const yaml = (pct: number) => `
version: 1
name: suspend-some
on: { manual: true }
inputs:
  account: { type: string, required: true }
  devices: { type: array, required: true }
steps:
  - id: suspend
    uses: devices.suspend
    with: { accountName: \${{ inputs.account }}, devices: \${{ inputs.devices }} }
    limits: { maxPercentOfFleet: ${pct} }
`;
      // 5 of the account's 50 devices: 10 %.
      const five = flat(active.slice(0, 5));
      const refused = await runPlaybook(playbook(yaml(5)), {
        client,
        store,
        inputs: { account, devices: five },
      });
      expect(refused.status).to.equal('failed');
      expect(refused.error).to.equal(
        `limits.maxPercentOfFleet of step \`suspend\` is 5 %: it would bring the step to 5 of the 50 devices of ${account} (10.0 %); nothing was sent`,
      );
      await expectNoMutation();

      const allowed = await runPlaybook(playbook(yaml(10)), {
        client,
        store,
        inputs: { account, devices: five },
      });
      expect(allowed.status, allowed.error).to.equal('succeeded');
      const c = await calls(emu);
      expect(Object.keys(c.devices).sort()).to.deep.equal(five.map((d) => d.id).sort());
    });

    it('in a fan-out, stops before the first batch that would pass maxDevices', async () => {
      const pb = inBatches(10, 1, '{ maxDevices: 25 }');
      const summary = await runPlaybook(pb, { client, store, inputs: { account } });
      expect(summary.status).to.equal('failed');
      expect(summary.error).to.equal(
        'limits.maxDevices of step `suspend` is 25: it would bring the step to 30 devices; nothing was sent',
      );
      // Two batches of 10 went out; the third would have passed 25, and neither it nor any later one was sent.
      const c = await calls(emu);
      expect(c.actions['devices.suspend']).to.equal(2);
      const expected = active.slice(0, 20).map(imei).sort();
      expect(Object.keys(c.devices).sort()).to.deep.equal(expected);
      expect(summary.steps.find((s) => s.id === 'suspend')?.devices.succeeded).to.equal(20);
      // The batch the limit stopped is recorded skipped; the batches never started are not.
      const skipped = (await store.deviceResults(summary.runId)).filter((r) => r.outcome === 'skipped');
      expect(skipped.map((r) => r.deviceId).sort()).to.deep.equal(active.slice(20, 30).map(imei).sort());
    });

    it("a step's own limit counts that step's devices, not those of the steps before it", async () => {
      const pb = playbook(`
version: 1
name: suspend-then-restore
on: { manual: true }
limits: { maxDevices: 10 }
inputs:
  account: { type: string, required: true }
  suspend: { type: array, required: true }
  restore: { type: array, required: true }
steps:
  - id: suspend
    uses: devices.suspend
    with: { accountName: \${{ inputs.account }}, devices: \${{ inputs.suspend }} }
  - id: restore
    uses: devices.restore
    with: { accountName: \${{ inputs.account }}, devices: \${{ inputs.restore }} }
    limits: { maxDevices: 2 }
`);
      const inputs = { account, suspend: flat(active.slice(0, 3)), restore: flat(active.slice(0, 2)) };
      const summary = await runPlaybook(pb, { client, store, inputs });
      // Before, the restore's limit of 2 was held to the run's 3 devices, and refused a step of 2.
      expect(summary.status, summary.error).to.equal('succeeded');
      const over = await runPlaybook(pb, {
        client,
        store,
        inputs: { ...inputs, restore: flat(active.slice(0, 3)) },
      });
      expect(over.error).to.equal(
        'limits.maxDevices of step `restore` is 2: it would bring the step to 3 devices; nothing was sent',
      );
    });

    it('in a fan-out of batches side by side, maxPercentOfFleet still holds: they are checked one at a time', async () => {
      // 10 % of the account's 50 devices is 5: two batches of 2 pass, a third would make 6.
      const pb = inBatches(2, 4, '{ maxPercentOfFleet: 10 }');
      const summary = await runPlaybook(pb, { client, store, inputs: { account } });
      expect([summary.status, summary.error]).to.deep.equal([
        'failed',
        `limits.maxPercentOfFleet of step \`suspend\` is 10 %: it would bring the step to 6 of the 50 devices of ${account} (12.0 %); nothing was sent`,
      ]);
      // The two batches let through go out, and are recorded, before the run ends: none starts after it, and
      // none past the limit is sent. Before, the run ended first, its summary saying 0 devices, and the two
      // batches were sent and written to its ledger after it had ended.
      const c = await calls(emu);
      expect(Object.keys(c.devices), 'the devices suspended').to.have.length(4);
      expect(c.actions['devices.suspend']).to.equal(2);
      expect(summary.steps.find((x) => x.id === 'suspend')?.devices.succeeded).to.equal(4);
      const sent = (await store.deviceResults(summary.runId)).filter((r) => r.outcome !== 'skipped');
      expect(sent).to.have.length(4);
    });
  });

  describe('dry run', () => {
    it('makes the read-only calls, no mutating one, and plans the mutating calls with device counts', async () => {
      const pb = playbook(`
version: 1
name: dry
on: { manual: true }
inputs:
  account: { type: string, required: true }
steps:
  - id: devices
    uses: devices.list
    with: { accountName: \${{ inputs.account }}, currentState: active }
  - id: batches
    forEach:
      items: \${{ steps.devices.items }}
      batchSize: 10
      concurrency: 2
      steps:
        - id: suspend
          uses: devices.suspend
          with: { accountName: \${{ inputs.account }}, devices: \${{ item }} }
  - id: everything
    uses: devices.list
    with: { accountName: \${{ inputs.account }} }
  - id: report
    uses: location.createReport
    with: { accountName: \${{ inputs.account }}, deviceList: \${{ steps.everything.items }}, cacheMode: "1" }
    wait: { for: completion }
  - id: note
    uses: log
    with: { message: "would suspend \${{ steps.batches.devices.total }} devices" }
`);
      const summary = await runPlaybook(pb, { client, store, inputs: { account }, dryRun: true });
      expect(summary.status, summary.error).to.equal('succeeded');
      expect(summary.dryRun).to.equal(true);
      const withImei = devices.filter((d) => d.deviceIds.some((x) => x.kind === 'imei'));
      expect(summary.planned).to.deep.equal([
        {
          step: 'suspend',
          action: 'devices.suspend',
          calls: Math.ceil(active.length / 10),
          devices: active.length,
        },
        { step: 'report', action: 'location.createReport', calls: 1, devices: withImei.length },
      ]);
      expect(summary.steps.find((s) => s.id === 'suspend')?.status).to.equal('planned');
      expect(summary.steps.find((s) => s.id === 'report')?.status).to.equal('planned');
      expect(summary.steps.find((s) => s.id === 'note')?.status).to.equal('succeeded');
      // Nothing succeeded or failed: every device of a mutating step is skipped.
      expect(summary.devices.succeeded).to.equal(0);
      expect(summary.devices.failed).to.equal(0);
      expect(summary.devices.skipped).to.equal(active.length + withImei.length);

      const c = await calls(emu);
      expect(c.actions['devices.list']).to.be.greaterThanOrEqual(2);
      expect(c.actions['location.getReportStatus'] ?? 0).to.equal(0);
      await expectNoMutation();
    });

    it('plans its waits: it neither waits them out nor fails an event wait at its timeout', async () => {
      const pb = playbook(`
version: 1
name: dry-waits
on: { manual: true }
inputs:
  account: { type: string, required: true }
  devices: { type: array, required: true }
steps:
  - id: suspend
    uses: devices.suspend
    with: { accountName: \${{ inputs.account }}, devices: \${{ inputs.devices }} }
  - id: settle
    wait: 2h
  - id: confirmed
    wait:
      event: { service: CarrierService }
      timeout: 1h
  - id: note
    uses: log
    with: { message: done }
`);
      const began = Date.now();
      const summary = await runPlaybook(pb, {
        client,
        store,
        inputs: { account, devices: flat(active.slice(0, 2)) },
        dryRun: true,
      });
      // Before, the dry run slept its 2 hours, then waited an hour for an event that nothing would send.
      expect(Date.now() - began).to.be.lessThan(5_000);
      expect([summary.status, summary.error]).to.deep.equal(['succeeded', undefined]);
      expect(summary.steps.map((s) => [s.id, s.status])).to.deep.equal([
        ['suspend', 'planned'],
        ['settle', 'planned'],
        ['confirmed', 'planned'],
        ['note', 'succeeded'],
      ]);
      await expectNoMutation();
    });
  });
});
