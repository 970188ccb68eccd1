/**
 * A login refused for its bearer token never reached the user's password check, and the emulator answered it as it
 * answered a wrong password: 401 `UNAUTHORIZED`, told apart by our own wording only, which no client may read as the
 * service's. Now a refused bearer token carries the challenge of RFC 6750 section 3 (the bearer scheme of the
 * service's OAuth 2 tokens): `WWW-Authenticate: Bearer realm=…, error="invalid_token"`; a wrong password does not.
 * Over loopback, by plain HTTP.
 */
import { expect } from 'chai';
import type { Emulator } from '../../src/emulator/index.js';
import { emulator, type Json, Raw } from './helpers.js';

describe('emulator: a login refused for its bearer token, told apart from a wrong password', () => {
  let emu: Emulator;
  let raw: Raw;

  before(async () => {
    emu = await emulator({ seed: 'refused-bearer', devicesPerAccount: 2 });
    raw = new Raw(emu);
  });
  after(() => emu.close());

  const login = (password: string, authorization?: string) =>
    raw.send(
      'POST',
      '/api/m2m/v1/session/login',
      { username: 'field', password },
      authorization === undefined ? {} : { authorization },
    );
  const locked = async () =>
    ((await raw.control('GET', '/accounts?devices=0')).body as { users: Json[] }).users.find(
      (u) => u.username === 'field',
    )!.locked;

  it('answers a wrong or missing bearer token with its challenge, and a wrong password without one', async () => {
    const wrong = await login('field-password', 'Bearer not-a-token');
    expect(wrong.status).to.equal(401);
    expect(wrong.body).to.deep.equal({
      errorCode: 'UNAUTHORIZED',
      errorMessage: 'The access token is invalid or has expired',
    });
    expect(wrong.headers['www-authenticate']).to.equal(
      'Bearer realm="fleetbook-emulator", error="invalid_token", error_description="The access token is invalid or has expired"',
    );

    const missing = await login('field-password');
    expect(missing.status).to.equal(401);
    expect(missing.headers['www-authenticate']).to.equal('Bearer realm="fleetbook-emulator"');

    const password = await login('wrong', `Bearer ${await raw.token()}`);
    expect([password.status, password.body]).to.deep.equal([
      401,
      { errorCode: 'UNAUTHORIZED', errorMessage: 'Invalid username or password' },
    ]);
    expect(password.headers['www-authenticate']).to.equal(undefined);
  });

  it('counts no failed login of the user for a refused bearer token', async () => {
    await emu.reset();
    for (let i = 0; i < 6; i++) expect((await login('wrong', 'Bearer not-a-token')).status).to.equal(401);
    for (let i = 0; i < 4; i++)
      expect((await login('wrong', `Bearer ${await raw.token()}`)).status).to.equal(401);
    expect(await locked()).to.equal(false);
    expect((await login('field-password', `Bearer ${await raw.token()}`)).status).to.equal(200);
  });
});
