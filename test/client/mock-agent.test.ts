/**
 * The client alone, without a socket: undici's MockAgent with net connect disabled is injected as the
 * dispatcher, and answers the token, the login and the calls.
 */
import { expect } from 'chai';
import { MockAgent } from 'undici';
import { createClient } from '../../src/api/client.js';
import { VirtualClock } from '../../src/clock.js';
import { ApiError } from '../../src/errors.js';

const ORIGIN = 'http://fleet.invalid';
const ACC = '0000123456-00001';
const IMEI = '353456789012345';

describe('client on an injected MockAgent (no socket)', () => {
  let agent: MockAgent;

  beforeEach(() => {
    agent = new MockAgent();
    agent.disableNetConnect();
  });
  afterEach(async () => {
    await agent.close();
  });

  it('authenticates and calls with both tokens, entirely through the mock dispatcher', async () => {
    const pool = agent.get(ORIGIN);
    const basic = Buffer.from('mock-client:mock-secret-0001').toString('base64');
    pool
      .intercept({
        path: '/api/ts/v1/oauth2/token',
        method: 'POST',
        headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=client_credentials',
      })
      .reply(200, { access_token: 'mock-bearer', token_type: 'Bearer', expires_in: 3600 });
    pool
      .intercept({
        path: '/api/m2m/v1/session/login',
        method: 'POST',
        headers: { authorization: 'Bearer mock-bearer' },
        body: (b) => JSON.parse(b).password === 'mock-password-0001',
      })
      .reply(200, { sessionToken: 'mock-session' });
    let sentBody: unknown;
    pool
      .intercept({
        path: '/api/loc/v1/locations',
        method: 'POST',
        headers: {
          authorization: 'Bearer mock-bearer',
          'x-m2m-token': 'mock-session',
          'content-type': 'application/json',
        },
        body: (b) => {
          sentBody = JSON.parse(b);
          return true;
        },
      })
      .reply(200, [{ msid: IMEI, pd: { x: '40.7', y: '-74.0' }, error: {} }]);
    pool
      .intercept({ path: `/api/loc/v1/locationreports/${ACC}/report/tx-9/status`, method: 'GET' })
      .reply(404, { errorCode: 'NOT_FOUND', errorMessage: 'No such report' });

    const client = createClient({
      baseUrl: `${ORIGIN}/api`,
      clientId: 'mock-client',
      clientSecret: 'mock-secret-0001',
      username: 'mock-user',
      password: 'mock-password-0001',
      dispatcher: agent,
      clock: new VirtualClock(),
    });

    const located = await client.location.locate({
      accountName: ACC,
      deviceList: [{ id: IMEI, kind: 'IMEI' }],
    });
    expect(located).to.deep.equal([{ msid: IMEI, pd: { x: '40.7', y: '-74.0' }, error: {} }]);
    expect(sentBody).to.deep.equal({ accountName: ACC, deviceList: [{ id: IMEI, kind: 'imei' }] });

    let err: unknown;
    try {
      await client.location.getReportStatus({ accountName: ACC, txid: 'tx-9' });
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(ApiError);
    expect((err as ApiError).toJSON()).to.include({
      status: 404,
      code: 'NOT_FOUND',
      retryClass: 'permanent',
    });

    agent.assertNoPendingInterceptors();
    expect(client.stats.tokenRequests).to.equal(1);
    expect(client.stats.logins).to.equal(1);
    // The client does not close a dispatcher it was given: the agent still answers afterwards.
    await client.close();
    pool.intercept({ path: '/still-open', method: 'GET' }).reply(200, 'yes');
    const after = await agent.request({ origin: ORIGIN, path: '/still-open', method: 'GET' });
    expect(await after.body.text()).to.equal('yes');
  });
});
