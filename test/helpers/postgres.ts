/**
 * A real PostgreSQL server for the tests and the bench, never a mock. Each `postgresUrl()` is a new, empty
 * database, so that no suite sees another's rows. The server is the one FLEETBOOK_TEST_POSTGRES_URL names when
 * it is set; otherwise the first call starts a throwaway server of this process's own (`initdb` into a temp
 * folder, `postgres` on a free port of 127.0.0.1), stopped and deleted when the process ends, however it ends.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  closeSync,
  copyFileSync,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { freePort } from './ports.js';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

/** The variable that names a server to use instead of starting one, e.g. `postgres://u:pw@host:5432/postgres`. */
export const POSTGRES_URL_ENV = 'FLEETBOOK_TEST_POSTGRES_URL';

export interface PostgresOptions {
  /**
   * Whether the server flushes each commit to disk. Off for tests: no test survives a power cut, and a flush per
   * commit on a shared disk makes the store suites slow and their timings noisy. On for the bench, which
   * measures durable commits. Each setting is a server of its own; a server given by FLEETBOOK_TEST_POSTGRES_URL
   * keeps its own setting.
   * @default false
   */
  fsync?: boolean;
}

/** Several daemons with their pools on one server, and the tests' own connections beside them. */
const MAX_CONNECTIONS = 200;
/** Where Debian's packages put the server binaries of each major version, e.g. /usr/lib/postgresql/15/bin. */
const PACKAGE_ROOTS = ['/usr/lib/postgresql'];
/** The temp folders of the servers, `fleetbook-pg-<pid of the process that started it>-XXXXXX`. */
const PREFIX = 'fleetbook-pg-';
const READY = 'database system is ready to accept connections';

interface Server {
  dir: string;
  proc: ChildProcess;
  adminUrl: string;
}

/** The servers of this process, by their settings (fsync; TLS). */
const servers = new Map<string, Promise<Server>>();
/** The servers started, even half-way, for the cleanup at exit. */
const started = new Set<{ dir: string; proc?: ChildProcess }>();
/** The databases made on a given server, dropped at exit. */
const givenDatabases: { adminUrl: string; name: string }[] = [];

