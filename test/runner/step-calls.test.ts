/**
 * A step's `calls` are the requests it sent, as the service counts them: a listing one a page, a location
 * report one a batch of 10,000 devices, one a status poll and one a page of results; a request the service
 * refused counts as sent. Before, a listing refused at its first page said `calls 0`, and a report of 12,000
 * devices counted its two batches as one call and its result pages in the step but not on the progress line.
 */
import { expect } from 'chai';
import type { Emulator } from '../../src/emulator/index.js';
import { runPlaybook } from '../../src/runner/runner.js';
import type { RunSummary } from '../../src/store/store.js';
import { calls, clientFor, emulator, memoryStore, playbook } from './helpers.js';
import { NIGHTLY_REPORT } from './playbooks.js';

const REPORT = playbook(NIGHTLY_REPORT({ name: 'counted', pollInterval: '50ms' }));

describe('runner: the calls a step counts are the requests it sent', function () {
  this.timeout(60_000);
  let emu: Emulator;
  // Simulated time runs 360 times as fast: the report is ready within a second, and the bearer token (an hour)
  // lasts 10 s. At 3600 it lasted one second; a run slowed by a loaded machine had a request refused for its
  // expired token and sent again, which the emulator counts twice and the step, one request, once.
  before(async () => (emu = await emulator({ devicesPerAccount: 12_000, timeScale: 360 })));
  after(() => emu.close());

  /** Runs `pb` on a fresh world: its summary, the requests the emulator received by action, and the progress. */
  async function counted(account: string) {
    emu.reset({ seed: 1, accounts: 1, devicesPerAccount: 12_000, timeScale: 360 });
    const client = clientFor(emu);
    const store = memoryStore();
    let progress = 0;
    try {
      const summary = await runPlaybook(REPORT, {
        client,
        store,
        inputs: { account },
        onProgress: (p) => (progress = p.calls),
      });
      return { summary, received: (await calls(emu)).actions, progress };
    } finally {
      await store.close();
      await client.close();
    }
  }
  const stepCalls = (s: RunSummary, id: string) => s.steps.find((x) => x.id === id)?.calls;

  it('one a page, one a batch of a report, one a status poll, one a page of results', async () => {
    const { summary, received, progress } = await counted(emu.defaults.accounts[0]!);
    expect(summary.status, summary.error).to.equal('succeeded');
    const n = (action: string) => received[action] ?? 0;
    // More than 10,000 devices: the report is two requests at least (and its retries), the listing many pages.
    expect(n('location.createReport')).to.be.at.least(2);
    expect(n('devices.list')).to.be.greaterThan(1);
    expect(stepCalls(summary, 'devices')).to.equal(n('devices.list'));
    expect(stepCalls(summary, 'report')).to.equal(
      n('location.createReport') + n('location.getReportStatus') + n('location.getReport'),
    );
    expect(progress).to.equal(n('devices.list') + (stepCalls(summary, 'report') ?? 0));
  });

  it('each iteration of a fan-out checkpoints its own calls, so a resumed run counts them once', async () => {
    emu.reset({ seed: 1, accounts: 1, devicesPerAccount: 20, timeScale: 3600 });
    const account = emu.defaults.accounts[0]!;
    const pb = playbook(`version: 1
name: fanned-calls
on: { manual: true }
steps:
  - id: each
    forEach:
      items: '\${{ [1, 2, 3, 4, 5, 6, 7, 8] }}'
      concurrency: 4
      steps:
        - id: plans
          uses: plans.list
          with: { accountName: ${account} }
`);
    const client = clientFor(emu);
    const store = memoryStore();
    try {
      const first = await runPlaybook(pb, { client, store });
      expect(first.status, first.error).to.equal('succeeded');
      expect(stepCalls(first, 'plans')).to.equal(8);
      // Four iterations at a time: each one's checkpoint says the one request it sent, not those of the others
      // that were in flight meanwhile.
      const saved = await store.loadSteps(first.runId);
      const iterations = [...saved].filter(([key]) => key.endsWith('/plans'));
      expect(iterations.map(([key, cp]) => [key, (cp as { calls?: number }).calls])).to.deep.equal(
        iterations.map(([key]) => [key, 1]),
      );
      expect(iterations).to.have.length(8);
      // Resumed (as after a crash at its very end), every iteration is restored: 8 calls, none sent again.
      const before = (await calls(emu)).actions['plans.list'];
      store.updateRun(first.runId, { status: 'running' });
      const again = await runPlaybook(pb, { client, store, runId: first.runId });
      expect(again.status, again.error).to.equal('succeeded');
      expect((await calls(emu)).actions['plans.list']).to.equal(before);
      expect(stepCalls(again, 'plans')).to.equal(8);
    } finally {
      await store.close();
      await client.close();
    }
  });

  it('a listing the service refused counts the request it sent', async () => {
    const { summary, received } = await counted('0000123456-00009');
    expect(summary.status).to.equal('failed');
    expect(received['devices.list']).to.equal(1);
    expect(stepCalls(summary, 'devices')).to.equal(1);
  });
});
