/**
 * The `sslmode` of a PostgreSQL URL is checked with the rest of the URL, before any connection: the driver
 * (pg-connection-string) took one it does not know (`requir`, `REQUIRE`, `allow`) as TLS with the server's
 * certificate checked, silently, and `prefer` as the same, where libpq falls back to a connection without TLS.
 * A loopback listener stands for the server: nothing may reach it.
 */
import { createServer, type AddressInfo, type Server } from 'node:net';
import { expect } from 'chai';
import { migratePostgres } from '../../src/store/postgres/migrations.js';
import { clientConfig, SSLMODES } from '../../src/store/postgres/pool.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';

const ACCEPTED =
  'give one of: disable (no TLS); verify-full (TLS, the server certificate checked against the trusted CAs, or those of sslrootcert, and its name against the host); require, verify-ca (TLS, checked as verify-full does: the driver takes them as verify-full, and warns so once); no-verify (TLS, the certificate not checked)';
/** With `uselibpqcompat=true`, the driver gives require and verify-ca libpq's meaning, and knows no no-verify. */
const ACCEPTED_LIBPQ =
  'give one of: disable (no TLS); verify-full (TLS, the server certificate checked against the trusted CAs, or those of sslrootcert, and its name against the host); require (TLS, the certificate not checked, unless sslrootcert is given: then as verify-ca); verify-ca (TLS, the certificate checked against the CAs of sslrootcert, which it needs, but not its name)';

describe('PostgreSQL URL: sslmode', () => {
  let server: Server;
  let port: number;
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

  const url = (query: string) => `postgres://fleetbook:s3cret@127.0.0.1:${port}/fleetbook${query}`;
  const refusal = async (open: Promise<unknown>) => {
    const err = await open.then(
      () => undefined,
      (e: unknown) => e as Error & { code?: string },
    );
    expect(err?.code, err?.message).to.equal('FB_CONFIG');
    return err?.message ?? '';
  };

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
    expect(reached, 'connections attempted').to.equal(0);
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
    expect(reached, 'connections attempted').to.equal(0);
  });

  it('refuses no-verify with uselibpqcompat=true, with which the driver would check the certificate', async () => {
    expect(await refusal(openPostgresStore(url('?sslmode=no-verify&uselibpqcompat=true')))).to.equal(
      `FLEETBOOK_STATE: sslmode "no-verify" is not one the PostgreSQL driver knows with uselibpqcompat=true: ${ACCEPTED_LIBPQ}`,
    );
    expect(reached, 'connections attempted').to.equal(0);
  });

  it('accepts the ones the driver does, and a URL without one', () => {
    expect(SSLMODES).to.deep.equal(['disable', 'verify-full', 'require', 'verify-ca', 'no-verify']);
    for (const query of ['', '?application_name=x', ...SSLMODES.map((m) => `?sslmode=${m}`)])
      expect(() => clientConfig(url(query), 'fleetbook'), query).not.to.throw();
    for (const mode of ['disable', 'verify-full', 'require', 'verify-ca'])
      expect(
        () => clientConfig(url(`?uselibpqcompat=true&sslmode=${mode}`), 'fleetbook'),
        mode,
      ).not.to.throw();
  });
});
