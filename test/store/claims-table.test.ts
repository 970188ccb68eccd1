/**
 * The device claims of a state file of the version before (their table without rowids, where a claim of 500
 * devices costs several times as much to write and delete): once migrated, the table has rowids and the claims
 * of processes still running hold their devices.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { MIGRATIONS, SqliteStore } from '../../src/store/sqlite.js';
import { tempDir } from '../helpers/temp.js';
import { owner } from './fixtures.js';

const T = 1_800_000_000_000;
const ids = (from: number, n: number) =>
  Array.from({ length: n }, (_, i) => String(356758880000000 + from + i));

describe('SQLite: the device claims of a state file of the version before', () => {
  it('are kept in a table with rowids, and still hold their devices', async () => {
    const file = join(tempDir('fleetbook-claims-table-'), 'state.db');
    const before = new SqliteStore(file);
    await before.registerOwner(owner('A'), T, 60_000, false);
    expect(await before.lockDevices('A', 'A/1', ids(0, 500), T)).to.equal(undefined);
    await before.durable();
    await before.close();
    // The file as the version before left it: the claims' table without rowids, a schema version behind.
    const old = new Database(file);
    old.exec(`CREATE TABLE claims_before (holder TEXT PRIMARY KEY, owner TEXT NOT NULL, device_ids TEXT NOT NULL)
                WITHOUT ROWID;
              INSERT INTO claims_before SELECT holder, owner, device_ids FROM device_claims;
              DROP TABLE device_claims;
              ALTER TABLE claims_before RENAME TO device_claims;
              CREATE INDEX device_claims_by_owner ON device_claims (owner);`);
    old.pragma(`user_version = ${MIGRATIONS.length - 1}`);
    expect(() => old.prepare('SELECT rowid FROM device_claims').all()).to.throw(/no such column: rowid/);
    old.close();

    const store = new SqliteStore(file);
    try {
      await store.registerOwner(owner('B'), T, 60_000, false);
      // A's claim, made before, holds its devices from B; the others are B's to take.
      expect(await store.lockDevices('B', 'B/1', ids(499, 2), T)).to.equal(ids(499, 1)[0]);
      expect(await store.lockDevices('B', 'B/2', ids(500, 500), T)).to.equal(undefined);
      await store.durable();
      const check = new Database(file, { readonly: true });
      try {
        const rows = check.prepare('SELECT rowid, holder FROM device_claims ORDER BY holder').all();
        expect(rows.map((r) => (r as { holder: string }).holder)).to.deep.equal(['A/1', 'B/2']);
      } finally {
        check.close();
      }
    } finally {
      await store.close();
    }
  });
});
