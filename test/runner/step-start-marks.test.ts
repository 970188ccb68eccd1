/**
 * What a run writes for its steps to be shown true while it goes on (store/checkpoint-steps.ts): a mark as each
 * step begins (`running`, with when) and as one is skipped by its `if` (`skipped`, with why), and inside a loop
 * only the first of each for each step, however many iterations it runs. A step skipped by its `if` outside any
 * loop stays skipped when its run resumes, as a finished step does: its `if` is not evaluated again.
 */
import { expect } from 'chai';
import { runPlaybook } from '../../src/runner/runner.js';
import type { Store } from '../../src/store/store.js';
import { interruptedRun, memoryStore, onEmulator, playbook } from './helpers.js';

/** `store`, counting the checkpoints written under each key. */
function counting(store: Store): { store: Store; writes: Map<string, number> } {
  const writes = new Map<string, number>();
  const proxy = new Proxy(store, {
    get(target, key, receiver) {
      if (key !== 'saveStep') return Reflect.get(target, key, receiver) as unknown;
      return (...args: Parameters<Store['saveStep']>) => {
        writes.set(args[1], (writes.get(args[1]) ?? 0) + 1);
        target.saveStep(...args);
      };
    },
  });
  return { store: proxy, writes };
}

describe('runner: the marks of steps begun and skipped', () => {
  const t = onEmulator();

  it('inside a loop, marks only the first start and the first skip of each step, however many iterations', async () => {
    const pb = playbook(`
version: 1
name: marks-in-loop
on: { manual: true }
steps:
  - id: each
    forEach:
      items: \${{ [${Array.from({ length: 200 }, (_, i) => i).join(', ')}] }}
      steps:
        - id: note
          uses: log
          with: { message: 'item \${{ item }}' }
        - id: never
          if: \${{ run.dryRun }}
          uses: log
          with: { message: never }
`);
    const { store, writes } = counting(t.store);
    const summary = await runPlaybook(pb, { client: t.client, store, runId: 'loop' });
    expect(summary.status).to.equal('succeeded');
    const inLoop = (id: string) =>
      [...writes].filter(([k]) => k.endsWith(`/${id}`)).reduce((n, [, c]) => n + c, 0);
    // Each iteration's own checkpoint of `note`, and one mark of its first start; one mark of `never`'s first skip.
    expect([inLoop('note'), inLoop('never')]).to.deep.equal([201, 1]);
    // The loop: its start, its end.
    expect(writes.get('each')).to.equal(2);
  });

  it('a step skipped by its `if` stays skipped when its run resumes; the one it was in runs again', async () => {
    const pb = playbook(`
version: 1
name: resume-skip
on: { manual: true }
steps:
  - id: quiet
    if: \${{ env.GO == 'yes' }}
    uses: log
    with: { message: quiet ran }
  - id: pause
    wait: 300ms
  - id: last
    uses: log
    with: { message: last }
`);
    const store = memoryStore();
    try {
      await interruptedRun(
        pb,
        { client: t.client, store, runId: 'r', env: { GO: 'no' } },
        async () => (await store.loadSteps('r')).get('pause') !== undefined,
      );
      const marks = Object.fromEntries(await store.stepMarks('r'));
      expect(marks.quiet).to.deep.equal({ status: 'skipped', reason: '`if` was false' });
      expect(marks.pause).to.include({ status: 'waiting' });
      expect(typeof (marks.pause as { startedAt?: unknown }).startedAt).to.equal('string');
      // Resumed where its `if` would now hold: the skip stands, and the run goes on from the wait.
      const summary = await runPlaybook(pb, { client: t.client, store, runId: 'r', env: { GO: 'yes' } });
      expect(summary.steps.map((s) => [s.id, s.status, s.reason ?? null])).to.deep.equal([
        ['quiet', 'skipped', '`if` was false'],
        ['pause', 'succeeded', null],
        ['last', 'succeeded', null],
      ]);
    } finally {
      await store.close();
    }
  });
});
