/**
 * The boards that share rate budgets between the owners of a store, on each real backend: two stores on one
 * SQLite file (two processes), and two pools on one PostgreSQL database (two replicas) on a real server.
 * An exchange answers the live rows as the board held them before its own write; coordinators on both sides
 * agree on the members and their shares.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { systemClock } from '../../src/clock.js';
import { AreaBudget } from '../../src/rate/area.js';
import { RateShares, type ShareBoard, type SharePost } from '../../src/rate/shares.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { postgresUrl } from '../helpers/postgres.js';

const post = (owner: string, seq: number, view = '', claim = 0): SharePost => ({
  owner,
  seq,
  view,
  areas: { loc: { budget: 300, claim, pauseMs: 0, slowdowns: 0 } },
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `done()` holds, up to `ms` (well past any round trip, and within the test's timeout). */
async function until(done: () => boolean, ms = 30_000): Promise<void> {
  for (const end = Date.now() + ms; !done() && Date.now() < end;) await sleep(20);
}

interface Sides {
  a: ShareBoard;
  b: ShareBoard;
  close(): Promise<void>;
}

function boardSuite(name: string, open: () => Promise<Sides>): void {
  describe(`rate shares on the ${name} board`, function () {
    this.timeout(60_000);
    let s: Sides;
    beforeEach(async () => {
      s = await open();
    });
    afterEach(() => s.close());

    it('answers the live rows as they were before its own write', async () => {
      const now = Date.now();
      expect(await s.a.exchange('a/1', post('a', 1), 600_000, now)).to.deep.equal([]);
      const seenByB = await s.b.exchange('b/1', post('b', 1), 600_000, now);
      const elapsed = Date.now() - now;
      expect(seenByB.map((r) => [r.member, r.post])).to.deep.equal([['a/1', post('a', 1)]]);
      // Both writes fell between `now` and the end of b's: the age is at most the time that passed (and a
      // millisecond for the server's rounding of its clock to whole milliseconds).
      expect(seenByB[0]?.ageMs).to.be.within(0, elapsed + 1);
      const seenByA = await s.a.exchange('a/1', post('a', 2, 'a/1 b/1', 7), 600_000, Date.now());
      expect(seenByA.map((r) => [r.member, r.post]).sort()).to.deep.equal([
        ['a/1', post('a', 1)],
        ['b/1', post('b', 1)],
      ]);
      const again = await s.b.exchange('b/1', post('b', 2), 600_000, Date.now());
      expect(again.find((r) => r.member === 'a/1')?.post).to.deep.equal(post('a', 2, 'a/1 b/1', 7));
    });

    it("keeps the latest of a member's posts when an older one lands late", async () => {
      await s.a.exchange('a/1', post('a', 2, 'a/1', 5), 600_000, Date.now());
      await s.a.exchange('a/1', post('a', 1, '', 9), 600_000, Date.now());
      const seen = await s.b.exchange('b/1', post('b', 1), 600_000, Date.now());
      expect(seen.map((r) => r.post)).to.deep.equal([post('a', 2, 'a/1', 5)]);
    });

    it('forgets a row once its lease has lapsed, and never brings it back', async () => {
      // No lease here has to outlast a round trip: a/1 is first seen live under a lease far longer than the
      // test, then renewed with one that lapses at once, and the test waits until the board (by its own
      // clock: the caller's on SQLite, the server's on PostgreSQL) no longer answers it.
      await s.a.exchange('a/1', post('a', 1), 600_000, Date.now());
      await s.b.exchange('b/1', post('b', 1), 600_000, Date.now());
      const live = await s.b.exchange('b/1', post('b', 2), 600_000, Date.now());
      expect(live.map((r) => r.member)).to.have.members(['a/1', 'b/1']);
      await s.a.exchange('a/1', post('a', 2), 1, Date.now());
      let seq = 2;
      let seenByB: string[] = [];
      for (const end = Date.now() + 10_000; Date.now() < end; await sleep(5)) {
        seenByB = (await s.b.exchange('b/1', post('b', ++seq), 600_000, Date.now())).map((r) => r.member);
        if (!seenByB.includes('a/1')) break;
      }
      expect(seenByB, 'a lapses').to.deep.equal(['b/1']);
      const byA = await s.a.exchange('a/1', post('a', 3), 600_000, Date.now());
      expect(
        byA.map((r) => r.member),
        'a lapsed',
      ).to.deep.equal(['b/1']);
      const byB = await s.b.exchange('b/1', post('b', seq + 1), 600_000, Date.now());
      expect(
        byB.map((r) => r.member),
        'and stays lapsed',
      ).to.deep.equal(['b/1']);
    });

    it('coordinators on both sides agree on the members and split the budget; one that stops frees its share', async () => {
      const side = (owner: string, board: ShareBoard) => {
        const area = new AreaBudget('loc', { requestsPerSecond: 300, concurrency: 10 }, systemClock);
        const shares = new RateShares({
          owner,
          board,
          areas: { loc: area },
          intervalMs: 50,
          leaseMs: 20_000,
        });
        return { area, shares };
      };
      const [a, b] = [side('a', s.a), side('b', s.b)];
      a.shares.start();
      b.shares.start();
      try {
        const agreed = () =>
          [a, b].every(
            (x) =>
              x.shares.status().members.length === 2 &&
              x.shares.status().areas.loc?.limit === 150 &&
              x.area.currentRate === 150,
          );
        await until(agreed);
        expect([a.shares.status(), b.shares.status()].map((x) => x.members)).to.deep.equal([
          ['a/1', 'b/1'],
          ['a/1', 'b/1'],
        ]);
        expect(agreed(), 'both at 150').to.equal(true);
        await b.shares.stop();
        await until(() => a.shares.status().areas.loc?.limit === 300);
        expect(a.shares.status()).to.deep.include({ members: ['a/1'] });
        expect(a.area.currentRate).to.equal(300);
      } finally {
        await Promise.all([a.shares.stop(), b.shares.stop()]);
      }
    });
  });
}

boardSuite('SQLite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fleetbook-rates-'));
  const file = join(dir, 'state.db');
  const [x, y] = [new SqliteStore(file), new SqliteStore(file)];
  return {
    a: x.rates,
    b: y.rates,
    close: async () => {
      await Promise.all([x.close(), y.close()]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

boardSuite('PostgreSQL', async () => {
  const url = await postgresUrl();
  const [x, y] = await Promise.all([openPostgresStore(url), openPostgresStore(url)]);
  return {
    a: x.rates,
    b: y.rates,
    close: async () => {
      await Promise.all([x.close(), y.close()]);
    },
  };
});
