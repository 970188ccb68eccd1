/**
 * A location report that takes a listing's items whole (`deviceList: "${{ steps.devices.items }}"`) reads
 * them from the store a batch of 10,000 at a time, and holds no list of the fleet: the same calls, the same
 * per-device outcomes in the ledger and the same counts as the same report over the list held in memory.
 */
import { expect } from 'chai';
import type { Emulator } from '../../src/emulator/index.js';
import { planOf } from '../../src/runner/plan.js';
import { runPlaybook } from '../../src/runner/runner.js';
import { StoredItems } from '../../src/runner/stored-items.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { Step } from '../../src/playbook/schema.js';
import { allRows } from '../store/fixtures.js';
import { clientFor, emulator, interruptedRun, memoryStore, playbook, setFaults, spy } from './helpers.js';

const ONE_RULE = `
        - on: [SVC CACHE UNAVAILABLE]
          with: { cacheMode: "1" }`;

const report = (extra = '', deviceList = '"${{ steps.devices.items }}"', top = '', rules = ONE_RULE) =>
  playbook(`
version: 1
name: streamed
on: { manual: true }
${top}
inputs:
  account: { type: string }
steps:
  - id: devices
    uses: devices.list
    with: { accountName: "\${{ inputs.account }}", currentState: active }
    items: { kind: imei }
  - id: report
    uses: location.createReport
    with: { accountName: "\${{ inputs.account }}", deviceList: ${deviceList}, cacheMode: "0" }
    devices:
      retry:${rules}
      ignore: [SVC CONSENT CHECK FAILED]
    wait: { for: completion, timeout: 10m, pollInterval: 50ms }
${extra}`);

/** The listing's items passed through an expression (every one kept): the report holds them in memory. */
const HELD = '"${{ steps.devices.items.filter(d, d.id != \\"\\") }}"';

const stepOf = (pb: ReturnType<typeof playbook>, id: string) => pb.steps.find((s) => s.id === id) as Step;

