/**
 * The bearer token: OAuth client credentials at `{base_url}/ts/v1/oauth2/token` with a Basic header and the
 * form body `grant_type=client_credentials`; cached across calls; refreshed before `expires_in` runs out,
 * allowing for clock skew; a static access token skips OAuth; a refused token request is not retried in a loop.
 */
import { expect } from 'chai';
import { createClient, type Client } from '../../src/api/client.js';
import type { ClientOptions } from '../../src/api/client-options.js';
import { VirtualClock } from '../../src/clock.js';
import { AuthError } from '../../src/errors.js';
import { failure, FAST_RATES, Recorder, TOKEN_PATH } from '../helpers/recorder.js';

const ACC = '0000123456-00001';

describe('OAuth bearer token', () => {
  let rec: Recorder;
  let clock: VirtualClock;
  let client: Client | undefined;

  function make(o: Partial<ClientOptions> = {}): Client {
    client = createClient({ baseUrl: rec.baseUrl, ...rec.credentials, clock, rates: FAST_RATES, ...o });
    return client;
  }
  const list = (c: Client) => c.callbacks.list({ accountName: ACC });
  const bearers = () => rec.apiRequests().map((r) => r.headers.authorization);

  beforeEach(async () => {
    clock = new VirtualClock();
    client = undefined;
  });
  afterEach(async () => {
    await client?.close();
    await rec.close();
  });

  it('asks with a Basic header and the form body grant_type=client_credentials', async () => {
    rec = await Recorder.start();
    await list(make());
    expect(rec.tokenRequests).to.have.length(1);
    const t = rec.tokenRequests[0]!;
    expect(t.method).to.equal('POST');
    expect(t.path).to.equal(TOKEN_PATH);
    const basic = Buffer.from(`${rec.options.clientId}:${rec.options.clientSecret}`).toString('base64');
    expect(t.headers.authorization).to.equal(`Basic ${basic}`);
    expect(t.headers['content-type']).to.equal('application/x-www-form-urlencoded');
    expect(t.rawBody).to.equal('grant_type=client_credentials');
    expect(t.headers).to.not.have.property('x-m2m-token');
    // The token then rides on the login and the call.
    expect(rec.loginRequests[0]!.headers.authorization).to.equal('Bearer bearer-1');
    expect(bearers()).to.deep.equal(['Bearer bearer-1']);
  });

  it('caches the token across calls, concurrent ones included', async () => {
    rec = await Recorder.start();
    const c = make();
    await Promise.all([list(c), list(c), list(c)]);
    await list(c);
    await c.session.logout({});
    expect(rec.tokenRequests).to.have.length(1);
    expect(new Set(bearers())).to.deep.equal(new Set(['Bearer bearer-1']));
    expect(c.stats.tokenRequests).to.equal(1);
  });

  it('refreshes before expires_in minus the skew, and not earlier', async () => {
    // 120 s tokens, refreshed 30 s early: due at 90 s.
    rec = await Recorder.start({ expiresIn: 120 });
    const c = make({ tokenSkewMs: 30_000 });
    await list(c);
    await clock.sleep(89_000);
    await list(c);
    expect(rec.tokenRequests, 'still valid at 89 s').to.have.length(1);
    await clock.sleep(1_500);
    await list(c);
    expect(rec.tokenRequests, 'refreshed at 90.5 s').to.have.length(2);
    expect(bearers()).to.deep.equal(['Bearer bearer-1', 'Bearer bearer-1', 'Bearer bearer-2']);
    // The new token is cached in its turn.
    await list(c);
    expect(rec.tokenRequests).to.have.length(2);
  });

  it('with the default skew, a short-lived token is refreshed at half its life at the latest', async () => {
    rec = await Recorder.start({ expiresIn: 60 });
    const c = make();
    await list(c);
    await clock.sleep(29_000);
    await list(c);
    expect(rec.tokenRequests).to.have.length(1);
    await clock.sleep(2_000);
    await list(c);
    expect(rec.tokenRequests).to.have.length(2);
  });

  it('an expires_in that is not a number is taken as an hour, not as a token for one request', async () => {
    rec = await Recorder.start();
    rec.handle(`POST ${TOKEN_PATH}`, {
      status: 200,
      body: { access_token: 'bearer-odd-lifetime', token_type: 'Bearer', expires_in: '3600s' },
    });
    const c = make();
    await list(c);
    await list(c);
    expect(rec.tokenRequests).to.have.length(1);
    await clock.sleep(3_600_000);
    await list(c);
    expect(rec.tokenRequests).to.have.length(2);
  });

  it('a static accessToken skips OAuth entirely', async () => {
    rec = await Recorder.start();
    const c = make({ accessToken: 'static-token-abcdef', clientId: undefined, clientSecret: undefined });
    await list(c);
    await c.session.logout({});
    expect(rec.tokenRequests).to.have.length(0);
    expect(rec.loginRequests[0]!.headers.authorization).to.equal('Bearer static-token-abcdef');
    expect(new Set(bearers())).to.deep.equal(new Set(['Bearer static-token-abcdef']));
  });

  it('a static accessToken wins over client credentials', async () => {
    rec = await Recorder.start();
    await list(make({ accessToken: 'static-token-abcdef' }));
    expect(rec.tokenRequests).to.have.length(0);
  });

  for (const status of [400, 401]) {
    it(`a refused token request (${status}) is not retried in a loop: one request, AuthError, no further attempt`, async () => {
      rec = await Recorder.start();
      rec.handle(`POST ${TOKEN_PATH}`, {
        status,
        body: { error: 'invalid_client', error_description: 'Client authentication failed' },
      });
      const c = make();
      const errors = await Promise.all(Array.from({ length: 10 }, () => failure(list(c))));
      for (const e of errors) {
        expect(e).to.be.instanceOf(AuthError);
        expect((e as AuthError).code).to.equal('FB_AUTH');
        expect((e as AuthError).retryClass).to.equal('permanent');
        expect((e as AuthError).message).to.include('invalid_client');
      }
      expect(await failure(list(c))).to.be.instanceOf(AuthError);
      expect(rec.tokenRequests).to.have.length(1);
      expect(rec.loginRequests).to.have.length(0);
      expect(rec.apiRequests()).to.have.length(0);
    });
  }

  it('a token endpoint not found says the API URL is not the base URL (its /api left out)', async () => {
    rec = await Recorder.start();
    // The service's host answers 404 below its `/api`.
    rec.handle('POST /ts/v1/oauth2/token', { status: 404, body: 'Not Found' });
    const e = await failure(list(make({ baseUrl: rec.origin })));
    expect(e).to.be.instanceOf(AuthError);
    expect((e as AuthError).message).to.include('HTTP 404');
    expect((e as AuthError).message).to.include(
      "No OAuth token endpoint is at {base_url}/ts/v1/oauth2/token: is the API URL (FLEETBOOK_API_URL) the service's {base_url}, e.g. https://<host>/api?",
    );
  });

  it('a token response without access_token is an AuthError', async () => {
    rec = await Recorder.start();
    rec.handle(`POST ${TOKEN_PATH}`, { status: 200, body: { token_type: 'Bearer', expires_in: 3600 } });
    const e = await failure(list(make()));
    expect(e).to.be.instanceOf(AuthError);
    expect(rec.apiRequests()).to.have.length(0);
  });
});

