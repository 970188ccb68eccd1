/**
 * Issue 15, point 4: one callback that cannot be stored failed every callback committed with it (a message
 * nested 6,000 levels deep, posted with 20 valid ones, made all 21 answer 500), and a full disk answered a bare
 * 500. Now the bad message is refused alone with 400 and the others of its commit are stored and acknowledged;
 * a store that cannot write answers 503 with Retry-After, the overload contract, so that the service sends again.
 *
 * The full disk is SQLite's own error: `PRAGMA max_page_count` at the inbox's current size, so that an insert
 * needing a new page fails with SQLITE_FULL ("database or disk is full").
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { GroupCommit, InboxRefusal } from '../../src/daemon/callbacks.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { InboxMessage } from '../../src/store/store.js';
import { DaemonWorld, inboxRequestIds } from '../helpers/daemon.js';
import {
  LISTENER_PASSWORD,
  LISTENER_USER,
  carrierCallback,
  listener,
  nestedText,
} from '../helpers/listener.js';

/** The owner the group commits store their messages under (a daemon's lease). */
const OWNER = 'group-commit-test';

const message = (requestId: string, payload: unknown): InboxMessage => ({
  service: 'CarrierService',
  kind: 'suspendResponse',
  requestId,
  payload,
  receivedAt: new Date().toISOString(),
});

