/**
 * The PostgreSQL test harness: a real server, a database of its own for each caller, a given server used when
 * FLEETBOOK_TEST_POSTGRES_URL names one, and nothing left behind when the process ends, however it ends.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { POSTGRES_URL_ENV, postgresAdminUrl, postgresBinaries, postgresUrl } from './postgres.js';

const given = process.env[POSTGRES_URL_ENV];
const CHILD = new URL('./postgres-child.ts', import.meta.url).pathname;

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

async function one<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T> {
  return (await query<T>(url, sql))[0] as T;
}

/** The server behind `url`, told apart by its port and the time it started. */
async function serverOf(url: string): Promise<string> {
  const r = await one<{ id: string }>(
    url,
    "select inet_server_port() || '@' || pg_postmaster_start_time() as id",
  );
  return r.id;
}

describe('test harness: PostgreSQL', function () {
  this.timeout(60_000);

  it('gives each call a new, empty database of its own', async () => {
    const a = await postgresUrl();
    const b = await postgresUrl();
    expect(a).to.not.equal(b);
    const tables = "select count(*)::int as n from pg_class where relnamespace = 'public'::regnamespace";
    expect(await one(a, tables)).to.deep.equal({ n: 0 });
    expect(await one(b, tables)).to.deep.equal({ n: 0 });
    const names = [
      await one(a, 'select current_database() as d'),
      await one(b, 'select current_database() as d'),
    ];
    expect(names[0]).to.not.deep.equal(names[1]);

    await query(a, "create table t (x text); insert into t values ('only in a')");
    expect(await query(a, 'select x from t')).to.deep.equal([{ x: 'only in a' }]);
    expect(await one(b, "select to_regclass('public.t') as t")).to.deep.equal({ t: null });
    expect(await serverOf(a)).to.equal(await serverOf(b));
  });

  it('is a real PostgreSQL server: 15 when the harness starts it', async () => {
    const { version } = await one<{ version: string }>(await postgresUrl(), 'select version()');
    const major = Number(/^PostgreSQL (\d+)\.\d+ /.exec(version)?.[1]);
    if (given) expect(major, version).to.be.at.least(15);
    else expect(major, version).to.equal(15);
  });

  it(`creates the database on the server ${POSTGRES_URL_ENV} names instead of starting one`, async () => {
    const admin = await postgresAdminUrl();
    const before = process.env[POSTGRES_URL_ENV];
    process.env[POSTGRES_URL_ENV] = admin;
    let url: string;
    try {
      // fsync on would need a server of its own, were the harness to start one.
      url = await postgresUrl({ fsync: true });
    } finally {
      if (before === undefined) delete process.env[POSTGRES_URL_ENV];
      else process.env[POSTGRES_URL_ENV] = before;
    }
    expect(await serverOf(url)).to.equal(await serverOf(admin));
    expect(await one(url, 'show fsync')).to.deep.equal(await one(admin, 'show fsync'));
    const { d } = await one<{ d: string }>(url, 'select current_database() as d');
    expect(d).to.match(/^fleetbook_test_[0-9a-f]+$/);
    expect(await query(admin, `select 1 as x from pg_database where datname = '${d}'`)).to.deep.equal([
      { x: 1 },
    ]);
  });

  describe('a server of its own', function () {
    before(function () {
      if (given) this.skip();
    });

    it('flushes commits only when asked: fsync off by default, on for { fsync: true }', async () => {
      const off = await postgresUrl();
      const on = await postgresUrl({ fsync: true });
      expect(await one(off, 'show fsync')).to.deep.equal({ fsync: 'off' });
      expect(await one(on, 'show fsync')).to.deep.equal({ fsync: 'on' });
      expect(await one(on, 'show max_connections')).to.deep.equal({ max_connections: '200' });
      expect(await serverOf(on)).to.not.equal(await serverOf(off));
    });

    it('names what it looked for when it finds no server binaries', () => {
      expect(() => postgresBinaries('/nowhere/bin:/nor/here', ['/no/postgresql'])).to.throw(
        /no PostgreSQL server binaries \(initdb, postgres\) in \/nowhere\/bin, \/nor\/here, \/no\/postgresql\/\*\/bin: install postgresql-15 or set FLEETBOOK_TEST_POSTGRES_URL/,
      );
    });

    const roots: string[] = [];
    after(() => roots.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

    /** Runs the child fixture with `how` (see it), its temp folders under a folder of its own. */
    function child(how: string, tmp?: string) {
      tmp ??= mkdtempSync(join(tmpdir(), 'fleetbook-pgtest-'));
      // Open to the `postgres` user the server runs as under root.
      chmodSync(tmp, 0o755);
      roots.push(tmp);
      const proc = spawn(process.execPath, ['--import', 'tsx', CHILD, how], {
        env: { ...process.env, [POSTGRES_URL_ENV]: undefined, TMPDIR: tmp },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      proc.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
      proc.stderr.setEncoding('utf8').on('data', (s: string) => (err += s));
      const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
        proc.once('exit', (code, signal) => resolve({ code, signal })),
      );
      /** The server's data folder and postmaster's pid, once the child has printed them. */
      const started = (async () => {
        while (!out.includes('\n')) {
          if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`child exited:\n${err}`);
          await new Promise((r) => setTimeout(r, 20));
        }
        return JSON.parse(out.split('\n')[0] as string) as { data: string; pid: number };
      })();
      return { proc, tmp, exited, started, stderr: () => err };
    }

    /** Whether process `pid` is gone within 5 s. */
    async function gone(pid: number): Promise<boolean> {
      for (let i = 0; i < 100; i++) {
        try {
          process.kill(pid, 0);
        } catch {
          return true;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      return false;
    }

    /** A child started, ended as `how` says, and what was left of its server. */
    async function lifecycle(how: 'end' | 'exit' | 'throw' | 'SIGTERM' | 'SIGINT') {
      const c = child(how.startsWith('SIG') ? 'wait' : how);
      const { data, pid } = await c.started;
      const ran = existsSync(data);
      if (how.startsWith('SIG')) c.proc.kill(how as NodeJS.Signals);
      const exit = await c.exited;
      return {
        ran,
        exit,
        postmasterGone: await gone(pid),
        folderGone: !existsSync(data),
        stderr: c.stderr(),
      };
    }

    it('starts under a temp folder too long for a Unix socket (a TMPDIR of its own)', async () => {
      // The server's socket path holds at most 107 bytes: with one in the server's folder, no server started.
      const root = mkdtempSync(join(tmpdir(), 'fleetbook-pgtest-'));
      chmodSync(root, 0o755);
      roots.push(root);
      const deep = join(root, 'a-temp-folder-whose-path-is-longer-than-a-unix-socket-may-be'.repeat(2));
      mkdirSync(deep);
      const c = child('end', deep);
      const { data } = await c.started.catch((e: Error) => ({ data: e.message }));
      expect(data, c.stderr()).to.satisfy((d: string) => d.startsWith(deep));
      expect(await c.exited).to.deep.equal({ code: 0, signal: null });
    });

    describe('when the process ends', () => {
      const ends = [
        ['end', { code: 0, signal: null }],
        ['exit', { code: 0, signal: null }],
        ['throw', { code: 1, signal: null }],
        ['SIGTERM', { code: null, signal: 'SIGTERM' }],
        ['SIGINT', { code: null, signal: 'SIGINT' }],
      ] as const;
      // The children at once: each spends most of its time starting node and its server.
      let results: Promise<Awaited<ReturnType<typeof lifecycle>>>[];
      before(() => {
        results = ends.map(([how]) => lifecycle(how));
        results.forEach((r) => r.catch(() => {}));
      });

      ends.forEach(([how, expected], i) =>
        it(`stops the server and deletes its folder (${how})`, async () => {
          const r = await results[i];
          expect(r?.ran).to.equal(true);
          expect(r?.exit, r?.stderr).to.deep.equal(expected);
          expect(r?.postmasterGone, 'postmaster').to.equal(true);
          expect(r?.folderGone, 'folder').to.equal(true);
        }),
      );
    });

    it('after a SIGKILL, the server dies with the process and the next start deletes its folder', async () => {
      const killed = child('wait');
      const { data, pid } = await killed.started;
      killed.proc.kill('SIGKILL');
      await killed.exited;
      expect(await gone(pid), `postmaster ${pid}`).to.equal(true);
      expect(existsSync(data)).to.equal(true);
      const next = child('exit', killed.tmp);
      expect(await next.exited, next.stderr()).to.deep.equal({ code: 0, signal: null });
      expect(existsSync(data), data).to.equal(false);
    });
  });
});
