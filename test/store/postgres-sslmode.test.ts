/**
 * The `sslmode` of a PostgreSQL URL is checked with the rest of the URL, before any connection: the driver
 * (pg-connection-string) took one it does not know (`requir`, `REQUIRE`, `allow`) as TLS with the server's
 * certificate checked, silently, and `prefer` as the same, where libpq falls back to a connection without TLS.
 * So are its `ssl`, of which the driver took one it does not know (`ture`, `false`) as TLS on, and PGSSLMODE
 * when the driver reads it, which took one it does not know (`requir`, `allow`) as no TLS.
 * A loopback listener stands for the server: nothing may reach it.
 */
import { createRequire } from 'node:module';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { expect } from 'chai';
import type pg from 'pg';
import { migratePostgres } from '../../src/store/postgres/migrations.js';
import { clientConfig } from '../../src/store/postgres/pool.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';

const ACCEPTED =
  'give one of: disable (no TLS); verify-full (TLS, the server certificate checked against the trusted CAs, or those of sslrootcert, and its name against the host); require, verify-ca (TLS, checked as verify-full does: the driver takes them as verify-full, and warns so once); no-verify (TLS, the certificate not checked)';
/** With `uselibpqcompat=true`, the driver gives require and verify-ca libpq's meaning, and knows no no-verify. */
const ACCEPTED_LIBPQ =
  'give one of: disable (no TLS); verify-full (TLS, the server certificate checked against the trusted CAs, or those of sslrootcert, and its name against the host); require (TLS, the certificate not checked, unless sslrootcert is given: then as verify-ca); verify-ca (TLS, the certificate checked against the CAs of sslrootcert, which it needs, but not its name)';

async function refusal(open: Promise<unknown>): Promise<string> {
  const err = await open.then(
    () => undefined,
    (e: unknown) => e as Error & { code?: string },
  );
  expect(err?.code, err?.message).to.equal('FB_CONFIG');
  return err?.message ?? '';
}

/**
 * A loopback listener standing for the server, for the describe block that calls it: the URL of a database on
 * it, and how many connections reached it (none may).
 */
