/**
 * Regression: a refused login is never retried. Five consecutive failed logins lock the user, so 20
 * concurrent calls with a wrong password make exactly one login attempt, all fail with one clear permanent
 * LoginError, and later calls fail at once without another attempt.
 */
import { expect } from 'chai';
import { createClient, type Client } from '../../src/api/client.js';
import { ApiError, LoginError } from '../../src/errors.js';
import { failure, FAST_RATES, Recorder } from '../helpers/recorder.js';

const ACC = '0000123456-00001';

for (const status of [400, 401]) {
  describe(`wrong password (login answered ${status})`, () => {
    let rec: Recorder;
    let client: Client;

    beforeEach(async () => {
      rec = await Recorder.start({ loginFailureStatus: status });
      client = createClient({
        baseUrl: rec.baseUrl,
        ...rec.credentials,
        password: 'not-the-password-9876',
        rates: FAST_RATES,
      });
    });
    afterEach(async () => {
      await client.close();
      await rec.close();
    });

    it('20 concurrent calls: exactly one login attempt and one clear permanent LoginError', async () => {
      const errors = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          failure(client.location.getReportStatus({ accountName: ACC, txid: `tx-${i}` })),
        ),
      );
      expect(rec.loginRequests, 'one login attempt').to.have.length(1);
      expect(rec.apiRequests(), 'no API call without a session').to.have.length(0);
      for (const e of errors) {
        expect(e).to.be.instanceOf(LoginError);
        const le = e as LoginError;
        expect(le.code).to.equal('FB_LOGIN');
        expect(le.retryClass).to.equal('permanent');
        expect(le.message).to.include('fleet-user');
        expect(le.message).to.include(`HTTP ${status}`);
        expect(le.message).to.match(/refused/);
        expect(le.message).to.match(/not retried/);
        expect(le.cause).to.be.instanceOf(ApiError);
        expect(le.toJSON()).to.deep.equal({ code: 'FB_LOGIN', message: le.message, retryClass: 'permanent' });
      }
      expect(client.stats.logins).to.equal(1);
    });

    it('a later call makes no further login attempt', async () => {
      await failure(client.location.getReportStatus({ accountName: ACC, txid: 'a' }));
      const later = await failure(
        client.devices.suspend({ accountName: ACC, devices: [{ id: '353456789012345', kind: 'imei' }] }),
      );
      const evenLater = await failure(client.session.logout({}));
      expect(later).to.be.instanceOf(LoginError);
      expect(evenLater).to.be.instanceOf(LoginError);
      expect(rec.loginRequests).to.have.length(1);
      expect(rec.apiRequests()).to.have.length(0);
    });
  });
}

describe('wrong password after an expired session', () => {
  it('the renewal login is refused: one attempt, every waiting request gets the LoginError', async () => {
    const rec = await Recorder.start();
    const client = createClient({ baseUrl: rec.baseUrl, ...rec.credentials, rates: FAST_RATES });
    try {
      await client.session.logout({});
      // The password was changed elsewhere while the session was in use.
      rec.options.password = 'changed-elsewhere-1234';
      rec.expireSessions();
      const errors = await Promise.all(
        Array.from({ length: 10 }, () => failure(client.callbacks.list({ accountName: ACC }))),
      );
      for (const e of errors) expect(e).to.be.instanceOf(LoginError);
      expect(rec.loginRequests).to.have.length(2);
      await failure(client.callbacks.list({ accountName: ACC }));
      expect(rec.loginRequests).to.have.length(2);
    } finally {
      await client.close();
      await rec.close();
    }
  });
});