describe('bearer token revoked', () => {
  it('a 401 that is not INVALID_ACCESS drops the cached bearer, fetches a new one once and replays', async () => {
    const { Recorder } = await import('../helpers/recorder.js');
    const { createClient } = await import('../../src/api/client.js');
    const rec = await Recorder.start();
    try {
      const client = createClient({ baseUrl: rec.baseUrl, ...rec.credentials });
      const input = { accountName: '0000123456-00001', txid: 't1' };
      const path = 'GET /api/loc/v1/locationreports/0000123456-00001/report/t1/status';
      rec.enqueue(path, { status: 200, body: { txid: 't1', status: 'QUEUED' } });
      await client.location.getReportStatus(input);
      rec.enqueue(
        path,
        { status: 401, body: { errorCode: 'UNAUTHORIZED', errorMessage: 'invalid token' } },
        { status: 200, body: { txid: 't1', status: 'COMPLETED' } },
      );
      expect(await client.location.getReportStatus(input)).to.deep.equal({ txid: 't1', status: 'COMPLETED' });
      expect(rec.requestsTo('/api/ts/v1/oauth2/token')).to.have.length(2);
      // INVALID_ACCESS is about the account, not the token: no new token, the error stands.
      rec.enqueue(path, {
        status: 401,
        body: {
          errorCode: 'INVALID_ACCESS',
          errorMessage: 'The access policy denied the resource operation for this user',
        },
      });
      let err: unknown;
      await client.location.getReportStatus(input).catch((e: unknown) => (err = e));
      expect((err as { apiCode?: string }).apiCode).to.equal('INVALID_ACCESS');
      expect(rec.requestsTo('/api/ts/v1/oauth2/token')).to.have.length(2);
      await client.close();
    } finally {
      await rec.close();
    }
  });
});
