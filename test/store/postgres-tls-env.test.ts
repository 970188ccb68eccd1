/**
 * libpq's variables of TLS on a real server that offers it, with real certificates: the driver read no
 * PGSSLROOTCERT, PGSSLCERT or PGSSLKEY, so a user who set them as for psql connected without TLS, or without the
 * CA or the client certificate they name, silently. They now stand for the URL's sslrootcert, sslcert and sslkey
 * where it gives none. A revocation list (PGSSLCRL), which the driver cannot check, is refused, and so is a URL
 * whose `ssl=0` the driver would ignore for TLS.
 */
import { copyFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import pg from 'pg';
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/store.js';
import type { InboxEvent } from '../../src/store/store.js';
import { postgresTlsAdminUrl } from '../helpers/postgres.js';
import { makeCerts, type TestCerts } from '../helpers/tls-certs.js';
import { message } from './fixtures.js';

const VARIABLES = [
  'PGSSLMODE',
  'PGSSLROOTCERT',
  'PGSSLCERT',
  'PGSSLKEY',
  'PGSSLCRL',
  'PGSSLCRLDIR',
  'PGSSLNEGOTIATION',
] as const;
type Env = Partial<Record<(typeof VARIABLES)[number], string>>;

/** Runs `use` with the variables of TLS as `env` gives them (the others unset), and then as they were. */
async function withEnv<T>(env: Env, use: () => Promise<T>): Promise<T> {
  const saved = VARIABLES.map((name) => [name, process.env[name]] as const);
  for (const name of VARIABLES) {
    const value = env[name];
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  try {
    return await use();
  } finally {
    for (const [name, value] of saved)
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
  }
}

async function refusal(open: Promise<unknown>): Promise<string> {
  const err = await open.then(
    () => undefined,
    (e: unknown) => e as Error & { code?: string },
  );
  expect(err?.code, err?.message ?? 'opened').to.equal('FB_CONFIG');
  return err?.message ?? '';
}

describe('PostgreSQL: PGSSLROOTCERT, PGSSLCERT, PGSSLKEY (a real server with TLS)', function () {
  this.timeout(60_000);
  let certs: TestCerts;
  let admin: pg.Client;
  let port: string;
  let database: string;
  const opened: PostgresStore[] = [];

  before(async () => {
    certs = makeCerts();
    const adminUrl = await postgresTlsAdminUrl({
      cert: certs.serverCert,
      key: certs.serverKey,
      ca: certs.ca,
    });
    port = new URL(adminUrl).port;
    admin = new pg.Client(adminUrl);
    await admin.connect();
    database = 'fleetbook_tls';
    await admin.query(`CREATE DATABASE ${database}`);
  });
  afterEach(async () => {
    await Promise.allSettled(opened.splice(0).map((s) => s.close()));
  });
  after(async () => {
    await admin?.end();
    certs?.remove();
  });

  const url = (user: string, query = '') => `postgres://${user}@127.0.0.1:${port}/${database}${query}`;

  async function open(u: string): Promise<PostgresStore> {
    const store = await openPostgresStore(u, { origin: '--state' });
    opened.push(store);
    return store;
  }

  /** The TLS of the store's connections (`fleetbook`), as the server saw them. */
  async function tlsOf(user: string): Promise<{ ssl: boolean; client_dn: string | null }[]> {
    const { rows } = await admin.query<{ ssl: boolean; client_dn: string | null }>(
      `SELECT DISTINCT s.ssl, s.client_dn FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)
        WHERE a.datname = $1 AND a.usename = $2 AND a.application_name = 'fleetbook'`,
      [database, user],
    );
    return rows;
  }

  it('PGSSLROOTCERT alone: TLS, the server checked against its CA, as the URL’s sslrootcert does', async () => {
    await withEnv({ PGSSLROOTCERT: certs.ca }, () => open(url('postgres')));
    expect(await tlsOf('postgres')).to.deep.equal([{ ssl: true, client_dn: null }]);
    await Promise.all(opened.splice(0).map((s) => s.close()));
    // The file is the one read: a CA that signed nothing of the server's fails the connection.
    const said = await withEnv({ PGSSLROOTCERT: certs.otherCa }, () => refusal(open(url('postgres'))));
    expect(said).to.match(/^cannot open the database .* \(--state\): .*certificate/);
  });

  it('PGSSLCERT and PGSSLKEY: the client certificate, for a role that logs in with one', async () => {
    const files = { PGSSLCERT: certs.clientCert, PGSSLKEY: certs.clientKey };
    await withEnv({ ...files, PGSSLROOTCERT: certs.ca, PGSSLMODE: 'verify-full' }, () =>
      open(url('fleetbook_cert')),
    );
    expect(await tlsOf('fleetbook_cert')).to.deep.equal([{ ssl: true, client_dn: '/CN=fleetbook_cert' }]);
    await Promise.all(opened.splice(0).map((s) => s.close()));
    // With PGSSLMODE=no-verify, the certificate is sent, the server's not checked.
    await withEnv({ ...files, PGSSLMODE: 'no-verify' }, () => open(url('fleetbook_cert')));
    expect(await tlsOf('fleetbook_cert')).to.deep.equal([{ ssl: true, client_dn: '/CN=fleetbook_cert' }]);
  });

  it('the URL’s own files win, each over its variable; the others fill in', async () => {
    await withEnv({ PGSSLROOTCERT: certs.otherCa }, () =>
      open(url('postgres', `?sslrootcert=${encodeURIComponent(certs.ca)}`)),
    );
    await withEnv({ PGSSLROOTCERT: certs.ca, PGSSLKEY: certs.clientKey }, () =>
      open(url('fleetbook_cert', `?sslmode=verify-full&sslcert=${encodeURIComponent(certs.clientCert)}`)),
    );
    expect(await tlsOf('fleetbook_cert')).to.deep.equal([{ ssl: true, client_dn: '/CN=fleetbook_cert' }]);
    // libpq's verify-ca (uselibpqcompat=true) needs a CA: PGSSLROOTCERT gives it, as the URL's would.
    await withEnv({ PGSSLROOTCERT: certs.ca }, () =>
      open(url('postgres', '?uselibpqcompat=true&sslmode=verify-ca')),
    );
    expect(await tlsOf('postgres')).to.deep.equal([{ ssl: true, client_dn: null }]);
  });

  it('reads none of them when the connections use no TLS, as libpq’s disable', async () => {
    const missing = join(certs.dir, 'missing.crt');
    await withEnv({ PGSSLROOTCERT: missing, PGSSLCERT: missing, PGSSLMODE: 'disable' }, () =>
      open(url('postgres')),
    );
    await withEnv({ PGSSLROOTCERT: missing }, () => open(url('postgres', '?sslmode=disable')));
    await withEnv({ PGSSLROOTCERT: missing }, () => open(url('postgres', '?ssl=0')));
    expect(await tlsOf('postgres')).to.deep.equal([{ ssl: false, client_dn: null }]);
  });

  it('refuses a file that cannot be read, naming its variable, before any connection', async () => {
    const missing = join(certs.dir, 'missing.crt');
    const said = await withEnv({ PGSSLROOTCERT: certs.ca, PGSSLCERT: missing }, () =>
      refusal(open(url('postgres'))),
    );
    expect(said).to.equal(
      `PGSSLCERT names "${missing}", which cannot be read (ENOENT): the PostgreSQL driver reads it as the URL's sslcert; give a file it can read, or unset PGSSLCERT`,
    );
  });

  it('refuses a revocation list, which the driver cannot check, when the connections use TLS', async () => {
    const crl = certs.ca;
    expect(
      await withEnv({ PGSSLCRL: crl, PGSSLROOTCERT: certs.ca }, () => refusal(open(url('postgres')))),
    ).to.equal(
      'PGSSLCRL: the PostgreSQL driver cannot check a certificate revocation list: unset PGSSLCRL, or use no TLS (sslmode=disable)',
    );
    expect(
      await withEnv({}, () =>
        refusal(open(url('postgres', `?sslmode=verify-full&sslcrl=${encodeURIComponent(crl)}`))),
      ),
    ).to.equal(
      '--state: sslcrl: the PostgreSQL driver cannot check a certificate revocation list: leave sslcrl out of the URL, or use no TLS (sslmode=disable)',
    );
    expect(
      await withEnv({ PGSSLCRLDIR: certs.dir, PGSSLMODE: 'no-verify' }, () => refusal(open(url('postgres')))),
    ).to.match(/^PGSSLCRLDIR: the PostgreSQL driver cannot check/);
    // Without TLS, it is not read, as libpq's disable.
    await withEnv({ PGSSLCRL: crl }, () => open(url('postgres')));
  });

  it('refuses ssl=0 with sslrootcert, which the driver ignored for TLS', async () => {
    const query = `?ssl=0&sslrootcert=${encodeURIComponent(certs.ca)}`;
    expect(await withEnv({}, () => refusal(open(url('postgres', query))))).to.equal(
      '--state: ssl "0" (no TLS) contradicts sslrootcert: the driver ignores ssl when the URL gives sslmode, sslcert, sslkey or sslrootcert, so sslrootcert wins (TLS); for no TLS write sslmode=disable instead of ssl=0, or leave ssl out',
    );
  });

  it('keeps the feed of a replica alive while a file of its URL cannot be read, and resumes after', async () => {
    const copy = join(certs.dir, 'ca-copy.crt');
    copyFileSync(certs.ca, copy);
    const u = url('postgres', `?sslmode=verify-full&sslrootcert=${encodeURIComponent(copy)}`);
    const [a, b] = await withEnv({}, async () => [await open(u), await open(u)]);
    const heard: InboxEvent[] = [];
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      a.watchInbox('a', (evs) => heard.push(...evs));
      const feeds = async () =>
        (
          await admin.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = 'fleetbook-feed'`,
            [database],
          )
        ).rows[0]?.n ?? 0;
      await until(async () => (await feeds()) === 1);
      rmSync(copy);
      await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'fleetbook-feed'`,
        [database],
      );
      // Two reconnections (one a second) without the file.
      await new Promise((r) => setTimeout(r, 2_500));
      copyFileSync(certs.ca, copy);
      await until(async () => (await feeds()) === 1);
      await b.appendInbox('b', [message('r1')]);
      await until(async () => heard.length === 1);
      expect(heard[0]?.requestId).to.equal('r1');
      expect(unhandled).to.deep.equal([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

async function until(done: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`not so within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('PGSSLNEGOTIATION=direct (a TLS listener standing for a PostgreSQL 17 server)', () => {
  let certs: TestCerts;
  let server: TlsServer;
  const alpn: (string | false | null)[] = [];
  before(async () => {
    certs = makeCerts();
    const { readFileSync } = await import('node:fs');
    server = createTlsServer(
      {
        cert: readFileSync(certs.serverCert),
        key: readFileSync(certs.serverKey),
        ALPNProtocols: ['postgresql'],
      },
      (socket) => {
        alpn.push(socket.alpnProtocol);
        socket.destroy();
      },
    );
    server.on('tlsClientError', () => undefined);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  after(() => {
    server.close();
    certs.remove();
  });

  it('is done by the driver: the TLS handshake first, with the ALPN of PostgreSQL', async () => {
    const port = (server.address() as AddressInfo).port;
    const said = await withEnv({ PGSSLNEGOTIATION: 'direct', PGSSLMODE: 'no-verify' }, () =>
      refusal(openPostgresStore(`postgres://postgres@127.0.0.1:${port}/x`)),
    );
    expect(said).to.match(/^cannot open the database /);
    expect(alpn[0]).to.equal('postgresql');
  });
});
