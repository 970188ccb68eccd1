/**
 * The step_calls rows (a step's calls and attempts, written as each request leaves, so that a resumed step counts
 * the calls made before a stop) stayed until the run was pruned: a loop of reads left a row an iteration, 100,000
 * rows for 100,000 iterations, long after their checkpoints said how many calls each made. A row now goes with the
 * checkpoint that ends its step (the same turn's commit), and those of steps that never ended go with the run's end.
 * A run stopped part-way and resumed still counts every call the service received. On a real SQLite file and a
 * real PostgreSQL server. A run that fails with a step under way is test/store/step-calls-ended.test.ts.
 */
import { expect } from 'chai';
import type { Emulator } from '../../src/emulator/index.js';
import { runPlaybook } from '../../src/runner/runner.js';
import { forEachBackend, stepCallRows } from '../store/backends.js';
import { calls, clientFor, emulator, interruptedRun, playbook } from './helpers.js';

const DEVICES = 200;

const PB = playbook(`version: 1
name: read-each
on: { manual: true }
inputs:
  account: { type: string, required: true }
steps:
  - id: devices
    uses: devices.list
    with: { accountName: '\${{ inputs.account }}' }
  - id: each
    forEach:
      items: '\${{ steps.devices.items }}'
      concurrency: 1
      steps:
        - id: usage
          uses: devices.usage
          with: { deviceId: '\${{ item }}', earliest: '2026-01-01T00:00:00Z', latest: '2026-01-31T00:00:00Z' }
`);

forEachBackend('step_calls rows of the steps that ended', (b) => {
  let emu: Emulator;
  before(async function () {
    this.timeout(60_000);
    emu = await emulator({ devicesPerAccount: DEVICES });
  });
  after(async () => emu?.close());

  it('a loop of reads keeps rows only of iterations under way, none once the run ends, and counts every call', async function () {
    this.timeout(120_000);
    const account = emu.defaults.accounts[0]!;
    const store = await b.open();
    const client = clientFor(emu);
    const received = async (action: string) => (await calls(emu)).actions[action] ?? 0;
    const runId = 'r-read-each';
    try {
      await interruptedRun(
        PB,
        { client, store, inputs: { account }, runId },
        async () => (await received('devices.usage')) >= DEVICES / 2,
      );
      expect(
        await stepCallRows(b, store, runId),
        'rows of a run stopped half-way through its loop',
      ).to.be.at.most(2);

      const summary = await runPlaybook(PB, { client, store, inputs: { account }, runId });
      expect(summary.status, summary.error).to.equal('succeeded');
      expect(await stepCallRows(b, store, runId), 'rows once the run ended').to.equal(0);
      // The calls sent before the stop count too, read from the iterations' checkpoints and the rows kept. The
      // stop may cut the read under way as its connection writes it: counted as sent, it may never reach the
      // service's handler, so the count is what the service received, or one more.
      const usage = summary.steps.find((s) => s.id === 'usage')!;
      const got = await received('devices.usage');
      expect(
        usage.calls - got,
        `the reads counted (${usage.calls}) less those received (${got})`,
      ).to.be.oneOf([0, 1]);
      expect(usage.calls).to.be.at.least(DEVICES);
      const listing = summary.steps.find((s) => s.id === 'devices')!;
      expect(listing.calls).to.equal(await received('devices.list'));
    } finally {
      await client.close();
    }
  });
});
