/**
 * Retry rules by error and by the operation's retry safety (src/api/ARCHITECTURE.md):
 * - 5xx (other than 503) and resets after sending: retried only for retry-safe operations;
 * - 429, 503 and errors proving the request never left (connection refused): retried for every operation;
 * - INTERNAL_ERROR "Failed to get location": retried (the service says nothing was done);
 * - other 4xx: never retried; maxAttempts bounds everything; the backoff is full jitter with a cap.
 * Backoff sleeps run on a virtual clock.
 */
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { createClient, type Client } from '../../src/api/client.js';
import type { ClientOptions } from '../../src/api/client-options.js';
import { VirtualClock, type Clock } from '../../src/clock.js';
import { ApiError, NetworkError } from '../../src/errors.js';
import { failure, FAST_RATES, Recorder, type ScriptedResponse } from '../helpers/recorder.js';

const ACC = '0000123456-00001';
const IMEI = '353456789012345';
const LOCATE = '/api/loc/v1/locations';
const SUSPEND = '/api/m2m/v1/devices/actions/suspend';
const STATUS = `/api/loc/v1/locationreports/${ACC}/report/tx/status`;
const locate = { accountName: ACC, deviceList: [{ id: IMEI, kind: 'imei' }] };
const suspend = { accountName: ACC, devices: [{ id: IMEI, kind: 'imei' }] };

const fail = (status: number, errorCode = 'INTERNAL_ERROR', errorMessage = 'Internal system error') => ({
  status,
  body: { errorCode, errorMessage },
});
const ok = (body: unknown = {}): ScriptedResponse => ({ status: 200, body });

