/**
 * What a step under way writes to the store as its requests leave, on each store (a real SQLite file, a real
 * PostgreSQL server), measured in bytes: a suspend of 100,000 devices in one request, confirmed by asking the
 * request's status until the carrier acts. Before, its `confirming` checkpoint held the 100,000 device ids (which
 * the ledger entries written with it hold already), and the whole of it was written again at each status poll, to
 * keep the step's calls: about 2 MB a poll. Now the checkpoint names the request without its devices, and a
 * request that leaves writes the step's counts alone.
 *
 * The stop and resume after it claims what a resumed run reads (its devices from the ledger, its calls all
 * counted), not a size: it suspends `RESUMED` devices, enough that a checkpoint holding their ids would be tens of
 * kilobytes, and leaves the 100,000 to the measure of bytes a poll.
 */
import { expect } from 'chai';
import type { Emulator } from '../../src/emulator/index.js';
import { runPlaybook } from '../../src/runner/runner.js';
import type { Store } from '../../src/store/store.js';
import { forEachBackend } from '../store/backends.js';
import { actionCounts, clientFor, emulator, interruptedRun, playbook, setFaults } from './helpers.js';

const DEVICES = 100_000;
const RESUMED = 5_000;

const PB = playbook(`version: 1
name: suspend-all
on: { manual: true }
inputs:
  account: { type: string, required: true }
steps:
  - id: devices
    uses: devices.list
    with: { accountName: '\${{ inputs.account }}', currentState: active }
  - id: suspend
    uses: devices.suspend
    with: { accountName: '\${{ inputs.account }}', devices: '\${{ steps.devices.items }}' }
    confirm: { timeout: 5m, pollInterval: 50ms }
`);

/** The methods of a store that read a step's data, and the ledger's writes of its devices' results (once each). */
const NOT_MEASURED = new Set([
  'loadSteps',
  'stepMarks',
  'itemChunks',
  'deviceResults',
  'resultsUnder',
  'eachDeviceResult',
  'ledgerEntries',
  'recordDevices',
]);

/**
 * `store`, each call of any other method recorded with the size of its arguments in JSON (the ledger entries a
 * checkpoint is written with apart: they are the devices' results, written once), and the step key it names.
 */
function measured(store: Store, writes: { method: string; key: unknown; bytes: number }[]): Store {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function' || typeof prop !== 'string' || NOT_MEASURED.has(prop)) return value;
      return (...args: unknown[]) => {
        const [, key, ...rest] = args;
        // saveStep(run, key, state, devices): the state alone.
        const sized = prop === 'saveStep' ? [key, rest[0]] : args;
        writes.push({ method: prop, key, bytes: JSON.stringify(sized)?.length ?? 0 });
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

forEachBackend('what a step under way writes as each request leaves', (b) => {
  let emu: Emulator;
  before(async function () {
    this.timeout(120_000);
    emu = await emulator({ devicesPerAccount: DEVICES });
  });
  after(async () => emu?.close());

  it('a 100,000-device suspend: a few hundred bytes a status poll, not its devices again', async function () {
    this.timeout(240_000);
    // The carrier acts once the test moves the emulator's clock: until then the step asks the request's status.
    await setFaults(emu, { processingSeconds: 30 });
    const account = emu.defaults.accounts[0]!;
    const store = await b.open();
    const writes: { method: string; key: unknown; bytes: number }[] = [];
    const client = clientFor(emu);
    const polls = async () => (await actionCounts(emu))['requests.status'] ?? 0;
    try {
      const before = await polls();
      const run = runPlaybook(PB, { client, store: measured(store, writes), inputs: { account } });
      const deadline = Date.now() + 120_000;
      while ((await polls()) - before < 5 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      emu.advance(60);
      const summary = await run;
      expect(summary.status, summary.error).to.equal('succeeded');
      const step = summary.steps.find((s) => s.id === 'suspend')!;
      expect(step.devices.total, 'devices suspended in one request').to.be.greaterThan(DEVICES / 2);
      const received = await actionCounts(emu);
      expect(received['devices.suspend'], 'one request').to.equal(1);
      const made = (await polls()) - before;
      expect(made, 'status polls').to.be.at.least(5);
      // Everything written of the step: its start mark, its `sending` and `confirming` checkpoints, one write at
      // each request that left, and its end.
      const own = writes.filter((w) => w.key === 'suspend');
      const largest = Math.max(...own.map((w) => w.bytes));
      const total = own.reduce((n, w) => n + w.bytes, 0);
      expect(largest, `largest write of the step (${own.length} writes, ${total} bytes in all)`).to.be.below(
        2048,
      );
      expect(total / made, 'bytes written a status poll').to.be.below(1024);
      expect(step.calls, 'the step counts its requests').to.equal(1 + made);
    } finally {
      await client.close();
    }
  });

  it('stopped while it confirms and resumed: the devices from the ledger, the calls all counted', async function () {
    this.timeout(240_000);
    emu.reset({ seed: 1, accounts: 1, devicesPerAccount: RESUMED });
    await setFaults(emu, { processingSeconds: 30 });
    const account = emu.defaults.accounts[0]!;
    const store = await b.open();
    const client = clientFor(emu);
    const polls = async () => (await actionCounts(emu))['requests.status'] ?? 0;
    const runId = 'r-confirming';
    try {
      await interruptedRun(
        PB,
        { client, store, inputs: { account }, runId },
        async () => (await polls()) >= 3,
      );
      const cp = (await store.loadSteps(runId)).get('suspend') as { status: string; accepted: object[] };
      expect(cp.status).to.equal('confirming');
      expect(JSON.stringify(cp).length, 'the checkpoint, without the device ids').to.be.below(2048);
      const before = await polls();
      emu.advance(60);
      const summary = await runPlaybook(PB, { client, store, inputs: { account }, runId });
      expect(summary.status, summary.error).to.equal('succeeded');
      const received = await actionCounts(emu);
      expect(received['devices.suspend'], 'the request is not sent again').to.equal(1);
      const step = summary.steps.find((s) => s.id === 'suspend')!;
      // Every device the request named is confirmed: the resumed run read them from the ledger.
      expect(step.devices.succeeded).to.be.greaterThan(RESUMED / 2);
      expect(step.devices.total - step.devices.succeeded).to.equal(0);
      const results = await store.deviceResults(runId, 'suspend');
      expect(results.filter((r) => r.outcome === 'succeeded')).to.have.length(step.devices.succeeded);
      expect(step.calls, 'the suspend and every status poll, before the stop and after').to.equal(
        1 + received['requests.status']!,
      );
      expect(received['requests.status']).to.be.greaterThan(before);
    } finally {
      await client.close();
    }
  });
});
