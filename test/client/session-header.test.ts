/**
 * The session token's header. The spec names it `X-M2M-Token`; the real service's published SDKs send
 * `VZ-M2M-Token` (docs/spec-decisions.md). Its name is a setting, `X-M2M-Token` by default: exactly one
 * session header goes on the wire, under the configured name.
 */
import { expect } from 'chai';
import { createClient } from '../../src/api/client.js';
import { loadConfig } from '../../src/config.js';
import { ConfigError } from '../../src/errors.js';
import { ACC } from '../helpers/action-cases.js';
import { FAST_RATES, Recorder } from '../helpers/recorder.js';

const STATUS = `/api/loc/v1/locationreports/${ACC}/report/abc/status`;

describe('the session header', () => {
  let rec: Recorder;
  before(async () => {
    // The recorder checks x-m2m-token; a renamed header is checked by the assertions below instead.
    rec = await Recorder.start({ checkSession: false });
  });
  after(() => rec.close());

  async function sessionHeadersOf(sessionHeader?: string) {
    const client = createClient({
      baseUrl: rec.baseUrl,
      ...rec.credentials,
      rates: FAST_RATES,
      ...(sessionHeader ? { sessionHeader } : {}),
    });
    try {
      rec.requests.length = 0;
      await client.location.getReportStatus({ accountName: ACC, txid: 'abc' });
      const [req] = rec.requestsTo(STATUS);
      return Object.entries(req!.headers).filter(([name]) => /m2m|session/i.test(name));
    } finally {
      await client.close();
    }
  }

  it('is X-M2M-Token by default, as the spec names it', async () => {
    expect(await sessionHeadersOf()).to.deep.equal([['x-m2m-token', rec.issuedSessions.at(-1)]]);
  });

  it('is sent under the configured name, and only under it', async () => {
    expect(await sessionHeadersOf('VZ-M2M-Token')).to.deep.equal([
      ['vz-m2m-token', rec.issuedSessions.at(-1)],
    ]);
  });

  it('refuses a name that is not an HTTP header name', () => {
    expect(() =>
      createClient({ baseUrl: rec.baseUrl, ...rec.credentials, sessionHeader: 'VZ M2M Token' }),
    ).to.throw(ConfigError, /session header/);
  });

  it('comes from FLEETBOOK_SESSION_HEADER, checked like every setting', () => {
    expect(loadConfig({}).sessionHeader).to.equal(undefined);
    expect(loadConfig({ FLEETBOOK_SESSION_HEADER: 'VZ-M2M-Token' }).sessionHeader).to.equal('VZ-M2M-Token');
    expect(() => loadConfig({ FLEETBOOK_SESSION_HEADER: 'VZ M2M' })).to.throw(
      ConfigError,
      /FLEETBOOK_SESSION_HEADER: "VZ M2M" is not valid/,
    );
  });
});
