/**
 * Regression: 50 requests in flight meet an expired session at once (spec 7.1: 400 INVALID_PARAMETER
 * "UWS verification failure (The Session has expired.)"). Exactly one new login is made and shared by all
 * of them, each request is replayed exactly once with the new token, and all 50 succeed.
 */
import { DEFAULT_WINDOW_MS } from '../../src/rate/area.js';
import { expect } from 'chai';
import { createClient } from '../../src/api/client.js';
import { VirtualClock } from '../../src/clock.js';
import { ApiError } from '../../src/errors.js';
import { onRecorder, SESSION_EXPIRED } from '../helpers/recorder.js';

const ACC = '0000123456-00001';
const STATUS = (i: number) => `/api/loc/v1/locationreports/${ACC}/report/tx-${i}/status`;

describe('session renewal storm', () => {
  const t = onRecorder({ each: true });

  it('50 concurrent requests meeting an expired session: one login, 50 successes, one replay each', async () => {
    // A session in use, which the service then expires.
    await t.client.location.getReportStatus({ accountName: ACC, txid: 'warm-up' });
    expect(t.rec.loginRequests).to.have.length(1);
    const stale = t.rec.issuedSessions[0];
    t.rec.expireSessions();
    t.rec.handle(/^GET \/api\/loc\/v1\/locationreports\//, (r) =>
      r.headers['x-m2m-token'] === stale
        ? { status: 400, body: SESSION_EXPIRED }
        : { status: 200, body: { txid: r.path.split('/')[7], status: 'COMPLETED' } },
    );
    t.rec.requests.length = 0;

    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        t.client.location.getReportStatus({ accountName: ACC, txid: `tx-${i}` }),
      ),
    );

    expect(results.map((r) => r.txid)).to.deep.equal(Array.from({ length: 50 }, (_, i) => `tx-${i}`));
    expect(t.rec.loginRequests, 'exactly one new login').to.have.length(1);
    expect(t.rec.issuedSessions).to.have.length(2);
    const fresh = t.rec.issuedSessions[1];
    for (let i = 0; i < 50; i++) {
      const sent = t.rec.requestsTo(STATUS(i));
      // Met the expired session once, then replayed once with the new token.
      expect(
        sent.map((r) => r.headers['x-m2m-token']),
        `request ${i}`,
      ).to.deep.equal([stale, fresh]);
    }
    // The login came after the expired answers and before every replay.
    const login = t.rec.requests.indexOf(t.rec.loginRequests[0]!);
    const replays = t.rec.requests.filter((r) => r.headers['x-m2m-token'] === fresh);
    expect(replays).to.have.length(50);
    for (const r of replays) expect(t.rec.requests.indexOf(r)).to.be.greaterThan(login);
    expect(t.client.stats.sessionRenewals).to.equal(1);
    expect(t.rec.tokenRequests, 'the bearer token is not fetched again').to.have.length(0);
  });

  it('50 concurrent first calls share the first login', async () => {
    t.rec.handle(/^GET /, { status: 200, body: { txid: 'x', status: 'QUEUED' } });
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        t.client.location.getReportStatus({ accountName: ACC, txid: `tx-${i}` }),
      ),
    );
    expect(t.rec.tokenRequests).to.have.length(1);
    expect(t.rec.loginRequests).to.have.length(1);
  });

  it('a request replayed once that meets the expired session again fails with retry class session', async () => {
    await t.client.location.getReportStatus({ accountName: ACC, txid: 'warm-up' });
    // Every session is refused from now on: the request is replayed once after one login, then thrown.
    t.rec.handle(/^GET /, { status: 400, body: SESSION_EXPIRED });
    t.rec.requests.length = 0;
    let err: unknown;
    try {
      await t.client.location.getReportStatus({ accountName: ACC, txid: 'tx-1' });
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(ApiError);
    expect((err as ApiError).retryClass).to.equal('session');
    expect(t.rec.loginRequests).to.have.length(1);
    expect(t.rec.requestsTo(STATUS(1))).to.have.length(2);
  });

  it('a storm of mutating calls (devices.suspend) is replayed too: the expired session proves nothing was done', async () => {
    await t.client.session.logout({});
    const stale = t.rec.issuedSessions[0];
    t.rec.expireSessions();
    t.rec.requests.length = 0;
    const path = '/api/m2m/v1/devices/actions/suspend';
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        t.client.devices.suspend({
          accountName: ACC,
          devices: [{ id: String(350000000000000 + i), kind: 'imei' }],
        }),
      ),
    );
    expect(t.rec.loginRequests).to.have.length(1);
    const sent = t.rec.requestsTo(path, 'POST');
    expect(sent).to.have.length(40);
    expect(sent.filter((r) => r.headers['x-m2m-token'] === stale)).to.have.length(20);
    expect(sent.filter((r) => r.headers['x-m2m-token'] === t.rec.issuedSessions[1])).to.have.length(20);
  });

  it('the same storm through the default budgets (20/s, 10 in flight) on a virtual clock, login in the same area', async () => {
    const clock = new VirtualClock();
    const slow = createClient({ baseUrl: t.rec.baseUrl, ...t.rec.credentials, clock });
    try {
      await slow.callbacks.list({ accountName: ACC });
      const stale = t.rec.issuedSessions[0];
      t.rec.expireSessions();
      t.rec.requests.length = 0;
      const t0 = clock.now();
      const lists = await Promise.all(
        Array.from({ length: 50 }, () => slow.callbacks.list({ accountName: ACC })),
      );
      expect(lists).to.have.length(50);
      expect(t.rec.loginRequests).to.have.length(1);
      const sent = t.rec.requestsTo(`/api/m2m/v1/callbacks/${ACC}`);
      expect(sent.filter((r) => r.headers['x-m2m-token'] === stale)).to.have.length(50);
      expect(sent.filter((r) => r.headers['x-m2m-token'] === t.rec.issuedSessions[1])).to.have.length(50);
      // 101 starts in the m2m area at 20 per window: at least 5 windows of virtual time.
      expect(clock.now() - t0).to.be.at.least(5 * DEFAULT_WINDOW_MS);
    } finally {
      await slow.close();
    }
  });
});
