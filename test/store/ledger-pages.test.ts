/**
 * `eachDeviceResult` hands a run's results in pages of at most ROWS_PER_PAGE rows, however many devices one
 * ledger entry holds: a location report's batch is one entry of up to 10,000 devices, and a report holds a page
 * three times over while it writes it.
 */
import { expect } from 'chai';
import { ROWS_PER_PAGE } from '../../src/store/rows.js';
import { forEachBackend } from './backends.js';
import { imei, run } from './fixtures.js';

forEachBackend('the ledger read in pages of bounded size', (b) => {
  it('splits a large entry across pages, in order, and keeps each device once', async () => {
    const store = await b.open();
    store.createRun(run('r1'));
    const ids = Array.from({ length: 2 * ROWS_PER_PAGE + 500 }, (_, i) => imei(i));
    const group = { kind: 'imei', outcome: 'succeeded' as const, attempts: 1 };
    store.recordDevices('r1', 'report', [{ ...group, ids }], '2026-11-23T10:00:00.000Z');
    store.recordDevices('r1', 'report', [{ ...group, ids: ['x1', 'x2'] }], '2026-11-23T10:00:01.000Z');
    await store.durable();
    const pages: string[][] = [];
    for await (const page of store.eachDeviceResult('r1')) pages.push(page.map((r) => r.deviceId));
    expect(pages.map((p) => p.length)).to.deep.equal([ROWS_PER_PAGE, ROWS_PER_PAGE, 502]);
    expect(pages.flat()).to.deep.equal([...ids, 'x1', 'x2']);
  });
});
