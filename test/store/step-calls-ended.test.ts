/**
 * The step_calls rows of a run (a step's calls and attempts, written as each request leaves) go with the run's end:
 * those of a step still under way when its run failed stay no longer than the run, and another run's stay. On a
 * real SQLite file and a real PostgreSQL server. What a run of the runner leaves is in
 * test/runner/step-calls-removed.test.ts.
 */
import { expect } from 'chai';
import { forEachBackend, stepCallRows } from './backends.js';
import { run } from './fixtures.js';

forEachBackend('step_calls rows of a run that ended', (b) => {
  it('a run that fails with a step under way leaves none of its rows', async () => {
    const store = await b.open();
    store.createRun(run('r-ends', { playbook: 'read-each' }));
    store.saveStep('r-ends', 'each[3]/usage', { status: 'running' });
    store.saveCalls('r-ends', 'each[3]/usage', 2, 3);
    store.saveCalls('r-other', 'x', 1, 1);
    expect(await stepCallRows(b, store, 'r-ends')).to.equal(1);
    store.updateRun('r-ends', { status: 'failed', endedAt: new Date().toISOString(), error: 'stopped' });
    expect(await stepCallRows(b, store, 'r-ends')).to.equal(0);
    expect(await stepCallRows(b, store, 'r-other'), "another run's rows").to.equal(1);
  });
});
