/**
 * libpq's variables of TLS on a real server that offers it, with real certificates: the driver read no
 * PGSSLROOTCERT, PGSSLCERT or PGSSLKEY, so a user who set them as for psql connected without TLS, or without the
 * CA or the client certificate they name, silently. They now stand for the URL's sslrootcert, sslcert and sslkey
 * where it gives none. A revocation list (PGSSLCRL), which the driver cannot check, is refused, and so is a URL
 * whose `ssl=0` the driver would ignore for TLS. Each accepted `sslmode`, `ssl` and PGSSLMODE does on it what
 * its message says; `sslnegotiation` and PGSSLNEGOTIATION are checked as they are.
 */
import { copyFileSync, readFileSync, rmSync } from 'node:fs';
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

  /** The kinds of the store's connections (user `postgres`), and whether each uses TLS. */
  async function connections(): Promise<{ application_name: string; ssl: boolean }[]> {
    const { rows } = await admin.query<{ application_name: string; ssl: boolean }>(
      `SELECT DISTINCT a.application_name, s.ssl FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)
        WHERE a.datname = $1 AND a.usename = 'postgres' AND a.application_name LIKE 'fleetbook%'
        ORDER BY 1, 2`,
      [database],
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

  /**
   * What the connections of a store opened with `query` and `env` do on the server, whose certificate a CA
   * Node does not trust signed: no TLS, TLS, or no connection, the certificate refused (it was checked).
   */
  async function does(query: string, env: Env): Promise<'no TLS' | 'TLS' | 'certificate refused'> {
    const store = await withEnv(env, () => openPostgresStore(url('postgres', query))).catch((e: Error) => e);
    if (store instanceof Error) {
      expect(store.message).to.match(/^cannot open the database .*certificate/);
      return 'certificate refused';
    }
    try {
      const seen = await tlsOf('postgres');
      expect(seen, `${query} ${JSON.stringify(env)}`).to.have.length(1);
      return seen[0]?.ssl ? 'TLS' : 'no TLS';
    } finally {
      await store.close();
    }
  }

  it('each sslmode, ssl and PGSSLMODE accepted does what its message says', async () => {
    const ca = `sslrootcert=${encodeURIComponent(certs.ca)}`;
    const otherCa = `sslrootcert=${encodeURIComponent(certs.otherCa)}`;
    const cases: [query: string, env: Env, what: Awaited<ReturnType<typeof does>>][] = [
      ['', {}, 'no TLS'],
      ['?sslmode=disable', {}, 'no TLS'],
      ['?sslmode=verify-full', {}, 'certificate refused'],
      [`?sslmode=verify-full&${ca}`, {}, 'TLS'],
      // The driver's require and verify-ca check as verify-full does.
      ['?sslmode=require', {}, 'certificate refused'],
      ['?sslmode=verify-ca', {}, 'certificate refused'],
      [`?sslmode=verify-ca&${ca}`, {}, 'TLS'],
      ['?sslmode=no-verify', {}, 'TLS'],
      // libpq's meanings with uselibpqcompat=true: require checks nothing, unless given a CA.
      ['?uselibpqcompat=true&sslmode=require', {}, 'TLS'],
      [`?uselibpqcompat=true&sslmode=require&${otherCa}`, {}, 'certificate refused'],
      [`?uselibpqcompat=true&sslmode=verify-ca&${ca}`, {}, 'TLS'],
      ['?uselibpqcompat=true&sslmode=verify-full', {}, 'certificate refused'],
      ['?uselibpqcompat=true&sslmode=disable', {}, 'no TLS'],
      // ssl: checked against Node's CAs, whatever the URL names.
      ['?ssl=true', {}, 'certificate refused'],
      ['?ssl=1', {}, 'certificate refused'],
      ['?ssl=0', {}, 'no TLS'],
      ['?ssl=no-verify', {}, 'TLS'],
      ['?uselibpqcompat=true&ssl=no-verify', {}, 'TLS'],
      // PGSSLMODE, read when the URL says nothing of TLS: each of libpq's that checks, checked as verify-full.
      ['', { PGSSLMODE: 'disable' }, 'no TLS'],
      ['', { PGSSLMODE: '' }, 'no TLS'],
      ['', { PGSSLMODE: 'require' }, 'certificate refused'],
      ['', { PGSSLMODE: 'verify-ca' }, 'certificate refused'],
      ['', { PGSSLMODE: 'verify-full' }, 'certificate refused'],
      ['', { PGSSLMODE: 'no-verify' }, 'TLS'],
      ['?uselibpqcompat=true', { PGSSLMODE: 'no-verify' }, 'TLS'],
      // Not read when the URL says how to use TLS.
      ['?sslmode=disable', { PGSSLMODE: 'no-verify' }, 'no TLS'],
      ['?ssl=no-verify', { PGSSLMODE: 'disable' }, 'TLS'],
      ['?sslmode=no-verify', { PGSSLMODE: 'requir' }, 'TLS'],
    ];
    const got = [];
    for (const [query, env] of cases) got.push(await does(query, env));
    expect(got.map((what, i) => [cases[i]?.[0], cases[i]?.[1], what])).to.deep.equal(cases);
  });

  it('opens every connection of the store as it opened: the URL and the variables checked and read once', async () => {
    const store = await withEnv({ PGSSLROOTCERT: certs.ca }, () => open(url('postgres')));
    // Later, a PGSSLMODE that would be refused, and no PGSSLROOTCERT: read by none of the store's pools.
    await withEnv({ PGSSLMODE: 'requir' }, async () => {
      store.watchInbox('a', () => undefined);
      await store.rates.exchange('m', { owner: 'a', seq: 1, view: '', areas: {} }, 10_000);
      await until(async () => (await connections()).length === 3);
    });
    expect(await connections()).to.deep.equal([
      { application_name: 'fleetbook', ssl: true },
      { application_name: 'fleetbook-feed', ssl: true },
      { application_name: 'fleetbook-rates', ssl: true },
    ]);
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
      // The feed's attempts to connect, counted from its connection's end.
      const [feed] = (a as unknown as { feeds: Set<{ connect: () => Promise<void> }> }).feeds;
      const connect = feed!.connect.bind(feed);
      let tries = 0;
      feed!.connect = () => {
        tries++;
        return connect();
      };
      rmSync(copy);
      await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'fleetbook-feed'`,
        [database],
      );
      // Two reconnections (one a second) without the file, neither connected.
      await until(async () => tries >= 2);
      expect(await feeds(), 'a feed connected without the file').to.equal(0);
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

describe('sslnegotiation, PGSSLNEGOTIATION (a TLS listener standing for a PostgreSQL 17 server)', () => {
  let certs: TestCerts;
  let server: TlsServer;
  let port = 0;
  const alpn: (string | false | null)[] = [];
  before(async () => {
    certs = makeCerts();
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
    port = (server.address() as AddressInfo).port;
  });
  after(() => {
    server.close();
    certs.remove();
  });
  const url = (query = '') => `postgres://postgres@127.0.0.1:${port}/x${query}`;

  it('refuses direct when the connections use no TLS, naming the setting, before any connection', async () => {
    const cases: [query: string, env: Env, said: string][] = [
      [
        '',
        { PGSSLNEGOTIATION: 'direct' },
        'PGSSLNEGOTIATION "direct" (the TLS handshake first) needs TLS, and the connections of --state use none: ask for TLS (sslmode=verify-full in the URL, or PGSSLMODE), or unset PGSSLNEGOTIATION',
      ],
      [
        '',
        { PGSSLNEGOTIATION: 'direct', PGSSLMODE: 'disable' },
        'PGSSLNEGOTIATION "direct" (the TLS handshake first) needs TLS, and the connections of --state use none: ask for TLS (sslmode=verify-full in the URL, or PGSSLMODE), or unset PGSSLNEGOTIATION',
      ],
      [
        '?sslnegotiation=direct&sslmode=disable',
        { PGSSLMODE: 'no-verify' },
        '--state: sslnegotiation "direct" (the TLS handshake first) needs TLS, and the connections of --state use none: ask for TLS (sslmode=verify-full in the URL, or PGSSLMODE), or leave sslnegotiation out of the URL',
      ],
    ];
    for (const [query, env, said] of cases)
      expect(
        await withEnv(env, () => refusal(openPostgresStore(url(query), { origin: '--state' }))),
        query,
      ).to.equal(said);
    expect(alpn, 'connections').to.deep.equal([]);
  });

  it('refuses a value the driver does not know, naming the setting, before any connection', async () => {
    const accepted =
      "give one of: postgres (TLS asked of the server in PostgreSQL's protocol first, the default); direct (the TLS handshake first, PostgreSQL 17 and later, which needs TLS on); or leave it out";
    expect(
      await withEnv({ PGSSLNEGOTIATION: 'Direct', PGSSLMODE: 'no-verify' }, () =>
        refusal(openPostgresStore(url())),
      ),
    ).to.equal(`PGSSLNEGOTIATION "Direct" is not one the PostgreSQL driver knows: ${accepted}`);
    expect(
      await withEnv({ PGSSLNEGOTIATION: 'direct' }, () =>
        refusal(openPostgresStore(url('?sslmode=no-verify&sslnegotiation=drect'))),
      ),
    ).to.equal(`FLEETBOOK_STATE: sslnegotiation "drect" is not one the PostgreSQL driver knows: ${accepted}`);
    expect(alpn, 'connections').to.deep.equal([]);
  });

  it('lets direct with TLS through: the TLS handshake first, with the ALPN of PostgreSQL', async () => {
    for (const [query, env] of [
      ['', { PGSSLNEGOTIATION: 'direct', PGSSLMODE: 'no-verify' }],
      ['?sslnegotiation=direct&sslmode=no-verify', {}],
      // From PGSSLROOTCERT alone: TLS, as verify-full.
      ['', { PGSSLNEGOTIATION: 'direct', PGSSLROOTCERT: '' }],
    ] as [string, Env][]) {
      alpn.length = 0;
      if (env.PGSSLROOTCERT === '') env.PGSSLROOTCERT = certs.ca;
      expect(await withEnv(env, () => refusal(openPostgresStore(url(query))))).to.match(
        /^cannot open the database /,
      );
      expect(alpn, query).to.deep.equal(['postgresql']);
    }
  });
});
