/**
 * What a run shows of its steps is read from its checkpoints without their outputs and items (Store.stepMarks,
 * store/checkpoint-steps.ts): a step's status, counts and words, on every backend, whatever its output holds (a
 * service's answer with a NUL in it, which PostgreSQL's jsonb refuses).
 */
import { expect } from 'chai';
import type { Store } from '../../src/store/store.js';
import { forEachBackend } from './backends.js';
import { run } from './fixtures.js';

const COUNTS = { total: 2, accepted: 1, succeeded: 1, failed: 0, skipped: 0, unconfirmed: 0, byError: {} };

forEachBackend('step marks', (b) => {
  let a: Store;
  beforeEach(async () => (a = await b.open()));

  it('reads each checkpoint of a run without its output, items, accepted requests and reports', async () => {
    a.createRun(run('r'));
    a.createRun(run('other'));
    a.saveStep('r', 'list', {
      status: 'succeeded',
      output: { page: 'x\0y', big: 'z'.repeat(10_000) },
      itemRuns: [['imei', ['1']]],
      items: [{ id: '1' }],
      storedItems: 1,
      devices: COUNTS,
      calls: 2,
      attempts: 1,
      note: 'listed',
    });
    a.saveStep('r', 'loop[0]/suspend', {
      status: 'confirming',
      accepted: [{ requestId: 'q', accountName: 'a', devices: [], attempts: 1, at: 1 }],
    });
    a.saveStep('r', 'report', { status: 'reporting', reports: [{ batch: 'b', sentAt: 1, reports: [] }] });
    a.saveStep('r', 'skip', { status: 'skipped', reason: 'no items', output: null });
    a.saveStep('r', 'stop', { status: 'failed', error: 'it broke' });
    a.saveStep('other', 'list', { status: 'succeeded' });
    await a.durable();
    const marks = await (await b.reopen(a)).stepMarks('r');
    expect(Object.fromEntries(marks)).to.deep.equal({
      list: { status: 'succeeded', devices: COUNTS, calls: 2, attempts: 1, note: 'listed' },
      'loop[0]/suspend': { status: 'confirming' },
      report: { status: 'reporting' },
      skip: { status: 'skipped', reason: 'no items' },
      stop: { status: 'failed', error: 'it broke' },
    });
  });
});
