/**
 * The ledger entries of a dry run (its planned devices, `skipped` with DRY RUN) as each store reads them: a
 * device's history says the run was a dry run (the console's device page), and `ledger.query` never reads them,
 * nor counts a dry run among a playbook's last runs: a real run acting on "the devices of the last run" would
 * otherwise act on those a dry run only planned, or find none after a dry run.
 */
import { expect } from 'chai';
import type { Store } from '../../src/store/store.js';
import { forEachBackend } from './backends.js';
import { group, imei, run } from './fixtures.js';

const AT = '2026-11-29T10:00:00.000Z';
const DRY = { outcome: 'skipped' as const, errorType: 'DRY RUN', attempts: 0 };

forEachBackend("a dry run's ledger entries", (b) => {
  let store: Store;

  beforeEach(async () => {
    store = await b.open();
    // A real run, then a dry run after it, of the same playbook: both ended.
    store.createRun(run('real', { startedAt: '2026-11-20T00:00:00.000Z' }));
    store.createRun(run('dry', { startedAt: '2026-11-21T00:00:00.000Z', dryRun: true }));
    store.recordDevices(
      'real',
      'suspend',
      [group([imei(1)]), group([imei(2)], { outcome: 'failed', errorType: 'X' })],
      AT,
    );
    store.recordDevices('dry', 'suspend', [group([imei(1), imei(3)], DRY)], AT);
    store.updateRun('real', { status: 'succeeded', endedAt: AT });
    store.updateRun('dry', { status: 'succeeded', endedAt: AT });
    await store.durable();
  });

  it("says in a device's history which of its runs was a dry run", async () => {
    const history = await store.deviceHistory(imei(1), 50);
    expect(history.map((h) => [h.runId, h.outcome, h.errorType ?? '-', h.dryRun ?? false])).to.deep.equal([
      ['dry', 'skipped', 'DRY RUN', true],
      ['real', 'succeeded', '-', false],
    ]);
  });

  it('is not read by ledger.query, and a dry run is not a last run', async () => {
    const ids = async (q: Parameters<Store['queryLedger']>[0]) =>
      (await store.queryLedger(q)).map((r) => `${r.runId} ${r.deviceId} ${r.outcome}`);
    expect(await ids({ playbook: 'pb', lastRuns: 1 })).to.deep.equal([
      `real ${imei(1)} succeeded`,
      `real ${imei(2)} failed`,
    ]);
    expect(await ids({ playbook: 'pb', outcome: 'skipped' })).to.deep.equal([]);
    expect(await ids({ errorTypes: ['DRY RUN'] })).to.deep.equal([]);
    expect(await ids({ step: 'suspend' })).to.deep.equal([
      `real ${imei(1)} succeeded`,
      `real ${imei(2)} failed`,
    ]);
  });
});
