/**
 * A database of the previous schema, upgraded under replicas of both versions (a rolling deployment): schema 8
 * moved the inbox's pending messages to inbox_pending. The messages pending before stay pending, for their owner;
 * those processed stay processed; a replica of the version before keeps storing messages, which are pending for
 * the new replicas to take up once it is gone, and its statements that marked a message processed now fail, so
 * that no message is processed twice. Against a real server (test/helpers/postgres.ts).
 */
import { expect } from 'chai';
import type pg from 'pg';
import { MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { postgresAtVersion } from '../helpers/postgres.js';
import { owner } from './fixtures.js';

const T = 1_800_000_000_000;
const BEFORE = 7;

/** How a replica of schema 7 stored a message, marked it processed and claimed messages (shortened). */
const V7 = {
  store: `INSERT INTO inbox (service, kind, request_id, device, payload_json, received_at, owner)
          VALUES ('m2m', 'suspendResponse', $1, '', '{}', '2026-11-28T00:00:00.000Z', $2) RETURNING id`,
  complete: `UPDATE inbox SET processed_at = $2 WHERE id = ANY($1::bigint[]) AND processed_at IS NULL RETURNING id`,
  claim: `UPDATE inbox SET owner = $1 WHERE id IN (SELECT id FROM inbox WHERE processed_at IS NULL AND owner IS NULL)`,
};

describe('PostgreSQL store: the inbox of a database upgraded to schema 8', function () {
  this.timeout(60_000);
  let db: pg.Client;
  let url: string;

  beforeEach(async () => {
    // The database as replicas of the version before left it.
    ({ url, db } = await postgresAtVersion(MIGRATIONS, BEFORE));
  });
  afterEach(async () => {
    await db.end();
  });

  const v7 = async (sql: string, values: unknown[]) =>
    (await db.query<{ id: string }>(sql, values)).rows.map((r) => Number(r.id));

  it('keeps pending what was pending, processed what was processed; the old replicas cannot mark it twice', async () => {
    const [gone1] = await v7(V7.store, ['r1', 'gone']);
    const [done] = await v7(V7.store, ['r2', 'gone']);
    const [gone2] = await v7(V7.store, ['r3', 'gone']);
    await v7(V7.complete, [[done], '2026-11-28T00:00:01.000Z']);

    const store = await openPostgresStore(url);
    try {
      await store.registerOwner(owner('new'), T, 60_000, false);
      await store.registerOwner(owner('old'), T, 60_000, false);
      expect((await db.query('SELECT max(version) AS v FROM fleetbook_schema')).rows[0].v).to.equal(
        MIGRATIONS.length,
      );
      // Nobody holds 'gone' any more: a new replica takes up its two pending messages, not the processed one.
      expect(await store.claimInbox('new', T)).to.equal(2);
      expect((await store.pendingInbox('new', 10)).map((e) => e.id)).to.deep.equal([gone1, gone2]);
      expect((await store.recentInbox(10)).map((e) => [e.id, e.processed])).to.deep.equal([
        [gone2, false],
        [done, true],
        [gone1, false],
      ]);

      // A replica of the version before, still running, stores a message: pending, held by it until it is gone.
      const [late] = await v7(V7.store, ['r4', 'old']);
      expect(await store.claimInbox('new', T)).to.equal(0);
      await store.releaseOwner('old');
      expect(await store.claimInbox('new', T)).to.equal(1);
      expect((await store.pendingInbox('new', 10, gone2)).map((e) => e.id)).to.deep.equal([late]);
      // Its completion and its claim fail, where they would have processed a message a second time.
      for (const [sql, values] of [
        [V7.complete, [[gone1], '2026-11-28T00:00:02.000Z']],
        [V7.claim, ['old']],
      ] as const)
        await db.query(sql, [...values]).then(
          () => expect.fail(`${sql} succeeded`),
          (e: Error) => expect(e.message).to.equal('column "processed_at" does not exist'),
        );

      // The new replica processes each message once.
      await store.completeInbox([
        { eventId: gone1!, runs: [] },
        { eventId: gone2!, runs: [] },
        { eventId: late!, runs: [] },
      ]);
      expect(await store.pendingInbox('new', 10)).to.deep.equal([]);
      expect((await store.recentInbox(10)).every((e) => e.processed)).to.equal(true);
    } finally {
      await store.close();
    }
  });
});
