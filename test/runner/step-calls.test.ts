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
  before(async () => (emu = await emulator({ devicesPerAccount: 12_000, timeScale: 3600 })));
  after(() => emu.close());

  /** Runs `pb` on a fresh world: its summary, the requests the emulator received by action, and the progress. */
  async function counted(account: string) {
    emu.reset({ seed: 1, accounts: 1, devicesPerAccount: 12_000, timeScale: 3600 });
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

  it('a listing the service refused counts the request it sent', async () => {
    const { summary, received } = await counted('0000123456-00009');
    expect(summary.status).to.equal('failed');
    expect(received['devices.list']).to.equal(1);
    expect(stepCalls(summary, 'devices')).to.equal(1);
  });
});
