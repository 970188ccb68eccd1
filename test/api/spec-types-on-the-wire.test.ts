/**
 * What the client sends and how it reads the answer, where the spec gives a type or a shape, against a recording
 * server on loopback.
 *
 * - Spec 2.7: a `resourceidentifier`'s `imei`, `esn` and `imsi` are integers. The client took them as text
 *   (what people paste) and sent the text.
 * - Spec 7: "the location pages describe errorCode as the 3-digit HTTP status". A 400 "Failed to get location"
 *   (7.1 INTERNAL_ERROR, retry) so coded was a permanent error, and a 401 "The access policy denied …" (7.1
 *   INVALID_ACCESS) made the client throw away its bearer token and send the call again.
 */
import { expect } from 'chai';
import { createClient, type Client } from '../../src/api/client.js';
import { ApiError } from '../../src/errors.js';
import { FAST_RATES, Recorder, TOKEN_PATH } from '../helpers/recorder.js';

type Json = Record<string, unknown>;
const ACC = '0000123456-00001';
const QUERY = '/api/dm/v1/devices/sensors/actions/query';
const SET = '/api/dm/v1/devices/actions/set';
const LOCATE = '/api/loc/v1/locations';

describe('the client: spec types and error codes on the wire', () => {
  let rec: Recorder;
  let client: Client;
  before(async () => {
    rec = await Recorder.start();
    client = createClient({
      baseUrl: rec.baseUrl,
      ...rec.credentials,
      rates: FAST_RATES,
      retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1 },
    });
  });
  after(async () => {
    await client.close();
    await rec.close();
  });
  beforeEach(() => {
    rec.requests.length = 0;
  });

  const sent = (path: string) => rec.requestsTo(path).map((r) => r.body as Json);

  it('sends a resourceidentifier imei, esn and imsi as integers (spec 2.7), given as text or as numbers', async () => {
    rec.enqueue(`POST ${QUERY}`, { body: { id: 'x', billingaccountid: ACC } });
    await client.callByName('sensors.query', {
      accountname: ACC,
      resourceidentifier: { imei: '355787330379846', esn: '2163549654', imsi: '311480065187628' },
    });
    rec.enqueue(`POST ${SET}`, { body: { actionresult: [] } });
    await client.callByName('sensors.setConfiguration', {
      accountname: ACC,
      resourceidentifier: { imei: 355787330379846 },
      configuration: { deviceConfig: { ble: { reportPeriod: 60 } } },
    });
    expect(sent(QUERY)[0]!.resourceidentifier).to.deep.equal({
      imei: 355787330379846,
      esn: 2163549654,
      imsi: 311480065187628,
    });
    expect(rec.requestsTo(QUERY)[0]!.rawBody).to.include('"imei":355787330379846');
    expect(sent(SET)[0]!.resourceidentifier).to.deep.equal({ imei: 355787330379846 });
  });

  it('keeps as text an identifier a number would change: a leading zero, or past 2^53', async () => {
    rec.enqueue(`POST ${QUERY}`, { body: { id: 'x', billingaccountid: ACC } });
    await client.callByName('sensors.query', {
      accountname: ACC,
      // A test network's IMSI (MCC 001) and an IMEI of reporting body 01: as numbers they would lose a digit.
      resourceidentifier: { imei: '012345678901238', imsi: '001010123456789', esn: '90071992547409930' },
    });
    expect(sent(QUERY)[0]!.resourceidentifier).to.deep.equal({
      imei: '012345678901238',
      imsi: '001010123456789',
      esn: '90071992547409930',
    });
  });

  it('retries a 400 "Failed to get location" whose errorCode is the HTTP status', async () => {
    rec.enqueue(
      `POST ${LOCATE}`,
      { status: 400, body: { errorCode: '400', errorMessage: 'Failed to get location' } },
      { body: [] },
    );
    const out = await client.callByName('location.locate', {
      accountName: ACC,
      deviceList: [{ id: '355787330379846', kind: 'imei' }],
    });
    expect(out).to.deep.equal([]);
    expect(rec.requestsTo(LOCATE)).to.have.length(2);
  });

  it('keeps its bearer token on a 401 INVALID_ACCESS whose errorCode is the HTTP status', async () => {
    await client.callByName('location.getReportStatus', { accountName: ACC, txid: 'warm' }).catch(() => {});
    rec.requests.length = 0;
    rec.enqueue(`GET /api/loc/v1/locationreports/${ACC}/report/tx/status`, {
      status: 401,
      body: { errorCode: 401, errorMessage: 'The access policy denied the resource operation for this user' },
    });
    const e = await client.callByName('location.getReportStatus', { accountName: ACC, txid: 'tx' }).then(
      () => expect.fail('answered'),
      (x: unknown) => x,
    );
    expect(e).to.be.instanceOf(ApiError);
    expect((e as ApiError).retryClass).to.equal('permanent');
    expect(rec.requestsTo(`/api/loc/v1/locationreports/${ACC}/report/tx/status`)).to.have.length(1);
    expect(rec.requestsTo(TOKEN_PATH)).to.have.length(0);
  });
});
