/**
 * A dry run's planned devices in the ledger (product.md 5a: `skipped` is "not sent (condition, limit, dry-run,
 * ...)"). Before, a dry run recorded no per-device result: `runs show ID --devices`, the console's device table
 * and CSV of the run showed nothing of the devices it would have acted on, a step read after its loop had no
 * items, and the planned calls reached the store only in the final summary, so a dry run in progress (or one
 * resumed after a stop, which lost those of the steps it restored) did not say them. Its entries are never a
 * later run's `ledger.query` results: a dry run sent nothing, and must not become the "last run" a real one acts
 * from. Real runs against the emulator, on an in-memory SQLite store.
 */
import { expect } from 'chai';
import { runPlaybook } from '../../src/runner/runner.js';
import { liveView } from '../../src/store/run-views.js';
import type { LedgerRow } from '../../src/store/store.js';
import {
  accountDevices,
  calls,
  imei,
  interruptedRun,
  memoryStore,
  onEmulator,
  playbook,
  setFaults,
} from './helpers.js';

/** What the ledger says of a run, a line per device and step. */
const lines = (rows: LedgerRow[]) =>
  rows.map((r) => `${r.step} ${r.deviceId} ${r.outcome} ${r.errorType ?? '-'} ${r.attempts}`);

describe('runner: a dry run records its planned devices in the ledger', function () {
  this.timeout(30_000);
  const t = onEmulator({ devicesPerAccount: 12 });
  let active: string[];

  before(async () => {
    active = (await accountDevices(t.emu, t.account))
      .filter((d) => d.state === 'active')
      .map(imei)
      .sort();
    expect(active.length, 'active devices').to.be.greaterThan(3);
  });
  afterEach(() => setFaults(t.emu, {}));

  it('records each device of a planned step `skipped` with DRY RUN, inside a loop too', async () => {
    const pb = playbook(`
version: 1
name: dry-ledger
on: { manual: true }
inputs:
  account: { type: string }
steps:
  - id: active
    uses: devices.list
    with: { accountName: '\${{ inputs.account }}', currentState: active }
  - id: suspend
    uses: devices.suspend
    with: { accountName: '\${{ inputs.account }}', devices: '\${{ steps.active.items }}' }
  - id: each
    forEach:
      items: '\${{ steps.active.items.take(2) }}'
      steps:
        - id: restore
          uses: devices.restore
          with: { accountName: '\${{ inputs.account }}', devices: ['\${{ item }}'] }
  - id: after
    uses: log
    with: { message: 'restored \${{ size(steps.restore.items) }}' }
`);
    const before = await calls(t.emu);
    const s = await runPlaybook(pb, {
      client: t.client,
      store: t.store,
      dryRun: true,
      inputs: { account: t.account },
    });
    expect(s.status, s.error).to.equal('succeeded');
    expect((await calls(t.emu)).devices, 'devices changed').to.deep.equal(before.devices);
    const rows = await t.store.deviceResults(s.runId);
    const first = active.slice(0, 2);
    expect(lines(rows)).to.deep.equal([
      ...first.map((d) => `restore ${d} skipped DRY RUN 0`),
      ...active.map((d) => `suspend ${d} skipped DRY RUN 0`),
    ]);
    expect(s.planned).to.deep.equal([
      { step: 'suspend', action: 'devices.suspend', calls: 1, devices: active.length },
      { step: 'restore', action: 'devices.restore', calls: 2, devices: 2 },
    ]);
    const suspend = s.steps.find((x) => x.id === 'suspend');
    expect(suspend?.devices).to.deep.include({ total: active.length, skipped: active.length });
  });

  it('shows the calls planned so far while the run goes on, and keeps them when it is resumed', async () => {
    const [one, two] = active as [string, string];
    const pb = playbook(`
version: 1
name: dry-held
on: { manual: true }
inputs:
  account: { type: string }
steps:
  - id: suspend
    uses: devices.suspend
    with: { accountName: '\${{ inputs.account }}', devices: [{ id: '${one}', kind: imei }, { id: '${two}', kind: imei }] }
  - id: look
    uses: devices.list
    with: { accountName: '\${{ inputs.account }}' }
  - id: tell
    uses: log
    with: { message: done }
`);
    const store = memoryStore();
    try {
      const o = {
        client: t.client,
        store,
        runId: 'r-dry-held',
        dryRun: true,
        inputs: { account: t.account },
      };
      // The listing answers slowly: the run is stopped in it, the suspend planned before it.
      await setFaults(t.emu, { latencyMs: 2000 });
      await interruptedRun(pb, o, async () =>
        [...(await store.stepMarks(o.runId)).values()].some(
          (m) => (m as { status?: string }).status === 'planned',
        ),
      );
      const run = await store.getRun(o.runId);
      expect(run?.status).to.equal('running');
      const live = await liveView(store, run!);
      expect(live.planned).to.deep.equal([
        { step: 'suspend', action: 'devices.suspend', calls: 1, devices: 2 },
      ]);
      expect(live.steps?.map((x) => [x.id, x.status])).to.deep.equal([
        ['suspend', 'planned'],
        ['look', 'running'],
        ['tell', 'pending'],
      ]);
      expect(lines(await store.deviceResults(o.runId))).to.deep.equal([
        `suspend ${one} skipped DRY RUN 0`,
        `suspend ${two} skipped DRY RUN 0`,
      ]);

      await setFaults(t.emu, {});
      const { dryRun: _, ...resume } = o;
      const s = await runPlaybook(pb, resume);
      expect([s.status, s.dryRun]).to.deep.equal(['succeeded', true]);
      expect(s.planned).to.deep.equal([{ step: 'suspend', action: 'devices.suspend', calls: 1, devices: 2 }]);
    } finally {
      await store.close();
    }
  });

  it("is never what a later run's ledger.query reads, nor its last run", async () => {
    const store = memoryStore();
    const [one, two] = active as [string, string];
    const source = (id: string) =>
      playbook(`
version: 1
name: flaky
on: { manual: true }
steps:
  - id: suspend
    uses: devices.suspend
    with: { accountName: '${t.account}', devices: [{ id: '${id}', kind: imei }] }
`);
    // The last run of `flaky` that acted is the real one: the dry run after it is not read, nor its skips.
    const query = playbook(`
version: 1
name: reader
on: { manual: true }
steps:
  - id: last
    uses: ledger.query
    with: { playbook: flaky, step: suspend }
  - id: skips
    uses: ledger.query
    with: { playbook: flaky, outcome: skipped, runs: 5 }
  - id: check
    if: \${{ steps.last.items.map(d, d.id) != ['${one}'] || size(steps.skips.items) != 0 }}
    fail: 'read \${{ steps.last.items.map(d, d.id) }} and skips \${{ steps.skips.items.map(d, d.id) }}'
`);
    try {
      const real = await runPlaybook(source(one), { client: t.client, store });
      expect(real.status, real.error).to.equal('succeeded');
      const dry = await runPlaybook(source(two), { client: t.client, store, dryRun: true });
      expect(lines(await store.deviceResults(dry.runId))).to.deep.equal([`suspend ${two} skipped DRY RUN 0`]);
      const r = await runPlaybook(query, { client: t.client, store });
      expect(r.status, r.error).to.equal('succeeded');
    } finally {
      await store.close();
      await setFaults(t.emu, {});
    }
  });
});