/** A port on which nothing listens. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('retry rules', () => {
  let rec: Recorder;
  let clock: VirtualClock;
  let client: Client;

  function make(o: Partial<ClientOptions> = {}): Client {
    return createClient({ baseUrl: rec.baseUrl, ...rec.credentials, clock, rates: FAST_RATES, ...o });
  }

  beforeEach(async () => {
    rec = await Recorder.start();
    clock = new VirtualClock();
    client = make();
  });
  afterEach(async () => {
    await client.close();
    await rec.close();
  });

  it('500 is retried for a retry-safe POST (location.locate)', async () => {
    rec.enqueue(`POST ${LOCATE}`, fail(500), fail(502), ok([]));
    expect(await client.location.locate(locate)).to.deep.equal([]);
    expect(rec.requestsTo(LOCATE)).to.have.length(3);
    expect(client.stats.retries).to.equal(2);
  });

  it('500 is retried for a GET (location.getReportStatus)', async () => {
    rec.enqueue(`GET ${STATUS}`, fail(500), ok({ txid: 'tx', status: 'COMPLETED' }));
    expect(await client.location.getReportStatus({ accountName: ACC, txid: 'tx' })).to.deep.equal({
      txid: 'tx',
      status: 'COMPLETED',
    });
    expect(rec.requestsTo(STATUS)).to.have.length(2);
  });

  it('500 is NOT retried for devices.suspend: one request, the error thrown', async () => {
    rec.enqueue(`POST ${SUSPEND}`, fail(500), ok({ requestId: 'never' }));
    const e = await failure(client.devices.suspend(suspend));
    expect(e).to.be.instanceOf(ApiError);
    expect((e as ApiError).status).to.equal(500);
    expect((e as ApiError).retryClass).to.equal('retryable');
    expect(rec.requestsTo(SUSPEND)).to.have.length(1);
    expect(client.stats.retries).to.equal(0);
  });

  it('504 and 408 are NOT retried for devices.suspend either (the service may have acted)', async () => {
    rec.enqueue(`POST ${SUSPEND}`, fail(504), fail(408, 'TIMEOUT', 'Request timeout'));
    expect(await failure(client.devices.suspend(suspend))).to.be.instanceOf(ApiError);
    expect(await failure(client.devices.suspend(suspend))).to.be.instanceOf(ApiError);
    expect(rec.requestsTo(SUSPEND)).to.have.length(2);
  });

  it('503 is retried for devices.suspend', async () => {
    rec.enqueue(`POST ${SUSPEND}`, fail(503, 'SERVICE_UNAVAILABLE', 'try later'), ok({ requestId: 'r-1' }));
    expect(await client.devices.suspend(suspend)).to.deep.equal({ requestId: 'r-1' });
    expect(rec.requestsTo(SUSPEND)).to.have.length(2);
  });

  it('429 is retried for devices.suspend', async () => {
    rec.enqueue(
      `POST ${SUSPEND}`,
      { ...fail(429, 'TOO_MANY', 'slow down'), headers: { 'retry-after': '0' } },
      ok({ requestId: 'r-2' }),
    );
    expect(await client.devices.suspend(suspend)).to.deep.equal({ requestId: 'r-2' });
    expect(rec.requestsTo(SUSPEND)).to.have.length(2);
  });

  it('other 4xx are never retried, even for retry-safe operations', async () => {
    rec.enqueue(`POST ${LOCATE}`, fail(400, 'INVALID_PARAMETER', 'Device not found'), ok([]));
    const e = await failure(client.location.locate(locate));
    expect(e).to.be.instanceOf(ApiError);
    expect((e as ApiError).retryClass).to.equal('permanent');
    expect(rec.requestsTo(LOCATE)).to.have.length(1);
  });

  it('INTERNAL_ERROR "Failed to get location" is retried, as 400 and as 500', async () => {
    rec.enqueue(
      `POST ${LOCATE}`,
      fail(400, 'INTERNAL_ERROR', 'Failed to get location'),
      fail(500, 'INTERNAL_ERROR', 'Failed to get location'),
      ok([]),
    );
    expect(await client.location.locate(locate)).to.deep.equal([]);
    expect(rec.requestsTo(LOCATE)).to.have.length(3);
  });

  it('INTERNAL_ERROR "Fail to verify device" (400) is not retried', async () => {
    rec.enqueue(`POST ${LOCATE}`, fail(400, 'INTERNAL_ERROR', 'Fail to verify device'), ok([]));
    expect(await failure(client.location.locate(locate))).to.be.instanceOf(ApiError);
    expect(rec.requestsTo(LOCATE)).to.have.length(1);
  });

  it('maxAttempts is respected, and the backoff is full jitter, doubling, capped', async () => {
    await client.close();
    client = make({ retry: { maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 250 }, random: () => 0.999 });
    await client.session.logout({});
    rec.handle(`GET ${STATUS}`, fail(500));
    const sleepsBefore = clock.sleeps.length;
    const e = await failure(client.location.getReportStatus({ accountName: ACC, txid: 'tx' }));
    expect(e).to.be.instanceOf(ApiError);
    expect((e as ApiError).status).to.equal(500);
    expect(rec.requestsTo(STATUS)).to.have.length(4);
    // 3 waits: floor(0.999 * min(250, 100 * 2^n)) for n = 0, 1, 2 (the rate gate's sub-millisecond spacing
    // sleeps left out).
    expect(clock.sleeps.slice(sleepsBefore).filter((ms) => ms >= 1)).to.deep.equal([99, 199, 249]);
  });

  it('maxAttempts 1 means no retry at all', async () => {
    await client.close();
    client = make({ retry: { maxAttempts: 1 } });
    rec.enqueue(`POST ${LOCATE}`, fail(503), ok([]));
    expect(await failure(client.location.locate(locate))).to.be.instanceOf(ApiError);
    expect(rec.requestsTo(LOCATE)).to.have.length(1);
  });

  it('a connection reset after the request was sent is NOT retried for devices.suspend: NetworkError sent true', async () => {
    await client.session.logout({});
    rec.enqueue(`POST ${SUSPEND}`, { destroy: true }, ok({ requestId: 'never' }));
    const e = await failure(client.devices.suspend(suspend));
    expect(e).to.be.instanceOf(NetworkError);
    const ne = e as NetworkError;
    expect(ne.sent).to.equal(true);
    expect(ne.code).to.equal('FB_NETWORK');
    expect(ne.retryClass).to.equal('retryable');
    expect(ne.action).to.equal('devices.suspend');
    expect(ne.toJSON()).to.include({ sent: true, action: 'devices.suspend' });
    expect(rec.requestsTo(SUSPEND)).to.have.length(1);
  });

  it('a connection reset after sending IS retried for a retry-safe operation', async () => {
    rec.enqueue(`POST ${LOCATE}`, { destroy: true }, ok([]));
    expect(await client.location.locate(locate)).to.deep.equal([]);
    expect(rec.requestsTo(LOCATE)).to.have.length(2);
  });

  it('https to a port that speaks http: a NetworkError, not sent, that says to check the URL', async () => {
    // The recorder speaks plain HTTP: a TLS client's hello gets an HTTP answer, and OpenSSL says only
    // "ssl3_get_record:wrong version number".
    const https = createClient({
      baseUrl: rec.baseUrl.replace(/^http:/, 'https:'),
      accessToken: 'static-bearer-token-0001',
      username: 'u',
      password: 'tls-password-0001',
      clock,
      rates: FAST_RATES,
      retry: { maxAttempts: 1 },
    });
    try {
      const e = await failure(https.devices.suspend(suspend));
      expect(e).to.be.instanceOf(NetworkError);
      expect((e as NetworkError).causeCode).to.equal('ERR_SSL_WRONG_VERSION_NUMBER');
      expect((e as NetworkError).sent).to.equal(false);
      expect((e as Error).message).to.equal(
        'session.login: the server did not answer in TLS: does the API URL say https for a port that speaks http? (ERR_SSL_WRONG_VERSION_NUMBER)',
      );
      expect(rec.requests).to.deep.equal([]);
    } finally {
      await https.close();
    }
  });

  it('connection refused (nothing listening) is retried up to maxAttempts, then NetworkError sent false', async () => {
    const port = await closedPort();
    const refused = createClient({
      baseUrl: `http://127.0.0.1:${port}/api`,
      accessToken: 'static-bearer-token-0001',
      username: 'u',
      password: 'refused-password-0001',
      clock,
      rates: FAST_RATES,
      retry: { maxAttempts: 3 },
    });
    try {
      const e = await failure(refused.devices.suspend(suspend));
      expect(e).to.be.instanceOf(NetworkError);
      expect((e as NetworkError).sent).to.equal(false);
      expect((e as NetworkError).causeCode).to.equal('ECONNREFUSED');
      // The login is the first request; a refused connection proves it was never sent, so even the login,
      // which is never re-sent after an unknown outcome, is tried again.
      expect(refused.stats.requests['session.login']).to.equal(3);
      expect(refused.stats.retries).to.equal(2);
    } finally {
      await refused.close();
    }
  });

  it('connection refused on devices.suspend is retried, and succeeds once the service is back', async () => {
    // A service that closes every connection, so that no kept-alive socket outlives it.
    const first = await Recorder.start({ keepAlive: false });
    const port = first.listeningPort;
    let back: Recorder | undefined;
    // The service comes back while the client waits to retry (the first retry's backoff sleep).
    const reviving: Clock = {
      now: () => clock.now(),
      sleep: async (ms) => {
        if (c.stats.retries > 0)
          back ??= await Recorder.start({ port, checkSession: false, keepAlive: false });
        return clock.sleep(ms);
      },
      timer: (ms, fire) => clock.timer(ms, fire),
    };
    const c = createClient({
      baseUrl: first.baseUrl,
      ...first.credentials,
      clock: reviving,
      rates: FAST_RATES,
    });
    try {
      await c.session.logout({});
      await first.close();
      expect(await c.devices.suspend(suspend)).to.deep.equal({});
      expect(back).to.not.equal(undefined);
      expect(back!.requestsTo(SUSPEND)).to.have.length(1);
      expect(back!.loginRequests, 'the session was kept').to.have.length(0);
      expect(c.stats.requests['devices.suspend']).to.equal(2);
      expect(c.stats.retries).to.equal(1);
    } finally {
      await c.close();
      await back?.close();
    }
  });
});
