/**
 * What a run shows of its steps is read from its checkpoints without their outputs and items (Store.stepMarks,
 * store/checkpoint-steps.ts): a step's status, counts and words, on every backend, whatever its output holds (a
 * service's answer with a NUL in it, which PostgreSQL's jsonb refuses).
 */
import { expect } from 'chai';
import { versionOf } from '../../src/playbook/version.js';
import { UNCOUNTED } from '../../src/store/checkpoint-steps.js';
import { MARKS_READ, stepsSoFar } from '../../src/store/run-views.js';
import type { Store } from '../../src/store/store.js';
import { playbook } from '../runner/helpers.js';
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

/**
 * A run whose loop has run more iterations than MARKS_READ: what it shows while it runs is read from a bounded
 * number of checkpoints (the console asks every 2 s, and a loop of a million iterations has a million), and the
 * steps inside the loop say they are not counted; one with fewer is counted in full.
 */
forEachBackend('the steps of a run under way, read within a bound', (b) => {
  const pb = playbook(`version: 1
name: loops
on: { manual: true }
steps:
  - id: first
    uses: log
    with: { message: a }
  - id: each
    forEach:
      items: \${{ [1, 2] }}
      steps:
        - id: note
          uses: log
          with: { message: b }
  - id: last
    uses: log
    with: { message: c }
`);

  async function underWay(iterations: number) {
    const store = await b.open();
    const { version, definition } = versionOf(pb);
    await store.savePlaybookVersion(version, definition);
    store.createRun(run('r', { status: 'running', version }));
    store.saveStep('r', 'first', { status: 'succeeded', calls: 0, attempts: 1 });
    for (let i = 0; i < iterations; i++)
      store.saveStep('r', `each[${i}]/note`, { status: 'succeeded', calls: 1 });
    await store.durable();
    const read: number[] = [];
    const counting = new Proxy(store, {
      get(target, key, receiver) {
        if (key !== 'stepMarks') return Reflect.get(target, key, receiver) as unknown;
        return async (...args: Parameters<Store['stepMarks']>) => {
          const marks = await target.stepMarks(...args);
          read.push(marks.size);
          return marks;
        };
      },
    });
    const steps = await stepsSoFar(counting, (await store.getRun('r'))!);
    return { steps: steps!, read };
  }

  it('counts the steps inside a loop of up to MARKS_READ iterations', async () => {
    const { steps, read } = await underWay(40);
    expect(steps.find((s) => s.id === 'note')).to.include({ status: 'running', calls: 40 });
    expect(steps.find((s) => s.id === 'note')!.note).to.equal(undefined);
    expect(read).to.deep.equal([41]);
  });

  it('reads at most MARKS_READ + 1 checkpoints of a loop of more, and says its steps are not counted', async () => {
    const { steps, read } = await underWay(MARKS_READ + 500);
    expect(Math.max(...read)).to.be.at.most(MARKS_READ + 1);
    expect(steps.map((s) => [s.id, s.status])).to.deep.equal([
      ['first', 'succeeded'],
      ['each', 'running'],
      ['note', 'running'],
      ['last', 'pending'],
    ]);
    expect(steps.find((s) => s.id === 'note')).to.include({ calls: 0, note: UNCOUNTED });
  });
});

/**
 * A loop's rescue (its `onError` steps) runs once, outside the loop, after the loop failed: its checkpoints are
 * keyed by their ids alone, and a run whose loop ran more than MARKS_READ iterations still reads them.
 */
forEachBackend("a loop's rescue, read within the bound", (b) => {
  const pb = playbook(`version: 1
name: rescued
on: { manual: true }
steps:
  - id: each
    forEach:
      items: \${{ [1, 2] }}
      steps:
        - id: note
          uses: log
          with: { message: b }
    onError:
      - id: undo
        uses: log
        with: { message: c }
      - id: tell
        uses: log
        with: { message: d }
`);

  it('shows the rescue steps as their checkpoints say, however many iterations the loop ran', async () => {
    const store = await b.open();
    const { version, definition } = versionOf(pb);
    await store.savePlaybookVersion(version, definition);
    store.createRun(run('r', { status: 'running', version }));
    for (let i = 0; i < MARKS_READ + 500; i++)
      store.saveStep('r', `each[${i}]/note`, { status: i === 0 ? 'failed' : 'succeeded', calls: 1 });
    store.saveStep('r', 'each', { status: 'failed', error: 'one iteration failed' });
    store.saveStep('r', 'undo', { status: 'succeeded', calls: 0, attempts: 1 });
    await store.durable();
    const steps = await stepsSoFar(store, (await store.getRun('r'))!);
    expect(steps!.map((s) => [s.id, s.status])).to.deep.equal([
      ['each', 'failed'],
      ['note', 'failed'],
      ['undo', 'succeeded'],
      ['tell', 'running'],
    ]);
  });
});
