/**
 * The store keeps each playbook version's definition and the version each run was created with
 * (playbook/version.ts), on every backend: what a run resumed after its playbook changed executes.
 */
import { expect } from 'chai';
import type { Store } from '../../src/store/store.js';
import { forEachBackend } from './backends.js';
import { owner, run } from './fixtures.js';

const T = 1_800_000_000_000;

forEachBackend('playbook versions', (b) => {
  let a: Store;
  beforeEach(async () => (a = await b.open()));

  it('keeps the first definition of a version, read back by any store on the data', async () => {
    await a.savePlaybookVersion('0123456789abcdef', '{"name":"first"}');
    await a.savePlaybookVersion('0123456789abcdef', '{"name":"second"}');
    const other = await b.reopen(a);
    expect(await other.playbookVersion('0123456789abcdef')).to.equal('{"name":"first"}');
    expect(await other.playbookVersion('fedcba9876543210')).to.equal(undefined);
  });

  it('gives back the version a run was created with, to whoever claims it, and none for a run without', async () => {
    a.createRun({ ...run('with', { status: 'queued' }), version: '0123456789abcdef' });
    a.createRun(run('without', { status: 'queued' }));
    await a.durable();
    const other = await b.reopen(a);
    expect((await other.getRun('with'))?.version).to.equal('0123456789abcdef');
    await other.registerOwner(owner('B'), T, 60_000, false);
    const claimed = await other.claimRuns('B', undefined, T);
    expect(Object.fromEntries(claimed.map((r) => [r.id, r.version ?? null]))).to.deep.equal({
      with: '0123456789abcdef',
      without: null,
    });
  });
});
