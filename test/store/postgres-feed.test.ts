/**
 * The inbox feed of replicas (Store.watchInbox on PostgreSQL): a callback the load balancer gave one replica
 * reaches the waits and confirmations of the others, as its commit lands; a replica never hears its own.
 */
import { expect } from 'chai';
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/store.js';
import type { InboxEvent } from '../../src/store/store.js';
import { postgresUrl } from '../helpers/postgres.js';
import { message } from './fixtures.js';

/** Resolves once `got` holds `n` events, or rejects after `ms`. */
async function until(got: InboxEvent[], n: number, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (got.length < n) {
    if (Date.now() > deadline) throw new Error(`heard ${got.length} of ${n} messages within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('PostgreSQL store: the inbox feed between replicas', function () {
  this.timeout(60_000);
  let a: PostgresStore;
  let b: PostgresStore;

  beforeEach(async () => {
    const url = await postgresUrl();
    [a, b] = await Promise.all([openPostgresStore(url), openPostgresStore(url)]);
  });
  afterEach(async () => {
    await Promise.allSettled([a.close(), b.close()]);
  });

  it('hands a replica the messages another one stores, in order, and never its own', async () => {
    const heardByA: InboxEvent[] = [];
    const heardByB: InboxEvent[] = [];
    const stopA = a.watchInbox('a', (evs) => heardByA.push(...evs));
    const stopB = b.watchInbox('b', (evs) => heardByB.push(...evs));
    // The feeds listen before anything is stored: give their connections a moment.
    await new Promise((r) => setTimeout(r, 300));
    const fromB = await b.appendInbox('b', [message('r1'), message('r2'), message('r1')]);
    const fromA = await a.appendInbox('a', [message('r3')]);
    expect(fromB[2]).to.equal('duplicate');
    await until(heardByA, 2);
    await until(heardByB, 1);
    expect(heardByA.map((e) => [e.id, e.requestId])).to.deep.equal([
      [fromB[0], 'r1'],
      [fromB[1], 'r2'],
    ]);
    expect(heardByB.map((e) => [e.id, e.requestId])).to.deep.equal([[fromA[0], 'r3']]);
    expect(heardByA[0]?.payload).to.deep.equal(message('r1').payload);
    // Stopped, a feed hears nothing more.
    stopA();
    stopB();
    await b.appendInbox('b', [message('r4')]);
    await new Promise((r) => setTimeout(r, 300));
    expect(heardByA).to.have.length(2);
  });
});