/** The URL of a new, empty database, which only the caller uses. */
export async function postgresUrl(options: PostgresOptions = {}): Promise<string> {
  const given = process.env[POSTGRES_URL_ENV];
  const adminUrl = given || (await postgresAdminUrl(options));
  const name = `fleetbook_test_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client(adminUrl);
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  if (given) {
    givenDatabases.push({ adminUrl, name });
    registerCleanup();
  }
  return withDatabase(adminUrl, name);
}

/** A superuser's URL of the server (its `postgres` database), started on the first call. */
export async function postgresAdminUrl(options: PostgresOptions = {}): Promise<string> {
  const given = process.env[POSTGRES_URL_ENV];
  if (given) return given;
  const fsync = options.fsync ?? false;
  let server = servers.get(String(fsync));
  if (!server) {
    server = start(fsync);
    servers.set(String(fsync), server);
  }
  return (await server).adminUrl;
}

/** The files of a server's TLS: its certificate and key, and the CA it checks the clients' certificates with. */
export interface ServerTls {
  cert: string;
  key: string;
  ca: string;
}

/**
 * A superuser's URL of a server of this process's own that offers TLS with `tls`'s files (whatever
 * FLEETBOOK_TEST_POSTGRES_URL says: the server's TLS is the test's), started on the first call. Its role
 * `fleetbook_cert` logs in only over TLS, with a client certificate of that name (`cert`); any other role
 * without a password, with TLS or without.
 */
export async function postgresTlsAdminUrl(tls: ServerTls): Promise<string> {
  const key = `tls ${tls.cert}`;
  let server = servers.get(key);
  if (!server) {
    server = start(false, tls).then(async (started) => {
      const client = new pg.Client(started.adminUrl);
      await client.connect();
      try {
        await client.query('CREATE ROLE fleetbook_cert LOGIN SUPERUSER');
      } finally {
        await client.end();
      }
      return started;
    });
    servers.set(key, server);
  }
  return (await server).adminUrl;
}

/** What the TLS server's pg_hba.conf allows: see postgresTlsAdminUrl. */
const TLS_HBA = `local all all trust
hostssl all fleetbook_cert 127.0.0.1/32 cert
host all fleetbook_cert 127.0.0.1/32 reject
host all all 127.0.0.1/32 trust
`;

/**
 * Stops the servers this process started and deletes their folders, and drops the databases made on a given
 * server. Close your connections first: the server ends them. A later `postgresUrl()` starts a new server.
 */
export async function stopPostgres(): Promise<void> {
  await Promise.allSettled(servers.values());
  servers.clear();
  cleanUp();
}

/**
 * The folder that holds `initdb` and `postgres`: the first on `searchPath` that has both, else the newest
 * major version under `roots`.
 */
export function postgresBinaries(searchPath = process.env.PATH ?? '', roots = PACKAGE_ROOTS): string {
  const dirs = searchPath.split(delimiter).filter(Boolean);
  const versions = roots.flatMap((root) =>
    (existsSync(root) ? readdirSync(root) : [])
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a))
      .map((v) => join(root, v, 'bin')),
  );
  const found = [...dirs, ...versions].find(
    (d) => existsSync(join(d, 'initdb')) && existsSync(join(d, 'postgres')),
  );
  if (found) return found;
  const tried = [...dirs, ...roots.map((r) => join(r, '*', 'bin'))].join(', ');
  throw new Error(
    `no PostgreSQL server binaries (initdb, postgres) in ${tried}: install postgresql-15 or set ${POSTGRES_URL_ENV}`,
  );
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.href;
}

/**
 * How to run a server binary. `initdb` and `postgres` refuse to run as root, so root runs them as the
 * `postgres` user. setpriv, where there is one, also makes the server die with this process, even by SIGKILL.
 */
interface Runner {
  prefix: string[];
  owner?: { uid: number; gid: number };
}

function runner(): Runner {
  const setpriv = (process.env.PATH ?? '')
    .split(delimiter)
    .map((d) => join(d, 'setpriv'))
    .find((f) => existsSync(f));
  if (process.getuid?.() !== 0) return { prefix: setpriv ? [setpriv, '--pdeathsig=QUIT', '--'] : [] };
  const id = (flag: string) => spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' });
  const [uid, gid] = [id('-u'), id('-g')];
  if (!setpriv || uid.status !== 0 || gid.status !== 0)
    throw new Error(
      `PostgreSQL refuses to run as root, and ${setpriv ? 'there is no `postgres` user' : 'setpriv (util-linux) is missing'} to run it as another user: run the tests as another user, or set ${POSTGRES_URL_ENV}`,
    );
  const user = ['--reuid=postgres', '--regid=postgres', '--clear-groups'];
  return {
    prefix: [setpriv, ...user, '--pdeathsig=QUIT', '--'],
    owner: { uid: Number(uid.stdout), gid: Number(gid.stdout) },
  };
}

async function start(fsync: boolean, tls?: ServerTls): Promise<Server> {
  const bin = postgresBinaries();
  const run = runner();
  sweep();
  registerCleanup();
  const dir = mkdtempSync(join(tmpdir(), `${PREFIX}${process.pid}-`));
  const entry: { dir: string; proc?: ChildProcess } = { dir };
  started.add(entry);
  if (run.owner) chownSync(dir, run.owner.uid, run.owner.gid);
  const data = join(dir, 'data');
  const initdb = [
    join(bin, 'initdb'),
    '-D',
    data,
    '-A',
    'trust',
    '-U',
    'postgres',
    '-E',
    'UTF8',
    '--locale=C',
  ];
  // No fsync of the new files: the folder lives as long as this process.
  await exec(run, [...initdb, '--no-sync', '--no-instructions'], dir);
  const tlsSettings: string[] = [];
  if (tls) {
    // The server reads its key only when it is the server user's own, and no one else's to read.
    for (const [name, from] of Object.entries(tls)) {
      const file = join(dir, `server-${name}.pem`);
      copyFileSync(from, file);
      chmodSync(file, 0o600);
      if (run.owner) chownSync(file, run.owner.uid, run.owner.gid);
      tlsSettings.push('-c', `ssl_${name}_file=${file}`);
    }
    tlsSettings.push('-c', 'ssl=on');
    writeFileSync(join(data, 'pg_hba.conf'), TLS_HBA);
  }
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const log = join(dir, `server-${port}.log`);
    const fd = openSync(log, 'a');
    const [cmd, ...args] = [
      ...run.prefix,
      join(bin, 'postgres'),
      // No Unix socket (`-k ''`): every client comes over TCP, and a socket's path, at most 107 bytes, made the
      // server fail to start under a long temp folder (a TMPDIR of its own, as a CI runner may set).
      ...['-D', data, '-k', '', '-h', '127.0.0.1', '-p', String(port)],
      ...['-c', `fsync=${fsync ? 'on' : 'off'}`, '-c', `max_connections=${MAX_CONNECTIONS}`],
      ...tlsSettings,
    ];
    const proc = spawn(cmd as string, args, { cwd: dir, stdio: ['ignore', 'ignore', fd] });
    closeSync(fd);
    proc.unref();
    entry.proc = proc;
    let spawnError = '';
    proc.once('error', (e) => (spawnError = e.message));
    const failure = await ready(proc, log, () => spawnError);
    if (!failure) return { dir, proc, adminUrl: `postgres://postgres@127.0.0.1:${port}/postgres` };
    // Another process took the port between freePort() and the server's bind: try another.
    if (failure.includes('Address already in use') && attempt < 3) continue;
    throw new Error(`PostgreSQL (${join(bin, 'postgres')}) did not start in ${dir}:\n${failure}`);
  }
}

