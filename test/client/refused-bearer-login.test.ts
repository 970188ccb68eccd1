/**
 * A login refused for its bearer token was taken for a failed login of the user: counted towards the lockout and
 * latched as a LoginError telling the operator to fix the user's credentials. The token never reached the user's
 * password. Now the refusal, told by its challenge (RFC 6750 `invalid_token`, as the emulator answers it), counts
 * nothing: a fetched token is forgotten and fetched again once, and the login sent again; a token given as it is
 * fails the call saying so, once, and no further login is sent with it. A 401 without the challenge (a wrong
 * password) still counts. The real emulator over loopback.
 */
import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient } from '../../src/api/client.js';
import type { ClientOptions } from '../../src/api/client-options.js';
import { MemoryLoginCounts } from '../../src/api/login-count.js';
import { AuthError, LoginError } from '../../src/errors.js';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { FAST, Raw } from '../emulator/helpers.js';

describe('a login refused for its bearer token is not a failed login of the user', () => {
  let emu: Emulator;
  let raw: Raw;
  let account: string;

  before(async () => {
    emu = await startEmulator({ port: 0, timeScale: 0, seed: 'refused-bearer', devicesPerAccount: 2 });
    raw = new Raw(emu);
    account = emu.defaults.accounts[0]!;
  });
  beforeEach(() => emu.reset());
  after(() => emu.close());

  const clientWith = (o: Partial<ClientOptions>, counts: MemoryLoginCounts) =>
    createClient({
      baseUrl: emu.baseUrl,
      clientId: emu.defaults.clientId,
      clientSecret: emu.defaults.clientSecret,
      username: emu.defaults.username,
      password: emu.defaults.password,
      rates: FAST,
      logins: counts,
      ...o,
    });
  const logins = async () =>
    ((await raw.control('GET', '/calls')).body as { actions: Record<string, number> }).actions[
      'session.login'
    ] ?? 0;

  it('a fetched token revoked as the login is sent: fetched again once, the login sent again, nothing counted', async () => {
    const counts = new MemoryLoginCounts();
    const client = clientWith({}, counts);
    const hold = emu.hold('session.login');
    const listed = client.devices.list({ accountName: account });
    while (hold.held === 0) await sleep(5);
    // The emulator gives a client its current token: the one the held login carries.
    const token = await raw.token();
    const basic = Buffer.from(`${emu.defaults.clientId}:${emu.defaults.clientSecret}`).toString('base64');
    const revoked = await raw.send('POST', '/api/ts/v1/oauth2/revoke', `token=${token}`, {
      authorization: `Basic ${basic}`,
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(revoked.status).to.equal(200);
    hold.release();
    const out = await listed;
    expect(out).to.have.property('devices');
    // Fetched again once, for the login; the listing, whose headers took the revoked token before its session
    // came, is refused for it too and replayed with the token fetched for the login.
    expect(client.stats.tokenRequests, 'the token fetched again once').to.equal(2);
    expect(client.stats.logins, 'one login in the client').to.equal(1);
    expect(await logins(), 'the login sent again with it').to.equal(2);
    expect(await counts.list()).to.deep.equal([]);
    await client.close();
  });

  it('a token given as it is: the call fails saying so, one login sent, nothing counted', async () => {
    const counts = new MemoryLoginCounts();
    const client = clientWith(
      { accessToken: 'wrong-token', clientId: undefined, clientSecret: undefined },
      counts,
    );
    for (let i = 0; i < 5; i++) {
      const e = await client.devices.list({ accountName: account }).catch((x: unknown) => x);
      expect(e).to.be.instanceOf(AuthError);
      expect((e as AuthError).message).to.match(
        /^the access token \(FLEETBOOK_ACCESS_TOKEN\) was refused: HTTP 401 UNAUTHORIZED: The access token is invalid or has expired\. .*set a fresh FLEETBOOK_ACCESS_TOKEN/,
      );
    }
    expect(await logins(), 'one login, then none with the refused token').to.equal(1);
    expect(await counts.list()).to.deep.equal([]);
    expect(client.loginStopped).to.equal(undefined);
    // What a daemon's /status says of it (`authRefused`).
    expect(client.authRefused?.credential).to.equal('access token');
    expect(client.authRefused?.error).to.match(/^the access token \(FLEETBOOK_ACCESS_TOKEN\) was refused/);
    await client.close();
  });

  it('a token request refused: the client credentials refused for good, said by authRefused', async () => {
    const client = clientWith({ clientSecret: 'not-the-secret' }, new MemoryLoginCounts());
    expect(client.authRefused).to.equal(undefined);
    const e = await client.devices.list({ accountName: account }).catch((x: unknown) => x);
    expect(e).to.be.instanceOf(AuthError);
    expect(client.authRefused?.credential).to.equal('client credentials');
    expect(client.authRefused?.error).to.equal((e as AuthError).message);
    expect(client.authRefused?.error).to.match(
      /^the OAuth token request for client \S+ was refused: HTTP 401/,
    );
    await client.close();
  });

  it('a wrong password (a 401 without the challenge) still counts', async () => {
    const counts = new MemoryLoginCounts();
    const client = clientWith({ password: 'not-the-password' }, counts);
    const e = await client.devices.list({ accountName: account }).catch((x: unknown) => x);
    expect(e).to.be.instanceOf(LoginError);
    expect((await counts.list()).map((r) => [r.username, r.state])).to.deep.equal([
      [emu.defaults.username, 'refused'],
    ]);
    await client.close();
  });
});
