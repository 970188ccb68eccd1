/**
 * The inbox feed of replicas (Store.watchInbox on PostgreSQL): a callback the load balancer gave one replica
 * reaches the waits and confirmations of the others, as its commit lands; a replica never hears its own, and
 * hears what was stored while its listening connection was down once it is back.
 */
import { expect } from 'chai';
import pg from 'pg';
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

/**
 * Resolves once `n` feed connections (application_name fleetbook-feed) are open, or with `listening`, once `n`
 * feeds listen: each one's connection has sent its first statement, `LISTEN`, which it sends only once it has
 * read the mark it hands messages from (a fresh connection's `query` in pg_stat_activity is empty until then).
 */
async function untilFeeds(db: pg.Client, n: number, listening = false): Promise<void> {
  const count = async () =>
    (
      await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'fleetbook-feed'${listening ? " AND query <> ''" : ''}`,
      )
    ).rows[0]?.n;
  while ((await count()) !== n) await new Promise((r) => setTimeout(r, 5));
}

describe('PostgreSQL store: the inbox feed between replicas', function () {
  this.timeout(60_000);
  let a: PostgresStore;
  let b: PostgresStore;
  let url: string;

  beforeEach(async () => {
    url = await postgresUrl();
    [a, b] = await Promise.all([openPostgresStore(url), openPostgresStore(url)]);
  });
  afterEach(async () => {
    await Promise.allSettled([a.close(), b.close()]);
  });

  it('hands a replica the messages another one stores, in order, and never its own', async () => {
    const heardByA: InboxEvent[] = [];
    const heardByB: InboxEvent[] = [];
    const db = new pg.Client(url);
    await db.connect();
    const stopA = a.watchInbox('a', (evs) => heardByA.push(...evs));
    const stopB = b.watchInbox('b', (evs) => heardByB.push(...evs));
    // The feeds listen before anything is stored.
    await untilFeeds(db, 2, true);
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
    // Stopped, a feed hears nothing more: not even what a feed listening beside it (on a's store) hears.
    stopA();
    stopB();
    const heardByC: InboxEvent[] = [];
    const stops: (() => void)[] = [];
    try {
      await untilFeeds(db, 0);
      const stopC = a.watchInbox('c', (evs) => heardByC.push(...evs));
      stops.push(stopC);
      await untilFeeds(db, 1, true);
      const [r4] = await b.appendInbox('b', [message('r4')]);
      await until(heardByC, 1);
      expect(heardByC.map((e) => e.id)).to.deep.equal([r4]);
      expect(heardByA).to.have.length(2);
    } finally {
      for (const stop of stops) stop();
      await db.end();
    }
  });

  it('hands over, once back, what another stored while its connection was down, each message once', async () => {
    const heard: InboxEvent[] = [];
    const stop = b.watchInbox('b', (evs) => heard.push(...evs));
    const db = new pg.Client(url);
    await db.connect();
    try {
      await untilFeeds(db, 1, true);
      const [r1] = await a.appendInbox('a', [message('r1')]);
      // The feed's connection ends (a server restarted, a network cut): it reconnects a second later.
      await db.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'fleetbook-feed'",
      );
      await untilFeeds(db, 0);
      const [r2, r3] = await a.appendInbox('a', [message('r2'), message('r3')]);
      await untilFeeds(db, 1, true);
      const [r4] = await a.appendInbox('a', [message('r4')]);
      // The feed hands messages in the order of their ids: once it hands a later one, r5, whatever it was to
      // hand of r1-r4 (a message twice, from both the catch-up and a notice) is handed.
      const [r5] = await a.appendInbox('a', [message('r5')]);
      await until(heard, 5);
      expect(heard.map((e) => [e.id, e.requestId])).to.deep.equal([
        [r1, 'r1'],
        [r2, 'r2'],
        [r3, 'r3'],
        [r4, 'r4'],
        [r5, 'r5'],
      ]);
    } finally {
      stop();
      await db.end();
    }
  });

  it('reads again what a failed read of its notices left, once its connection is back', async () => {
    const heard: InboxEvent[] = [];
    const stop = b.watchInbox('b', (evs) => heard.push(...evs));
    const db = new pg.Client(url);
    await db.connect();
    try {
      await untilFeeds(db, 1, true);
      const [r1] = await a.appendInbox('a', [message('r1')]);
      while (heard.length < 1) await new Promise((r) => setTimeout(r, 10));
      // A message whose notice comes with one the read cannot take (an id out of range): the read of the two fails.
      await db.query('BEGIN');
      const { rows } = await db.query<{ id: string }>(
        `INSERT INTO inbox (service, kind, request_id, device, payload_json, received_at, owner)
         VALUES ('CarrierService', 'suspendResponse', 'r2', '', '{"requestId":"r2"}', '2026-11-23T00:00:00.000Z', 'a')
         RETURNING id`,
      );
      const r2 = Number(rows[0]?.id);
      await db.query(
        `SELECT pg_notify('fleetbook_inbox', $1), pg_notify('fleetbook_inbox', 'a 1 99999999999999999999')`,
        [`a ${r2} ${r2}`],
      );
      await db.query('COMMIT');
      const deadline = Date.now() + 10_000;
      while (heard.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(heard.map((e) => [e.id, e.requestId])).to.deep.equal([
        [r1, 'r1'],
        [r2, 'r2'],
      ]);
    } finally {
      stop();
      await db.end();
    }
  });
});