function loopbackServer(): { url: (query: string) => string; reached: () => number } {
  let server: Server;
  let port = 0;
  let reached = 0;
  before(async () => {
    server = createServer((socket) => {
      reached++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => server.close());
  return {
    url: (query) => `postgres://fleetbook:s3cret@127.0.0.1:${port}/fleetbook${query}`,
    reached: () => reached,
  };
}

describe('PostgreSQL URL: sslmode', () => {
  const { url, reached } = loopbackServer();

  it('refuses one the driver does not know, naming it and saying what each accepted one does', async () => {
    const cases: [query: string, value: string][] = [
      ['?sslmode=requir', '"requir"'],
      ['?sslmode=REQUIRE', '"REQUIRE"'],
      ['?sslmode=', '"" (empty)'],
      // The driver reads the last of several; each is checked.
      ['?sslmode=disable&application_name=x&sslmode=requir', '"requir"'],
    ];
    for (const [query, value] of cases) {
      const said = `--state: sslmode ${value} is not one the PostgreSQL driver knows: ${ACCEPTED}`;
      expect(await refusal(openPostgresStore(url(query), { origin: '--state' })), query).to.equal(said);
      expect(await refusal(migratePostgres(url(query), '--state')), query).to.equal(said);
    }
    expect(await refusal(openPostgresStore(url('?sslmode=requir')))).to.match(
      /^FLEETBOOK_STATE: sslmode "requir" /,
    );
    expect(reached(), 'connections attempted').to.equal(0);
  });

  it('refuses allow and prefer, which fall back between TLS and none as the driver cannot', async () => {
    expect(await refusal(openPostgresStore(url('?sslmode=allow'), { origin: '--state' }))).to.equal(
      `--state: sslmode "allow" (libpq's: no TLS, unless the server requires it) is not one the PostgreSQL driver can do: it never falls back from one to the other; ${ACCEPTED}`,
    );
    expect(await refusal(migratePostgres(url('?sslmode=prefer')))).to.equal(
      `FLEETBOOK_STATE: sslmode "prefer" (libpq's: TLS, unless the server does not offer it) is not one the PostgreSQL driver can do: it never falls back from one to the other; ${ACCEPTED}`,
    );
    expect(await refusal(openPostgresStore(url('?uselibpqcompat=true&sslmode=prefer')))).to.equal(
      `FLEETBOOK_STATE: sslmode "prefer" (libpq's: TLS, unless the server does not offer it) is not one the PostgreSQL driver can do: it never falls back from one to the other; ${ACCEPTED_LIBPQ}`,
    );
    expect(reached(), 'connections attempted').to.equal(0);
  });

  it('refuses no-verify with uselibpqcompat=true, with which the driver would check the certificate', async () => {
    expect(await refusal(openPostgresStore(url('?sslmode=no-verify&uselibpqcompat=true')))).to.equal(
      `FLEETBOOK_STATE: sslmode "no-verify" is not one the PostgreSQL driver knows with uselibpqcompat=true: ${ACCEPTED_LIBPQ}`,
    );
    expect(reached(), 'connections attempted').to.equal(0);
  });
});

/** What the driver makes of a config's TLS (pg 8's ConnectionParameters): what the messages say it does. */
const ConnectionParameters = createRequire(import.meta.url)('pg/lib/connection-parameters') as new (
  config: pg.ClientConfig,
) => { ssl: unknown };

/** Runs `use` with PGSSLMODE set to `value` (unset for undefined), and then as it was. */
async function withPgsslmode<T>(value: string | undefined, use: () => T | Promise<T>): Promise<T> {
  const saved = process.env.PGSSLMODE;
  if (value === undefined) delete process.env.PGSSLMODE;
  else process.env.PGSSLMODE = value;
  try {
    return await use();
  } finally {
    if (saved === undefined) delete process.env.PGSSLMODE;
    else process.env.PGSSLMODE = saved;
  }
}

const SSL_ACCEPTED =
  "give one of: true, 1 (TLS, the server certificate checked against Node's trusted CAs, and its name against the host); 0 (no TLS); no-verify (TLS, the certificate not checked)";

describe('PostgreSQL URL: ssl', () => {
  const { url, reached } = loopbackServer();

  it('refuses one the driver does not know, naming it and saying what each accepted one does', async () => {
    // The driver took each as a truthy string: it asked the server for TLS, and threw a TypeError out of the
    // socket's data handler, which ended the process, when the server offered it (an empty one: no TLS).
    const cases: [query: string, value: string][] = [
      ['?ssl=ture', '"ture"'],
      ['?ssl=false', '"false"'],
      ['?ssl=TRUE', '"TRUE"'],
      ['?ssl=require', '"require"'],
      ['?ssl=', '"" (empty)'],
      ['?ssl=0&application_name=x&ssl=ture', '"ture"'],
      ['?ssl=ture&sslmode=disable', '"ture"'],
      ['?uselibpqcompat=true&ssl=ture', '"ture"'],
    ];
    for (const [query, value] of cases) {
      const said = `--state: ssl ${value} is not one the PostgreSQL driver knows: ${SSL_ACCEPTED}`;
      expect(await refusal(openPostgresStore(url(query), { origin: '--state' })), query).to.equal(said);
      expect(await refusal(migratePostgres(url(query), '--state')), query).to.equal(said);
    }
    expect(await refusal(openPostgresStore(url('?ssl=ture')))).to.match(/^FLEETBOOK_STATE: ssl "ture" /);
    expect(reached(), 'connections attempted').to.equal(0);
  });
});

const PGSSLMODE_ACCEPTED =
  "give one of: disable (no TLS); verify-full, verify-ca, require (TLS, the server certificate checked against Node's trusted CAs, and its name against the host: from PGSSLMODE, the driver takes each as verify-full, without a warning); no-verify (TLS, the certificate not checked); or unset PGSSLMODE (no TLS), or give sslmode in the URL";

describe('PGSSLMODE', () => {
  const { url, reached } = loopbackServer();
  const reads = (origin: string) =>
    `(it reads PGSSLMODE since the URL of ${origin} gives no sslmode, ssl, sslcert, sslkey or sslrootcert)`;

  it('refuses one the driver does not know, when it reads it: it took it as no TLS, silently', async () => {
    for (const mode of ['requir', 'REQUIRE', ' require'])
      await withPgsslmode(mode, async () => {
        const value = JSON.stringify(mode);
        expect(await refusal(openPostgresStore(url(''), { origin: '--state' })), mode).to.equal(
          `PGSSLMODE ${value} is not one the PostgreSQL driver knows ${reads('--state')}: ${PGSSLMODE_ACCEPTED}`,
        );
        expect(await refusal(migratePostgres(url('?application_name=x'))), mode).to.equal(
          `PGSSLMODE ${value} is not one the PostgreSQL driver knows ${reads('FLEETBOOK_STATE')}: ${PGSSLMODE_ACCEPTED}`,
        );
      });
    expect(reached(), 'connections attempted').to.equal(0);
  });

  it('refuses allow and prefer, which fall back between TLS and none as the driver cannot', async () => {
    await withPgsslmode('allow', async () =>
      expect(await refusal(openPostgresStore(url(''), { origin: '--state' }))).to.equal(
        `PGSSLMODE "allow" (libpq's: no TLS, unless the server requires it) is not one the PostgreSQL driver can do: it never falls back from one to the other ${reads('--state')}; ${PGSSLMODE_ACCEPTED}`,
      ),
    );
    await withPgsslmode('prefer', async () =>
      expect(await refusal(migratePostgres(url('?uselibpqcompat=true')))).to.equal(
        `PGSSLMODE "prefer" (libpq's: TLS, unless the server does not offer it) is not one the PostgreSQL driver can do: it never falls back from one to the other ${reads('FLEETBOOK_STATE')}; ${PGSSLMODE_ACCEPTED}`,
      ),
    );
    expect(reached(), 'connections attempted').to.equal(0);
  });

  it('is not checked when the URL says how to use TLS, as the driver then does not read it', async () => {
    // The driver reads the files these name (any will do here).
    const file = encodeURIComponent(import.meta.filename);
    for (const query of [
      '?sslmode=disable',
      '?sslmode=no-verify',
      '?ssl=0',
      '?ssl=true',
      `?sslcert=${file}`,
      `?sslkey=${file}`,
      `?sslrootcert=${file}`,
      '?sslnegotiation=direct',
    ]) {
      const ssl = (mode: string | undefined) =>
        withPgsslmode(mode, () => new ConnectionParameters(clientConfig(url(query), 'fleetbook')).ssl);
      const unset = await ssl(undefined);
      expect(await ssl('requir'), query).to.deep.equal(unset);
      expect(await ssl('allow'), query).to.deep.equal(unset);
      expect(await ssl('no-verify'), query).to.deep.equal(unset);
    }
    // An empty sslcert is none, to the driver: it reads PGSSLMODE.
    await withPgsslmode('requir', () =>
      expect(() => clientConfig(url('?sslcert='), 'fleetbook')).to.throw(/^PGSSLMODE "requir" /),
    );
  });
});

describe('PostgreSQL URL: ssl with sslmode, sslcert, sslkey or sslrootcert', () => {
  const { url, reached } = loopbackServer();
  const ignores = 'the driver ignores ssl when the URL gives sslmode, sslcert, sslkey or sslrootcert, so';

  it('refuses an ssl that says otherwise than they do: the driver followed them, ignoring it', async () => {
    const file = encodeURIComponent(import.meta.filename);
    const cases: [query: string, said: string][] = [
      [
        '?ssl=0&sslmode=verify-full',
        `ssl "0" (no TLS) contradicts sslmode "verify-full": ${ignores} sslmode wins (TLS); for no TLS write sslmode=disable instead of ssl=0, or leave ssl out`,
      ],
      [
        `?sslcert=${file}&sslkey=${file}&ssl=0`,
        `ssl "0" (no TLS) contradicts sslcert, sslkey: ${ignores} they win (TLS); for no TLS write sslmode=disable instead of ssl=0, or leave ssl out`,
      ],
      [
        '?ssl=true&sslmode=disable',
        `ssl "true" (TLS) contradicts sslmode "disable": ${ignores} sslmode wins (no TLS); for TLS write sslmode=verify-full, or leave ssl out`,
      ],
      [
        '?ssl=no-verify&sslmode=require',
        `ssl "no-verify" (TLS, the certificate not checked) contradicts sslmode "require": ${ignores} sslmode wins (TLS); for TLS with the certificate not checked write sslmode=no-verify instead of ssl=no-verify, or leave ssl out`,
      ],
      [
        `?uselibpqcompat=true&ssl=no-verify&sslrootcert=${file}`,
        `ssl "no-verify" (TLS, the certificate not checked) contradicts sslrootcert: ${ignores} sslrootcert wins (TLS); for TLS with the certificate not checked write sslmode=require (without sslrootcert) instead of ssl=no-verify, or leave ssl out`,
      ],
    ];
    for (const [query, said] of cases) {
      expect(await refusal(openPostgresStore(url(query), { origin: '--state' })), query).to.equal(
        `--state: ${said}`,
      );
      expect(await refusal(migratePostgres(url(query))), query).to.equal(`FLEETBOOK_STATE: ${said}`);
    }
    expect(reached(), 'connections attempted').to.equal(0);
  });

  it('accepts one that agrees with them', () => {
    for (const query of [
      '?ssl=true&sslmode=require',
      '?ssl=1&sslmode=verify-full',
      '?ssl=true&sslmode=no-verify',
      '?ssl=0&sslmode=disable',
      '?ssl=no-verify&sslmode=no-verify',
      '?uselibpqcompat=true&ssl=no-verify&sslmode=require',
    ])
      expect(() => clientConfig(url(query), 'fleetbook'), query).not.to.throw();
  });
});
