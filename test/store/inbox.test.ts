/**
 * The callback inbox on every backend: each message is held by the owner that stored it; an owner that is gone
 * leaves its unprocessed messages to the next one that claims them, and a message is processed (its runs
 * stored) exactly once, whichever stores complete it. Stores on the same data play processes or replicas.
 */
import { expect } from 'chai';
import type { InboxEvent, Store } from '../../src/store/store.js';
import { backends, forEachBackend } from './backends.js';
import { message, owner, run } from './fixtures.js';

const T = 1_800_000_000_000;
const ids = (events: InboxEvent[]) => events.map((e) => e.id);
const queued = (id: string) => run(id, { status: 'queued' });

/** Stores `n` messages for `holder`, in one transaction: their ids. */
async function append(store: Store, holder: string, prefix: string, n: number): Promise<number[]> {
  const out = await store.appendInbox(
    holder,
    Array.from({ length: n }, (_, i) => message(`${prefix}-${i}`)),
  );
  for (const id of out) expect(id).to.be.a('number');
  return out as number[];
}

forEachBackend('the inbox, held per owner', (b) => {
  let a: Store;
  let c: Store;
  beforeEach(async () => {
    a = await b.open();
    c = await b.reopen(a);
  });

  it('gives an owner its own messages only, in order, after a given one, at most a limit', async () => {
    const [a1, a2] = await append(a, 'A', 'a', 2);
    const [b1] = await append(c, 'B', 'b', 1);
    const [a3] = await append(a, 'A', 'c', 1);
    expect(a2).to.be.above(a1!);
    expect(ids(await a.pendingInbox('A', 10))).to.deep.equal([a1, a2, a3]);
    expect(ids(await c.pendingInbox('B', 10))).to.deep.equal([b1]);
    expect(await a.pendingInbox('C', 10)).to.deep.equal([]);
    expect(ids(await a.pendingInbox('A', 2))).to.deep.equal([a1, a2]);
    expect(ids(await a.pendingInbox('A', 10, a1))).to.deep.equal([a2, a3]);
    expect((await a.pendingInbox('A', 1, a2))[0]).to.deep.include({
      id: a3,
      requestId: 'c-0',
      kind: 'suspendResponse',
      payload: { requestId: 'c-0' },
    });
    // What this store stored and has not processed: its admission control.
    expect([a.inboxBacklog(), c.inboxBacklog()]).to.deep.equal([3, 1]);
    await a.completeInbox([{ eventId: a1!, runs: [] }]);
    expect(a.inboxBacklog()).to.equal(2);
    expect(ids(await a.pendingInbox('A', 10))).to.deep.equal([a2, a3]);
  });

  it("gives a service's messages after a position, processed or not, whoever stored them", async () => {
    expect(await a.inboxPosition()).to.equal(0);
    const [a1] = await append(a, 'A', 'a', 1);
    const at = await a.inboxPosition();
    expect(at).to.equal(a1);
    const [b1, b2] = await append(c, 'B', 'b', 2);
    await a.appendInbox('A', [{ ...message('u-1'), service: 'DeviceUsage' }]);
    await a.completeInbox([{ eventId: b1!, runs: [] }]);
    expect(ids(await a.inboxAfter('CarrierService', at, 10))).to.deep.equal([b1, b2]);
    expect(ids(await c.inboxAfter('CarrierService', at, 1))).to.deep.equal([b1]);
    expect((await a.inboxAfter('DeviceUsage', 0, 10)).map((e) => e.requestId)).to.deep.equal(['u-1']);
    expect(await a.inboxPosition()).to.be.above(b2!);
  });

  it('any store reads what another stored, once durable, whoever holds it', async () => {
    const [a1] = await append(a, 'A', 'a', 1);
    const [b1] = await append(c, 'B', 'b', 1);
    const [a2] = await append(a, 'A', 'c', 1);
    // A replica reads the messages of the requests it follows, whichever replica stored them.
    expect(ids(await c.inboxByRequest(['a-0', 'b-0', 'c-0']))).to.deep.equal([a1, b1, a2]);
    // And the messages an owner holds, from any store: each message is durable once its append resolved.
    expect(ids(await c.pendingInbox('A', 10))).to.deep.equal([a1, a2]);
    expect(ids(await a.pendingInbox('B', 10))).to.deep.equal([b1]);
  });

  it('claims the messages a gone owner stored after the claiming store opened', async () => {
    // c opened first (beforeEach); a stores for an owner that then dies (never registered: gone).
    const stored = await append(a, 'A', 'a', 3);
    await c.registerOwner(owner('C'), T, 60_000, false);
    expect(await c.claimInbox('C', T)).to.equal(3);
    expect(ids(await c.pendingInbox('C', 10))).to.deep.equal(stored);
  });

  it("claimInbox takes a dead owner's unprocessed messages, and not a live one's", async () => {
    await a.registerOwner(owner('A'), T, 1_000, false);
    await a.durable();
    await c.registerOwner(owner('B'), T, 1_000, false);
    await c.durable();
    const [done, ...left] = await append(a, 'A', 'a', 3);
    const mine = await append(c, 'B', 'b', 1);
    expect(await a.completeInbox([{ eventId: done!, runs: [] }])).to.deep.equal([]);
    await a.durable();
    // Both alive: nothing to take.
    const x = await b.reopen(a);
    await x.registerOwner(owner('C'), T, 60_000, false);
    expect(await x.claimInbox('C', T + 500)).to.equal(0);
    expect(await x.pendingInbox('C', 10)).to.deep.equal([]);
    // A stops renewing, B renews: A's unprocessed messages, and only those, are C's.
    expect(await x.renewOwner('B', T + 900, 1_000)).to.equal(true);
    expect(await x.claimInbox('C', T + 1_500)).to.equal(2);
    expect(ids(await x.pendingInbox('C', 10))).to.deep.equal(left);
    expect(await x.pendingInbox('A', 10)).to.deep.equal([]);
    expect(ids(await x.pendingInbox('B', 10))).to.deep.equal(mine);
    await x.durable();
    // C is alive: another claim takes nothing of it; B released (a clean stop) leaves its messages at once.
    const y = await b.reopen(a);
    await y.registerOwner(owner('D'), T + 1_500, 60_000, false);
    expect(await y.claimInbox('D', T + 1_600)).to.equal(0);
    await y.durable();
    await c.releaseOwner('B');
    await c.durable();
    expect(await y.claimInbox('D', T + 1_600)).to.equal(1);
    expect(ids(await y.pendingInbox('D', 10))).to.deep.equal(mine);
    await y.durable();
    // A message processed stays processed, whoever claims.
    expect(await x.claimInbox('E', T + 100_000)).to.equal(3);
    expect(ids(await x.pendingInbox('E', 10))).to.deep.equal([...left, ...mine]);
  });

  it('two stores claiming at once never take one message both', async () => {
    const stored = [...(await append(a, 'gone', 'x', 30)), ...(await append(c, 'gone', 'y', 30))];
    await a.registerOwner(owner('P'), T, 60_000, false);
    await c.registerOwner(owner('Q'), T, 60_000, false);
    const third = await b.reopen(a);
    await third.registerOwner(owner('R'), T, 60_000, false);
    const taken = await Promise.all([a.claimInbox('P', T), c.claimInbox('Q', T), third.claimInbox('R', T)]);
    expect(taken.reduce((x, y) => x + y)).to.equal(60);
    // Each reads what it holds.
    const held = await Promise.all([a, c, third].map((s, i) => s.pendingInbox('PQR'[i]!, 100)));
    expect(held.map((h) => h.length)).to.deep.equal(taken);
    expect(held.flatMap(ids).sort((x, y) => x - y)).to.deep.equal(stored);
  });

  it('processes a message once, and stores its runs once, even when two stores complete it', async () => {
    const stored = await append(a, 'A', 'm', 10);
    const results = await Promise.all(
      stored.flatMap((eventId) => [
        a.completeInbox([{ eventId, runs: [queued(`a-${eventId}`)] }]),
        c.completeInbox([{ eventId, runs: [queued(`c-${eventId}`), queued(`c2-${eventId}`)] }]),
      ]),
    );
    const started = results.flat().map((r) => r.id);
    for (const eventId of stored) {
      const of = started.filter((id) => id.endsWith(`-${eventId}`));
      expect([[`a-${eventId}`], [`c-${eventId}`, `c2-${eventId}`]], `event ${eventId}`).to.deep.include(of);
    }
    await Promise.all([a.durable(), c.durable()]);
    const runs = await b.reopen(a).then((s) => s.listRuns({ limit: 100 }));
    expect(runs.map((r) => r.id).sort()).to.deep.equal([...started].sort());
    expect(runs.every((r) => r.status === 'queued')).to.equal(true);
    expect(await a.pendingInbox('A', 100)).to.deep.equal([]);
    // Processed, and still there for confirming a request.
    expect(ids(await c.inboxByRequest(['m-0', 'm-9']))).to.deep.equal([stored[0], stored[9]]);
    // Completed again later: nothing more.
    expect(
      await a.completeInbox(stored.map((eventId) => ({ eventId, runs: [queued(`late-${eventId}`)] }))),
    ).to.deep.equal([]);
  });

  it('completes several messages in one transaction, with their runs read back at once', async () => {
    const [m1, m2] = await append(a, 'A', 'm', 2);
    const started = await a.completeInbox([
      { eventId: m1!, runs: [queued('r1')] },
      { eventId: m2!, runs: [] },
    ]);
    expect(started.map((r) => r.id)).to.deep.equal(['r1']);
    expect(await a.getRun('r1')).to.deep.include({ id: 'r1', status: 'queued' });
    expect(await a.pendingInbox('A', 10)).to.deep.equal([]);
  });
});

describe('SQLite: two stores on one file in one process, as two processes', () => {
  it("appendInbox of one while the other's turn is open", async () => {
    const [b] = backends;
    const a = await b!.open();
    const c = await b!.reopen(a);
    try {
      // c's turn holds the file's write lock until its end, which cannot come while a waits for it.
      await c.registerOwner(owner('C'), T, 60_000, false);
      expect(await a.appendInbox('A', [message('m')])).to.have.length(1);
    } finally {
      await b!.closeAll();
    }
  });
});