/** Waits for the server's log to say it accepts connections; what went wrong if it does not. */
async function ready(proc: ChildProcess, log: string, spawnError: () => string): Promise<string | undefined> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const text = readFileSync(log, 'utf8');
    if (text.includes(READY)) return undefined;
    if (spawnError()) return spawnError();
    if (proc.exitCode !== null || proc.signalCode !== null) return text || 'it exited';
    if (Date.now() > deadline) {
      proc.kill('SIGQUIT');
      return `${text}\n(not ready after 30 s)`;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function exec(run: Runner, command: string[], cwd: string): Promise<void> {
  const [cmd, ...args] = [...run.prefix, ...command];
  const proc = spawn(cmd as string, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
  proc.stderr.setEncoding('utf8').on('data', (s: string) => (out += s));
  const code = await new Promise<number | null>((resolve, reject) => {
    proc.once('error', reject);
    proc.once('close', resolve);
  });
  if (code !== 0) throw new Error(`${command.join(' ')} failed (${String(code)}):\n${out}`);
}

let registered = false;

function registerCleanup(): void {
  if (registered) return;
  registered = true;
  process.once('exit', cleanUp);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
    process.once(signal, () => {
      cleanUp();
      // Then end as the signal would have, unless someone else handles it.
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    });
}

/**
 * Synchronous, for the exit event: an immediate shutdown of each server (SIGQUIT), a wait until it is gone
 * (the postmaster deletes its pid file last, after its children have exited), and its folder deleted.
 */
function cleanUp(): void {
  if (givenDatabases.length > 0) dropGivenDatabases(givenDatabases.splice(0));
  for (const entry of started) {
    const { dir, proc } = entry;
    if (proc && proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGQUIT');
      const pidFile = join(dir, 'data', 'postmaster.pid');
      const sleeper = new Int32Array(new SharedArrayBuffer(4));
      for (let i = 0; i < 500 && existsSync(pidFile); i++) Atomics.wait(sleeper, 0, 0, 10);
    }
    rmSync(dir, { recursive: true, force: true });
    started.delete(entry);
  }
}

/** A child process, since the exit event cannot wait for a query. */
function dropGivenDatabases(databases: { adminUrl: string; name: string }[]): void {
  const script = `
    const pg = require('pg');
    (async () => {
      for (const { adminUrl, name } of JSON.parse(process.argv[1])) {
        const client = new pg.Client(adminUrl);
        await client.connect();
        await client.query('DROP DATABASE IF EXISTS ' + name + ' WITH (FORCE)');
        await client.end();
      }
    })().catch((e) => (console.error('dropping the test databases:', e.message), process.exit(1)));`;
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const r = spawnSync(process.execPath, ['-e', script, JSON.stringify(databases)], {
    cwd: root,
    stdio: 'inherit',
  });
  if (r.error) console.error('dropping the test databases:', r.error.message);
}

/** Deletes the folders of servers whose process is gone (killed by SIGKILL, which no exit handler sees). */
function sweep(): void {
  for (const name of readdirSync(tmpdir())) {
    const m = new RegExp(`^${PREFIX}(\\d+)-`).exec(name);
    if (!m || alive(Number(m[1]))) continue;
    const pidFile = join(tmpdir(), name, 'data', 'postmaster.pid');
    // A server with no setpriv to end it may outlive its process: leave it be.
    if (existsSync(pidFile) && alive(Number(readFileSync(pidFile, 'utf8').split('\n')[0]))) continue;
    rmSync(join(tmpdir(), name), { recursive: true, force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A new database as replicas of an earlier version left it: `migrations` (the store's MIGRATIONS) applied up to
 * `version` and recorded, as the store records them. Returns it with a client connected to it, which the caller
 * ends: it plays a replica of that version, writing as it wrote.
 */
export async function postgresAtVersion(
  migrations: readonly string[],
  version: number,
): Promise<{ url: string; db: pg.Client }> {
  const url = await postgresUrl();
  const db = new pg.Client(url);
  await db.connect();
  await db.query(
    'CREATE TABLE fleetbook_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
  );
  for (let v = 1; v <= version; v++) {
    await db.query(migrations[v - 1] as string);
    await db.query('INSERT INTO fleetbook_schema (version) VALUES ($1)', [v]);
  }
  return { url, db };
}
