/**
 * What a run shows of its steps is read from its checkpoints without their outputs and items (Store.stepMarks,
 * store/checkpoint-steps.ts): a step's status, counts and words, on every backend, whatever its output holds (a
 * service's answer with a NUL in it, which PostgreSQL's jsonb refuses).
 */
import { expect } from 'chai';
import { versionOf } from '../../src/playbook/version.js';
import { UNCOUNTED } from '../../src/store/checkpoint-steps.js';
import { liveView, MARKS_READ } from '../../src/store/run-views.js';
import type { Playbook } from '../../src/playbook/schema.js';
import type { RunRecord, Store } from '../../src/store/store.js';
import { playbook } from '../runner/helpers.js';
import { forEachBackend, type Backend } from './backends.js';
import { run } from './fixtures.js';

const COUNTS = { total: 2, accepted: 1, succeeded: 1, failed: 0, skipped: 0, unconfirmed: 0, byError: {} };

/** A store of `b` that holds the version of `pb` and runs of it under way, by id, with more of each run. */
async function storeOf(b: Backend, pb: Playbook, runs: Record<string, Partial<RunRecord>> = { r: {} }) {
  const store = await b.open();
  const { version, definition } = versionOf(pb);
  await store.savePlaybookVersion(version, definition);
  for (const [id, o] of Object.entries(runs)) store.createRun(run(id, { status: 'running', version, ...o }));
  return store;
}

/** What a run of `store` shows while it runs. */
const live = async (store: Store, id = 'r') => liveView(store, (await store.getRun(id))!);

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
    const store = await storeOf(b, pb);
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
    const steps = (await liveView(counting, (await store.getRun('r'))!)).steps;
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
    const store = await storeOf(b, pb);
    for (let i = 0; i < MARKS_READ + 500; i++)
      store.saveStep('r', `each[${i}]/note`, { status: i === 0 ? 'failed' : 'succeeded', calls: 1 });
    store.saveStep('r', 'each', { status: 'failed', error: 'one iteration failed' });
    store.saveStep('r', 'undo', { status: 'succeeded', calls: 0, attempts: 1 });
    await store.durable();
    const steps = (await live(store)).steps;
    expect(steps!.map((s) => [s.id, s.status])).to.deep.equal([
      ['each', 'failed'],
      ['note', 'failed'],
      ['undo', 'succeeded'],
      ['tell', 'running'],
    ]);
  });
});

/**
 * A run under way marks each step as it begins (`running`, with when) and one its `if` skipped (`skipped`, with
 * why); inside a loop, only the first start and the first skip of each step, in the writes of its iterations that
 * happen anyway. What is shown is read from those marks on every backend: the step it is in `running` since it
 * began, the steps it skipped `skipped` (in a loop too, while every iteration so far skipped it), none guessed.
 */
