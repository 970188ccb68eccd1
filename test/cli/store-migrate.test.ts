/**
 * `fleetbook store migrate` applies the schema migrations the store of FLEETBOOK_STATE lacks, and says its
 * version: a PostgreSQL database before replicas start on it, or a SQLite file (child process: dist/ must be
 * built).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { MIGRATIONS as POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { MIGRATIONS as SQLITE_MIGRATIONS } from '../../src/store/sqlite.js';
import { fleetbook } from '../helpers/cli.js';
import { postgresUrl } from '../helpers/postgres.js';

async function versions(url: string): Promise<number[]> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    const { rows } = await client.query<{ version: number }>(
      'SELECT version FROM fleetbook_schema ORDER BY 1',
    );
    return rows.map((r) => r.version);
  } finally {
    await client.end();
  }
}

describe('fleetbook store migrate', function () {
  this.timeout(60_000);

  it('migrates the PostgreSQL database of FLEETBOOK_STATE, and says its version', async () => {
    const url = await postgresUrl();
    const safe = url.replace(/\/\/[^@]*@/, '//postgres@');
    for (let i = 0; i < 2; i++) {
      const r = await fleetbook(['store', 'migrate'], { FLEETBOOK_STATE: url });
      expect(r.stderr).to.equal('');
      expect(r.code).to.equal(0);
      expect(r.stdout).to.equal(
        `the database ${safe} (FLEETBOOK_STATE) is at schema version ${POSTGRES_MIGRATIONS.length}\n`,
      );
    }
    expect(await versions(url)).to.deep.equal(POSTGRES_MIGRATIONS.map((_, i) => i + 1));
  });

  it('names --state, not FLEETBOOK_STATE, as where a PostgreSQL URL given there came from', async () => {
    const url = await postgresUrl();
    const safe = url.replace(/\/\/[^@]*@/, '//postgres@');
    const r = await fleetbook(['store', 'migrate', '--state', url], {});
    expect(r.stdout).to.equal(
      `the database ${safe} (--state) is at schema version ${POSTGRES_MIGRATIONS.length}\n`,
    );
    const pruned = await fleetbook(['store', 'prune', '--older-than', '1d', '--state', url], {});
    expect(pruned.stdout).to.match(new RegExp(`^the database ${safe} \\(--state\\): removed 0 run`));
    const missing = `${url}_missing`;
    const refused = await fleetbook(['store', 'migrate', '--state', missing], {});
    expect(refused.code).to.equal(2);
    expect(refused.stderr).to.match(
      new RegExp(`^fleetbook: cannot open the database ${safe}_missing \\(--state\\): `),
    );
  });

  it('migrates the SQLite file of --state', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleetbook-migrate-'));
    try {
      // An empty file is a database without a schema; a file that does not exist is refused
      // (missing-state-file.test.ts).
      const file = join(dir, 'state.db');
      writeFileSync(file, '');
      const r = await fleetbook(['store', 'migrate', '--state', file], {});
      expect(r.stderr).to.equal('');
      expect(r.code).to.equal(0);
      expect(r.stdout).to.equal(
        `the state file ${file} (--state) is at schema version ${SQLITE_MIGRATIONS.length}\n`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('exits 2 on a database newer than this fleetbook', async () => {
    const url = await postgresUrl();
    await fleetbook(['store', 'migrate'], { FLEETBOOK_STATE: url });
    const client = new pg.Client(url);
    await client.connect();
    await client.query('INSERT INTO fleetbook_schema (version) VALUES ($1)', [
      POSTGRES_MIGRATIONS.length + 1,
    ]);
    await client.end();
    const r = await fleetbook(['store', 'migrate'], { FLEETBOOK_STATE: url });
    expect(r.code).to.equal(2);
    expect(r.stderr).to.match(
      /is at schema version \d+, newer than this fleetbook \(\d+\); upgrade fleetbook\n$/,
    );
  });

  it('names a migration that fails, and the version the database stays at; run again, it goes on', async () => {
    const url = await postgresUrl();
    const safe = url.replace(/\/\/[^@]*@/, '//postgres@');
    const last = POSTGRES_MIGRATIONS.length;
    // A table a migration creates made by hand: that migration fails, the ones before it are applied.
    const failing =
      POSTGRES_MIGRATIONS.findIndex((m) => m.includes('CREATE TABLE ledger_superseded_runs')) + 1;
    expect(failing).to.be.greaterThan(1);
    const client = new pg.Client(url);
    await client.connect();
    try {
      await client.query('CREATE TABLE ledger_superseded_runs (x integer)');
      const r = await fleetbook(['store', 'migrate'], { FLEETBOOK_STATE: url });
      expect(r.code).to.equal(2);
      expect(r.stdout).to.equal('');
      expect(r.stderr).to.equal(
        `fleetbook: the database ${safe} (FLEETBOOK_STATE): schema migration ${failing} failed and was rolled back, so it stays at version ${failing - 1}; \`fleetbook store migrate\` (or a start) applies the rest once the cause is fixed: relation "ledger_superseded_runs" already exists\n`,
      );
      expect(await versions(url)).to.deep.equal(
        POSTGRES_MIGRATIONS.slice(0, failing - 1).map((_, i) => i + 1),
      );
      await client.query('DROP TABLE ledger_superseded_runs');
    } finally {
      await client.end();
    }
    const again = await fleetbook(['store', 'migrate'], { FLEETBOOK_STATE: url });
    expect(again.stderr).to.equal('');
    expect(again.stdout).to.equal(`the database ${safe} (FLEETBOOK_STATE) is at schema version ${last}\n`);
  });

  it('says, when the user cannot create tables in a fresh database, that migrating needs one that can', async () => {
    const url = await postgresUrl();
    // A user with only the rights replicas need once the database is migrated (docs/replicas.md): it may use the
    // schema, not create in it (PostgreSQL 15 and later give PUBLIC no CREATE there; older ones did).
    const role = `fleetbook_rw_${process.pid}`;
    const admin = new pg.Client(url);
    await admin.connect();
    try {
      await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'rw-pw'`);
      await admin.query('REVOKE CREATE ON SCHEMA public FROM PUBLIC');
      await admin.query(`GRANT USAGE ON SCHEMA public TO ${role}`);
    } finally {
      await admin.end();
    }
    const user = new URL(url);
    user.username = role;
    user.password = 'rw-pw';
    const safe = `postgres://${role}@${user.host}${user.pathname}`;
    const HINT =
      "this user cannot create or change the store's tables, which the first start on a database (and an upgrade that adds a migration) needs: run `fleetbook store migrate` as a user that can, then start with this one (docs/replicas.md: the user's rights)";
    for (const args of [
      ['store', 'migrate'],
      ['runs', 'list'],
    ]) {
      const r = await fleetbook(args, { FLEETBOOK_STATE: user.href });
      expect([r.code, r.stdout, r.stderr], args.join(' ')).to.deep.equal([
        2,
        '',
        `fleetbook: cannot open the database ${safe} (FLEETBOOK_STATE): permission denied for schema public: ${HINT}\n`,
      ]);
    }

    // An upgrade: the database migrated by its owner but for the migration that creates step_calls (and those
    // after it), which this user cannot apply.
    const last = POSTGRES_MIGRATIONS.findIndex((m) => m.includes('CREATE TABLE step_calls')) + 1;
    expect(last).to.be.greaterThan(0);
    expect((await fleetbook(['store', 'migrate'], { FLEETBOOK_STATE: url })).code).to.equal(0);
    const owner = new pg.Client(url);
    await owner.connect();
    try {
      expect(POSTGRES_MIGRATIONS.slice(last).map((m) => m.split(';')[0])).to.deep.equal([
        'ALTER TABLE schedules ADD COLUMN loaded_at text COLLATE "C"',
        'ALTER TABLE ledger ADD COLUMN by_state_read boolean',
        'ALTER TABLE runs ADD COLUMN late_moves_json text',
      ]);
      await owner.query('ALTER TABLE runs DROP COLUMN late_moves_json');
      await owner.query('DROP INDEX ledger_late');
      await owner.query('ALTER TABLE ledger DROP COLUMN by_state_read');
      await owner.query('ALTER TABLE schedules DROP COLUMN loaded_at');
      await owner.query('DROP TABLE step_calls');
      await owner.query('DELETE FROM fleetbook_schema WHERE version >= $1', [last]);
      await owner.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role}`);
      await owner.query(`GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO ${role}`);
    } finally {
      await owner.end();
    }
    const r = await fleetbook(['store', 'migrate'], { FLEETBOOK_STATE: user.href });
    expect([r.code, r.stdout, r.stderr]).to.deep.equal([
      2,
      '',
      `fleetbook: the database ${safe} (FLEETBOOK_STATE): schema migration ${last} failed and was rolled back, so it stays at version ${last - 1}; \`fleetbook store migrate\` (or a start) applies the rest once the cause is fixed: permission denied for schema public: ${HINT}\n`,
    ]);
  });

  it('exits 2 on a URL that does not parse, saying so without its password', async () => {
    // A port out of range; a `#` in a password not percent-encoded ends the URL's authority early.
    for (const url of ['postgres://u:pw-s3cret@127.0.0.1:99999/db', 'postgres://u:pw#s3cret@127.0.0.1/db'])
      for (const args of [
        ['store', 'migrate'],
        ['runs', 'list'],
        ['store', 'prune', '--older-than', '1d'],
      ]) {
        const r = await fleetbook(args, { FLEETBOOK_STATE: url });
        expect(r.code, `${args.join(' ')} on ${url}`).to.equal(2);
        expect(r.stderr).to.equal(
          'fleetbook: FLEETBOOK_STATE is not a URL fleetbook can read: postgres://user:password@host:port/database?parameters, with any of @ : / ? # % in the user or the password percent-encoded (%40 %3A %2F %3F %23 %25)\n',
        );
      }
  });

  it('exits 2 on a subcommand it does not know', async () => {
    const r = await fleetbook(['store', 'vacuum'], {});
    expect(r.code).to.equal(2);
    expect(r.stderr).to.match(/^error: unknown command 'vacuum'\n/);
    // The help that follows names the subcommands.
    for (const sub of ['migrate', 'prune', 'compact']) expect(r.stderr).to.include(`\n  ${sub} [options] `);
  });
});