describe('runner: a location report streamed from the store', function () {
  this.timeout(120_000);

  it('streams the items a report takes whole, unless limits count them or an expression reads them', () => {
    const pb = report();
    const plan = planOf(pb);
    expect(plan.of(stepOf(pb, 'report')).streamsFrom).to.equal('devices');
    expect([...(plan.referenced.get('devices') ?? [])]).to.deep.equal(['stream']);
    // The listing's counts keep no record in memory; its records do.
    const counted = planOf(report(`  - id: say\n    set: { n: "\${{ steps.devices.output.leftOut }}" }`));
    expect([...(counted.referenced.get('devices') ?? [])].sort()).to.deep.equal(['counts', 'stream']);
    const withLimits = report('', undefined, 'limits: { maxDevices: 10 }');
    expect(planOf(withLimits).of(stepOf(withLimits, 'report')).streamsFrom).to.equal(undefined);
    const filtered = report('', HELD);
    expect(planOf(filtered).of(stepOf(filtered, 'report')).streamsFrom).to.equal(undefined);
  });

  it('reads a stored list back in batches that cut its chunks where they must', async () => {
    const store = memoryStore();
    const imei = (n: number) => `35345678${String(n).padStart(7, '0')}`;
    store.appendItems('r', 'devices', 0, [['imei', [imei(0), imei(1), imei(2)]]]);
    store.appendItems('r', 'devices', 1, [
      ['imei', [imei(3)]],
      ['iccid', ['8914800000000000000', '8914800000000000001']],
    ]);
    store.appendItems('r', 'devices', 2, [['imei', [imei(4)]]]);
    const items = new StoredItems(store, 'r', 'devices', 7);
    const batches = [];
    for await (const b of items.batches(2)) batches.push(b);
    expect(batches.map((b) => b.set.groups.map((g) => [g.kind, g.ids]))).to.deep.equal([
      [['imei', [imei(0), imei(1)]]],
      [['imei', [imei(2), imei(3)]]],
      [['iccid', ['8914800000000000000', '8914800000000000001']]],
      [['imei', [imei(4)]]],
    ]);
    // Each batch is read again from where it starts.
    for (const b of batches) expect((await items.read(b.at, b.set.size)).set).to.deep.equal(b.set);
    expect(await items.all()).to.have.length(7);
    await store.close();
  });

  it('reads a list whose chunk numbers leave gaps, as the lists of the devices sent again are written', async () => {
    const store = memoryStore();
    const imei = (n: number) => `35345678${String(n).padStart(7, '0')}`;
    store.appendItems('r', 'again', 3, [['imei', [imei(0), imei(1), imei(2)]]]);
    store.appendItems('r', 'again', 1_000_000, [['imei', [imei(3)]]]);
    store.appendItems('r', 'again', 1_000_007, [['imei', [imei(4), imei(5)]]]);
    const items = new StoredItems(store, 'r', 'again', 6);
    const batches = [];
    for await (const b of items.batches(2)) batches.push(b);
    expect(batches.map((b) => b.set.groups.flatMap((g) => g.ids))).to.deep.equal([
      [imei(0), imei(1)],
      [imei(2), imei(3)],
      [imei(4), imei(5)],
    ]);
    for (const b of batches) expect((await items.read(b.at, b.set.size)).set).to.deep.equal(b.set);
    await store.close();
  });

  describe('against the emulator, 25,000 devices with 5 % cache misses and 3 % refused consent', () => {
    let emu: Emulator;
    before(async () => (emu = await emulator({ devicesPerAccount: 25_000, timeScale: 3600 })));
    after(() => emu.close());

    /** Runs `pb` on a fresh store; the calls it made, its summary, and every device's outcome in the ledger. */
    async function outcomes(
      pb: ReturnType<typeof playbook>,
      deviceErrors: Record<string, number> = {
        'SVC CACHE UNAVAILABLE': 0.05,
        'SVC CONSENT CHECK FAILED': 0.03,
      },
    ) {
      // The same world and the same faults for each run.
      emu.reset({ seed: 1, accounts: 1, devicesPerAccount: 25_000, timeScale: 3600 });
      await setFaults(emu, { deviceErrors });
      const client = clientFor(emu);
      const store = new SqliteStore(':memory:');
      const seen = spy(client);
      try {
        const summary = await runPlaybook(pb, {
          client,
          store,
          inputs: { account: emu.defaults.accounts[0] },
        });
        expect(summary.status, summary.error).to.equal('succeeded');
        const ledger = await allRows(store.eachDeviceResult(summary.runId, 'report'));
        const steps = await store.loadSteps(summary.runId);
        const itemKeys = store.db
          .prepare('SELECT DISTINCT step_key FROM step_items WHERE run_id = ? ORDER BY 1')
          .pluck()
          .all(summary.runId) as string[];
        return {
          itemKeys,
          summary,
          steps,
          ledger: new Map(ledger.map((r) => [r.deviceId, `${r.outcome} ${r.errorType ?? ''} ${r.attempts}`])),
          rows: ledger.length,
          creates: seen
            .filter((c) => c.action === 'location.createReport')
            .map((c) => (c.input.deviceList as unknown[]).length),
        };
      } finally {
        await store.close();
        await client.close();
      }
    }

    it('keeps a listing whose records an expression reads out of its checkpoint, which says so', async () => {
      // 1,000 devices list about 830 KB of records, past the checkpoint's 256 KB: the whole fleet is not needed.
      emu.reset({ seed: 1, accounts: 1, devicesPerAccount: 1_000, timeScale: 3600 });
      const client = clientFor(emu);
      const store = new SqliteStore(':memory:');
      try {
        const summary = await runPlaybook(
          playbook(`
version: 1
name: records
on: { manual: true }
inputs:
  account: { type: string }
steps:
  - id: devices
    uses: devices.list
    with: { accountName: "\${{ inputs.account }}" }
  - id: first
    set: { id: "\${{ steps.devices.output.devices[0].deviceIds[0].id }}" }
`),
          { client, store, inputs: { account: emu.defaults.accounts[0] } },
        );
        expect(summary.status, summary.error).to.equal('succeeded');
        const devices = (await store.loadSteps(summary.runId)).get('devices') as { output: unknown };
        expect(devices.output).to.deep.equal({
          truncated: true,
          largerThan: 256 * 1024,
        });
      } finally {
        await store.close();
        await client.close();
      }
    });

    it('gives every device the outcome the list held in memory gives it, a batch of 10,000 at a time', async () => {
      const streamed = await outcomes(report());
      // A deviceList an expression computes from the items is held in memory: the same report, not streamed.
      const inMemory = report('', HELD);
      expect(planOf(inMemory).of(stepOf(inMemory, 'report')).streamsFrom, 'held in memory').to.equal(
        undefined,
      );
      const held = await outcomes(inMemory);

      const listed = (streamed.steps.get('devices') as { storedItems: number }).storedItems;
      expect(listed).to.be.greaterThan(20_000);
      // The first pass in batches of at most 10,000, then the misses again.
      expect(streamed.creates.slice(0, 3)).to.deep.equal([10_000, 10_000, listed - 20_000]);
      const retried = [...streamed.ledger.values()].filter((v) => v.endsWith(' 2')).length;
      expect(retried).to.be.greaterThan(0);
      expect(streamed.creates.slice(3).reduce((a, b) => a + b, 0)).to.equal(retried);
      // Each device once in the ledger, with the outcome, error and attempt the in-memory run gives it.
      expect(streamed.rows).to.equal(listed);
      expect(streamed.ledger).to.deep.equal(held.ledger);
      const counts = (r: typeof streamed) => r.summary.steps.find((s) => s.id === 'report')!.devices;
      expect(counts(streamed)).to.deep.equal(counts(held));
      expect(counts(streamed).skipped).to.be.greaterThan(0);
    });

    it('sends again the devices of two rules of several attempts as the list held in memory does', async () => {
      // A failure the first rule retries twice, and the second rule once more, with the cache misses.
      const rules = `
        - on: [SYSTEM FAILURE]
          maxAttempts: 3
        - on: [SVC CACHE UNAVAILABLE, SYSTEM FAILURE]
          with: { cacheMode: "1" }`;
      const errors = {
        'SVC CACHE UNAVAILABLE': 0.05,
        'SYSTEM FAILURE': 0.3,
        'SVC CONSENT CHECK FAILED': 0.03,
      };
      const streamed = await outcomes(report('', undefined, '', rules), errors);
      const inMemory = report('', HELD, '', rules);
      expect(planOf(inMemory).of(stepOf(inMemory, 'report')).streamsFrom, 'held in memory').to.equal(
        undefined,
      );
      const held = await outcomes(inMemory, errors);
      expect(streamed.rows).to.equal((streamed.steps.get('devices') as { storedItems: number }).storedItems);
      expect(streamed.ledger).to.deep.equal(held.ledger);
      const values = [...streamed.ledger.values()];
      // Every pass had devices: the first rule's two attempts, then the second rule's.
      expect(values.filter((v) => v.endsWith(' 3')).length).to.be.greaterThan(0);
      expect(values.filter((v) => v.startsWith('failed SYSTEM FAILURE 2')).length).to.be.greaterThan(0);
      expect(streamed.creates.reduce((a, b) => a + b, 0)).to.equal(held.creates.reduce((a, b) => a + b, 0));
      const counts = (r: typeof streamed) => r.summary.steps.find((s) => s.id === 'report')!.devices;
      expect(counts(streamed)).to.deep.equal(counts(held));
      // The lists of the devices sent again, and the listing's pages, are gone from the store with the run.
      const left = await streamed.itemKeys;
      expect(left).to.deep.equal([]);
    });

    it('records each batch of a report that only creates its reports once, when it is resumed', async () => {
      emu.reset({ seed: 1, accounts: 1, devicesPerAccount: 25_000, timeScale: 3600 });
      await setFaults(emu, { deviceErrors: {} });
      // No wait: the step creates the reports, its devices requested as each batch's report is created.
      const pb = playbook(`
version: 1
name: created-only
on: { manual: true }
inputs:
  account: { type: string }
steps:
  - id: devices
    uses: devices.list
    with: { accountName: "\${{ inputs.account }}", currentState: active }
    items: { kind: imei }
  - id: report
    uses: location.createReport
    with: { accountName: "\${{ inputs.account }}", deviceList: "\${{ steps.devices.items }}", cacheMode: "0" }
`);
      const store = new SqliteStore(':memory:');
      const inputs = { account: emu.defaults.accounts[0] };
      // One report a second: stopped after the first batch's report, before the third's.
      const slow = clientFor(emu, { rates: { loc: { requestsPerSecond: 1, concurrency: 1 } } });
      const client = clientFor(emu);
      const requested = () =>
        store.db
          .prepare(
            `SELECT coalesce(sum(json_array_length(device_ids)), 0) FROM ledger WHERE run_id = 'r-created' AND step = 'report'`,
          )
          .pluck()
          .get() as number;
      try {
        await interruptedRun(pb, { client: slow, store, runId: 'r-created', inputs }, () => requested() > 0);
        expect(requested(), 'the first batch, recorded before the stop').to.equal(10_000);
        const summary = await runPlaybook(pb, { client, store, runId: 'r-created', inputs });
        expect(summary.status, summary.error).to.equal('succeeded');
        const listed = ((await store.loadSteps('r-created')).get('devices') as { storedItems: number })
          .storedItems;
        // Each device requested once, under the txid of the report that names it.
        const [results, distinct, underTxid] = store.db
          .prepare(
            `SELECT count(*), count(DISTINCT j.value), sum(l.request_id IS NOT NULL) FROM ledger l, json_each(l.device_ids) j
             WHERE l.run_id = 'r-created' AND l.step = 'report' AND l.outcome = 'succeeded'`,
          )
          .raw()
          .get() as number[];
        expect({ results, distinct, underTxid }).to.deep.equal({
          results: listed,
          distinct: listed,
          underTxid: listed,
        });
      } finally {
        await store.close();
        await slow.close();
        await client.close();
      }
    });
  });
});