/** An object `depth` levels deep, built without the parser (which refuses it first). */
function deepObject(depth: number): Record<string, unknown> {
  let v: Record<string, unknown> = { leaf: 1 };
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

/** Makes the inbox connection of an in-memory store full: no insert that needs a new page succeeds. */
function fillDisk(store: SqliteStore): void {
  const pages = store.db.pragma('page_count', { simple: true }) as number;
  store.db.pragma(`max_page_count = ${pages}`);
}

describe('one bad message fails every callback committed with it (issue 15, point 4)', function () {
  this.timeout(60_000);

  describe('the group commit', () => {
    it('stores the other messages of a commit that one message fails, and refuses that one with 400', async () => {
      const store = new SqliteStore(':memory:');
      let committed = 0;
      const commits = new GroupCommit(store, OWNER, (stored) => (committed += stored.length));
      // All added in one turn of the loop: one commit. Message 10 cannot be serialized (the stack overflows).
      const results = await Promise.allSettled(
        Array.from({ length: 21 }, (_, i) =>
          commits.add(message(`commit-${i}`, i === 10 ? deepObject(100_000) : { i })),
        ),
      );
      const bad = results[10];
      expect(bad?.status).to.equal('rejected');
      const reason = (bad as PromiseRejectedResult).reason as InboxRefusal;
      expect(reason).to.be.instanceOf(InboxRefusal);
      expect(reason.status).to.equal(400);
      expect(reason.message).to.match(/cannot be stored/);
      const others = results.filter((_, i) => i !== 10);
      expect(others.map((r) => (r.status === 'fulfilled' ? r.value : String(r.reason)))).to.deep.equal(
        Array(20).fill('stored'),
      );
      const ids = (await store.pendingInbox(OWNER, 100)).map((e) => e.requestId);
      expect(ids).to.have.length(20);
      expect(ids).to.not.include('commit-10');
      expect(committed).to.equal(20);
      await store.close();
    });

    it('refuses with 503 and Retry-After when the disk is full, and stores nothing', async () => {
      const store = new SqliteStore(':memory:');
      fillDisk(store);
      const commits = new GroupCommit(store, OWNER, () => undefined);
      const results = await Promise.allSettled(
        Array.from({ length: 5 }, (_, i) => commits.add(message(`full-${i}`, { pad: 'x'.repeat(100_000) }))),
      );
      for (const r of results) {
        expect(r.status).to.equal('rejected');
        const reason = (r as PromiseRejectedResult).reason as InboxRefusal;
        expect(reason).to.be.instanceOf(InboxRefusal);
        expect([reason.status, reason.message]).to.deep.equal([
          503,
          'the inbox is out of disk space; send again later',
        ]);
        expect(reason.retryAfter).to.be.a('number').and.be.greaterThan(0);
      }
      expect(store.inboxBacklog()).to.equal(0);
      await store.close();
    });
  });

  describe('the listener', () => {
    it('answers 503 with Retry-After when the disk is full, never 500, and stores the message sent again once there is room', async () => {
      const store = new SqliteStore(':memory:');
      const l = await listener(store);
      fillDisk(store);
      const post = () =>
        l.app.inject({
          method: 'POST',
          url: '/callbacks/CarrierService',
          payload: carrierCallback('disk-full-1', { padding: 'x'.repeat(200_000) }),
        });
      const full = await post();
      expect(full.statusCode, full.body).to.equal(503);
      expect(full.headers['retry-after']).to.match(/^[1-9][0-9]*$/);
      expect(full.json()).to.deep.equal({ error: 'the inbox is out of disk space; send again later' });
      expect(store.inboxBacklog()).to.equal(0);
      expect(await l.rejected('store_failed')).to.equal(1);

      store.db.pragma('max_page_count = 1073741823');
      const again = await post();
      expect(again.statusCode, again.body).to.equal(200);
      expect(again.json()).to.deep.equal({ status: 'stored' });
      expect(store.inboxBacklog()).to.equal(1);
      await l.app.close();
      await store.close();
    });

    it('refuses a message nested deeper than 64 levels with 400 as it is read', async () => {
      const store = new SqliteStore(':memory:');
      const l = await listener(store);
      const body = JSON.stringify(carrierCallback('deep-1')).replace(/}$/, `,"extra":${nestedText(6000)}}`);
      const r = await l.app.inject({
        method: 'POST',
        url: '/callbacks/CarrierService',
        headers: { 'content-type': 'application/json' },
        payload: body,
      });
      expect(r.statusCode, r.body).to.equal(400);
      expect(r.json()).to.deep.equal({ error: 'the body nests deeper than 64 levels' });
      // 64 levels is still a callback.
      const ok = await l.app.inject({
        method: 'POST',
        url: '/callbacks/CarrierService',
        payload: { ...carrierCallback('deep-ok'), extra: JSON.parse(nestedText(60)) as unknown },
      });
      expect(ok.statusCode, ok.body).to.equal(200);
      await l.app.close();
      await store.close();
    });
  });

  describe('a daemon (fleetbook serve)', () => {
    let world: DaemonWorld;

    before(async () => {
      world = await DaemonWorld.create('bad-message', { user: LISTENER_USER, password: LISTENER_PASSWORD });
    });
    after(async () => {
      await world?.close();
    });

    it('answers 400 to a message nested 6,000 levels deep and stores the 20 posted with it', async () => {
      const state = world.state();
      const daemon = await world.start(
        'bad-message daemon',
        join(import.meta.dirname, '..', 'fixtures', 'listener-hardening'),
      );
      const url = `${daemon.url}/callbacks/CarrierService`;
      const deep = JSON.stringify(carrierCallback('deep-6000')).replace(
        /}$/,
        `,"extra":${nestedText(6000)}}`,
      );
      const bodies = Array.from({ length: 21 }, (_, i) =>
        i === 10 ? deep : JSON.stringify(carrierCallback(`valid-${i}`)),
      );
      const answers = await Promise.all(
        bodies.map(async (body) => {
          const res = await fetch(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body,
          });
          return { status: res.status, body: (await res.json()) as Record<string, unknown> };
        }),
      );
      expect(answers[10]).to.deep.equal({
        status: 400,
        body: { error: 'the body nests deeper than 64 levels' },
      });
      expect(answers.filter((_, i) => i !== 10)).to.deep.equal(
        Array(20).fill({ status: 200, body: { status: 'stored' } }),
      );
      expect(inboxRequestIds(state).sort()).to.deep.equal(
        Array.from({ length: 21 }, (_, i) => `valid-${i}`)
          .filter((id) => id !== 'valid-10')
          .sort(),
      );
    });
  });
});