forEachBackend('the steps of a run under way, from the marks of their starts and skips', (b) => {
  const pb = playbook(`version: 1
name: marked
on: { manual: true }
steps:
  - id: first
    uses: log
    with: { message: a }
  - id: quiet
    if: \${{ run.dryRun }}
    uses: log
    with: { message: b }
  - id: each
    forEach:
      items: \${{ [1, 2] }}
      steps:
        - id: note
          uses: log
          with: { message: c }
        - id: never
          if: \${{ run.dryRun }}
          uses: log
          with: { message: d }
  - id: listing
    uses: log
    with: { message: e }
`);
  const at = (s: number) => `2026-03-01T10:00:0${s}.000Z`;

  async function shown(write: (store: Store) => void) {
    const store = await storeOf(b, pb);
    write(store);
    await store.durable();
    const reopened = await b.reopen(store);
    return (await live(reopened)).steps!;
  }

  it('a step skipped before a step under way that writes nothing as it goes: skipped, and the other running since it began', async () => {
    const steps = await shown((store) => {
      store.saveStep('r', 'first', { status: 'succeeded', startedAt: at(1), endedAt: at(2) });
      store.saveStep('r', 'quiet', { status: 'skipped', reason: '`if` was false' });
      store.saveStep('r', 'each', { status: 'succeeded', startedAt: at(2), endedAt: at(3) });
      store.saveStep('r', 'each[0]/note', { status: 'succeeded' });
      store.saveStep('r', 'each[0]/never', { status: 'skipped', reason: '`if` was false' });
      store.saveStep('r', 'each[1]/note', { status: 'succeeded' });
      store.saveStep('r', 'listing', { status: 'running', startedAt: at(3) });
    });
    expect(
      steps.map((s) => [s.id, s.status, s.reason ?? null, s.startedAt ?? null, s.endedAt ?? null]),
    ).to.deep.equal([
      ['first', 'succeeded', null, at(1), at(2)],
      ['quiet', 'skipped', '`if` was false', null, null],
      ['each', 'succeeded', null, at(2), at(3)],
      ['note', 'succeeded', null, null, null],
      ['never', 'skipped', '`if` was false', null, null],
      ['listing', 'running', null, at(3), null],
    ]);
  });

  it('a loop that ended while the run goes on: its steps as the iterations ended them, with their final counts', async () => {
    const NO_DEVICES = 'no devices: `devices` is an empty list, nothing was sent';
    const steps = await shown((store) => {
      store.saveStep('r', 'first', { status: 'succeeded', startedAt: at(1), endedAt: at(2) });
      store.saveStep('r', 'quiet', { status: 'skipped', reason: '`if` was false' });
      store.saveStep('r', 'each', { status: 'succeeded', startedAt: at(2), endedAt: at(4) });
      // The first iteration began `note` and acted; the second was given no devices.
      store.saveStep('r', 'each[0]/note', { status: 'succeeded', calls: 2, startedAt: at(2) });
      store.saveStep('r', 'each[0]/never', { status: 'skipped', reason: '`if` was false' });
      store.saveStep('r', 'each[1]/note', { status: 'skipped', reason: NO_DEVICES, calls: 0 });
      store.saveStep('r', 'listing', { status: 'running', startedAt: at(4) });
    });
    expect(steps.map((s) => [s.id, s.status, s.calls, s.reason ?? null])).to.deep.equal([
      ['first', 'succeeded', 0, null],
      ['quiet', 'skipped', 0, '`if` was false'],
      ['each', 'succeeded', 0, null],
      ['note', 'succeeded', 2, null],
      ['never', 'skipped', 0, '`if` was false'],
      ['listing', 'running', 0, null],
    ]);
  });

  it('inside a loop under way: a step skipped in every iteration so far skipped, one begun running since its first start', async () => {
    const steps = await shown((store) => {
      store.saveStep('r', 'first', { status: 'succeeded', startedAt: at(1), endedAt: at(2) });
      store.saveStep('r', 'quiet', { status: 'skipped', reason: '`if` was false' });
      store.saveStep('r', 'each', { status: 'running', startedAt: at(2) });
      store.saveStep('r', 'each[0]/note', { status: 'succeeded', startedAt: at(3) });
      store.saveStep('r', 'each[0]/never', { status: 'skipped', reason: '`if` was false' });
      store.saveStep('r', 'each[1]/note', { status: 'succeeded' });
    });
    expect(steps.map((s) => [s.id, s.status, s.reason ?? null, s.startedAt ?? null])).to.deep.equal([
      ['first', 'succeeded', null, at(1)],
      ['quiet', 'skipped', '`if` was false', null],
      ['each', 'running', null, at(2)],
      ['note', 'running', null, at(3)],
      ['never', 'skipped', '`if` was false', null],
      ['listing', 'pending', null, null],
    ]);
  });
});

/**
 * A dry run in progress lists the calls it has planned so far (run-views.ts liveView), from the checkpoints of its
 * planned steps (Checkpoint.planned): each step's over its loop's iterations, in the playbook's order. Before,
 * they were in its summary only, once it ended.
 */
forEachBackend('the calls a dry run under way has planned', (b) => {
  const pb = playbook(`version: 1
name: plans
on: { manual: true }
steps:
  - id: suspend
    uses: log
    with: { message: a }
  - id: each
    forEach:
      items: \${{ [1, 2, 3] }}
      steps:
        - id: restore
          uses: log
          with: { message: b }
  - id: last
    uses: log
    with: { message: c }
`);

  it('sums each planned step over its checkpoints, and lists none of a run that acts', async () => {
    const store = await storeOf(b, pb, { dry: { dryRun: true }, real: {} });
    const plan = (action: string, calls: number, devices: number) => ({
      status: 'planned' as const,
      planned: { action, calls, devices },
    });
    for (const id of ['dry', 'real']) {
      // In the order a store may give them back: the loop's iterations first.
      store.saveStep(id, 'each[1]/restore', plan('devices.restore', 1, 4));
      store.saveStep(id, 'each[0]/restore', plan('devices.restore', 2, 3));
      store.saveStep(id, 'suspend', plan('devices.suspend', 1, 7));
    }
    await store.durable();
    const dry = await live(store, 'dry');
    expect(dry.planned).to.deep.equal([
      { step: 'suspend', action: 'devices.suspend', calls: 1, devices: 7 },
      { step: 'restore', action: 'devices.restore', calls: 3, devices: 7 },
    ]);
    expect(dry.steps?.map((s) => [s.id, s.status])).to.deep.equal([
      ['suspend', 'planned'],
      ['each', 'running'],
      ['restore', 'running'],
      ['last', 'pending'],
    ]);
    expect(await live(store, 'real')).to.not.have.property('planned');
  });
});
