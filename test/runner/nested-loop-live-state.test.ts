/**
 * A loop inside a loop, as a run in progress shows it (`runs show`, `GET /runs/{id}`, the console: the run's
 * checkpoints read by store/checkpoint-steps.ts). Inside a loop only a step's first start was marked, so an inner
 * loop that had ended showed `running` for as long as the outer loop went on: nothing stored told its end in one
 * iteration from its start in the next. Each start of a loop inside a loop is now marked (one small write an outer
 * iteration, beside the inner loop's own checkpoint as it ends), and the inner loop shows its last state: the
 * status it ended with while the outer iteration is past it, `running` again once a later iteration is in it.
 *
 * The real runner on a real SQLite store, read as the live view reads it while the run waits.
 */
import { expect } from 'chai';
import { Interrupted, runPlaybook } from '../../src/runner/runner.js';
import { liveView } from '../../src/store/run-views.js';
import { memoryStore, onEmulator, playbook } from './helpers.js';

describe('runner: an inner loop that ended, while its outer loop goes on', function () {
  this.timeout(30_000);
  const t = onEmulator();

  it('shows the status it ended with, and running again once the next iteration is in it', async () => {
    const store = memoryStore();
    const pb = playbook(`
version: 1
name: nested-live
on: { manual: true }
steps:
  - id: outer
    forEach:
      items: \${{ [1, 2] }}
      steps:
        - id: inner
          forEach:
            items: \${{ [1, 2] }}
            steps:
              - id: leaf
                uses: log
                with: { message: leaf }
              - id: slow
                if: \${{ item == 2 }}
                wait: 400ms
        - id: hold
          wait: 400ms
  - id: after
    uses: log
    with: { message: after }
`);
    const controller = new AbortController();
    const running = runPlaybook(pb, { client: t.client, store, runId: 'nested', signal: controller.signal });
    const shown = async () => {
      const run = (await store.getRun('nested'))!;
      const { steps } = await liveView(store, run);
      return Object.fromEntries((steps ?? []).map((s) => [s.id, s.status]));
    };
    const until = async (what: string, ready: (marks: Map<string, unknown>) => boolean) => {
      for (let i = 0; i < 500; i++) {
        if (ready(await store.stepMarks('nested'))) return;
        await new Promise((r) => setTimeout(r, 10));
      }
      expect.fail(`the run never reached ${what}`);
    };
    const status = (m: Map<string, unknown>, key: string) => (m.get(key) as { status?: string })?.status;
    try {
      // The first outer iteration holds, its inner loop ended.
      await until(
        'the first hold',
        (m) => m.has('outer[0]/hold') && status(m, 'outer[0]/inner') === 'succeeded',
      );
      expect(await shown()).to.deep.include({
        outer: 'running',
        inner: 'succeeded',
        leaf: 'succeeded',
        hold: 'running',
        after: 'pending',
      });
      // The second outer iteration is in its inner loop (its second item waits).
      await until('the second inner loop', (m) => status(m, 'outer[1]/inner') === 'running');
      expect(await shown()).to.deep.include({ outer: 'running', inner: 'running', after: 'pending' });
    } finally {
      controller.abort(new Interrupted());
      await running.catch(() => undefined);
      await store.close();
    }
  });
});
