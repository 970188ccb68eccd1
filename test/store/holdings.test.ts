/** What `/status` shows of each process on the store: its lease, and what it holds now (Ownership.holdings). */
import { expect } from 'chai';
import { forEachBackend } from './backends.js';
import { message, owner, run } from './fixtures.js';

const T = 1_800_000_000_000;

forEachBackend('each live owner with what it holds', (b) => {
  it('counts unfinished runs, unprocessed callbacks and locked devices per owner; a gone owner is left out', async () => {
    const store = await b.open();
    await store.registerOwner(owner('A', { startedAt: '2026-11-23T10:00:00.000Z' }), T, 15_000, false);
    await store.registerOwner(owner('B', { startedAt: '2026-11-23T11:00:00.000Z' }), T, 15_000, false);
    await store.registerOwner(owner('gone'), T - 60_000, 15_000, false);
    store.createRun(run('a1', { owner: 'A' }));
    store.createRun(run('a2', { owner: 'A', status: 'queued' }));
    store.createRun(run('a3', { owner: 'A', status: 'succeeded' }));
    store.createRun(run('b1', { owner: 'B' }));
    const [first] = await store.appendInbox('A', [message('r1'), message('r2')]);
    await store.appendInbox('B', [message('r3')]);
    await store.completeInbox([{ eventId: first as number, runs: [] }]);
    expect(await store.lockDevices('B', 'B/1', ['d1', 'd2', 'd3'], T)).to.equal(undefined);
    await store.durable();

    const held = await store.holdings(T);
    expect(held.map((o) => [o.id, o.runs, o.callbacks, o.lockedDevices, o.leaseUntil])).to.deep.equal([
      ['A', 2, 1, 0, T + 15_000],
      ['B', 1, 1, 3, T + 15_000],
    ]);
    expect(held[0]).to.include({ role: 'daemon', pid: 4242, host: 'elsewhere' });
  });
});
