/**
 * On PostgreSQL, a login that succeeded clears its user's count (api/login-count.ts) in one transaction: it read
 * its own row, then the rows still `sending`, then deleted, three statements each on its own, so that another
 * process's settle or claim could come between them. Statements sent outside a transaction go through the pool's
 * `query`; those of a transaction through a connection of their own.
 */
import { spawnSync } from 'node:child_process';
import { expect } from 'chai';
import type { LoginUser } from '../../src/api/login-count.js';
import { PostgresLogins } from '../../src/store/postgres/logins.js';
import { clientConfig, openPool } from '../../src/store/postgres/pool.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { postgresUrl } from '../helpers/postgres.js';

const T = 1_800_000_000_000;
const ADMIN: LoginUser = { service: 'https://m2m.example/api', username: 'admin' };

describe('PostgreSQL: a login that succeeds clears the count in one transaction', function () {
  this.timeout(60_000);

  it('sends no statement outside a transaction, and clears what the rule says', async () => {
    const url = await postgresUrl();
    const store = await openPostgresStore(url);
    const pool = openPool(clientConfig(url, 'fleetbook-test'));
    try {
      const logins = new PostgresLogins(pool);
      for (const [id, at] of [
        ['killed', T],
        ['refused', T + 2],
        ['waiting', T + 5],
        ['mine', T + 10],
        ['after', T + 20],
      ] as const)
        expect(await logins.claim(ADMIN, id, at, 9)).to.equal(undefined);
      await logins.settle(ADMIN, 'refused', 'refused', T + 3, 'HTTP 401');
      const gone = spawnSync(process.execPath, ['-e', '']).pid;
      await pool.query(`UPDATE session_logins SET pid = $1 WHERE id = 'killed'`, [gone]);

      const outside: string[] = [];
      const query = pool.query.bind(pool) as (text: unknown, values?: unknown) => Promise<unknown>;
      (pool as unknown as { query: typeof query }).query = (text, values) => {
        outside.push(typeof text === 'string' ? text : String((text as { text: string }).text));
        return query(text, values);
      };
      await logins.settle(ADMIN, 'mine', 'succeeded', T + 30);
      expect(outside, 'statements outside a transaction').to.deep.equal([]);
      expect((await logins.list()).map((r) => [r.id, r.state])).to.deep.equal([
        ['waiting', 'sending'],
        ['after', 'sending'],
      ]);
    } finally {
      await pool.end();
      await store.close();
    }
  });
});
