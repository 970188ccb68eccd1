/**
 * Every error body shape of spec section 7 (and the SDKs' `errorUrl`, opaque text or HTML, an empty body)
 * becomes one ApiError with status, apiCode, apiMessage, shape, action and retry class, and `toJSON()` is the
 * form `fleetbook call` prints. Classification: 429 and 5xx retryable, the expired session `session`, other
 * 4xx permanent, INTERNAL_ERROR "Failed to get location" retryable.
 */
import { expect } from 'chai';
import { createClient, type Client } from '../../src/api/client.js';
import { VirtualClock } from '../../src/clock.js';
import { ApiError, classifyApiError } from '../../src/errors.js';
import { FAST_RATES, Recorder, SESSION_EXPIRED, type ScriptedResponse } from '../helpers/recorder.js';

const ACC = '0000123456-00001';
const PATH = `/api/loc/v1/locationreports/${ACC}/report/tx/status`;
const ACTION = 'location.getReportStatus';

interface Case {
  name: string;
  answer: ScriptedResponse;
  expected: Partial<Record<keyof ApiError, unknown>>;
  json: Record<string, unknown>;
}

const CASES: Case[] = [
  {
    name: '{ errorCode, errorMessage }',
    answer: { status: 400, body: { errorCode: 'INVALID_PARAMETER', errorMessage: 'Device not found' } },
    expected: {
      status: 400,
      apiCode: 'INVALID_PARAMETER',
      apiMessage: 'Device not found',
      shape: 'errorCode',
    },
    json: {
      status: 400,
      code: 'INVALID_PARAMETER',
      message: 'Device not found',
      action: ACTION,
      retryClass: 'permanent',
      shape: 'errorCode',
    },
  },
  {
    name: '{ errorCode, errorMessage, errorUrl }',
    answer: {
      status: 404,
      body: {
        errorCode: 'NOT_FOUND',
        errorMessage: 'No such report',
        errorUrl: 'https://docs.example.com/e/404',
      },
    },
    expected: {
      status: 404,
      apiCode: 'NOT_FOUND',
      apiMessage: 'No such report',
      shape: 'errorCode',
      errorUrl: 'https://docs.example.com/e/404',
    },
    json: {
      status: 404,
      code: 'NOT_FOUND',
      message: 'No such report',
      action: ACTION,
      retryClass: 'permanent',
      shape: 'errorCode',
      errorUrl: 'https://docs.example.com/e/404',
    },
  },
  {
    name: '{ error, error_description }',
    answer: { status: 403, body: { error: 'forbidden', error_description: 'No access to the profile' } },
    expected: { status: 403, apiCode: 'forbidden', apiMessage: 'No access to the profile', shape: 'error' },
    json: {
      status: 403,
      code: 'forbidden',
      message: 'No access to the profile',
      action: ACTION,
      retryClass: 'permanent',
      shape: 'error',
    },
  },
  {
    name: '{ error, error_description, cause }',
    answer: {
      status: 400,
      body: {
        error: 'bad_request',
        error_description: 'Invalid filter',
        cause: '$limitnumber must be positive',
      },
    },
    expected: {
      status: 400,
      apiCode: 'bad_request',
      apiMessage: 'Invalid filter',
      shape: 'error+cause',
      apiCause: '$limitnumber must be positive',
    },
    json: {
      status: 400,
      code: 'bad_request',
      message: 'Invalid filter',
      action: ACTION,
      retryClass: 'permanent',
      shape: 'error+cause',
      cause: '$limitnumber must be positive',
    },
  },
  {
    name: 'opaque text',
    answer: { status: 502, headers: { 'content-type': 'text/plain' }, body: 'upstream connect error' },
    expected: { status: 502, apiCode: 'HTTP_502', apiMessage: 'upstream connect error', shape: 'opaque' },
    json: {
      status: 502,
      code: 'HTTP_502',
      message: 'upstream connect error',
      action: ACTION,
      retryClass: 'retryable',
      shape: 'opaque',
    },
  },
  {
    name: 'opaque HTML',
    answer: {
      status: 503,
      headers: { 'content-type': 'text/html' },
      body: '<html><body><h1>503 Service Unavailable</h1></body></html>',
    },
    expected: {
      status: 503,
      apiCode: 'HTTP_503',
      apiMessage: '<html><body><h1>503 Service Unavailable</h1></body></html>',
      shape: 'opaque',
    },
    json: {
      status: 503,
      code: 'HTTP_503',
      message: '<html><body><h1>503 Service Unavailable</h1></body></html>',
      action: ACTION,
      retryClass: 'retryable',
      shape: 'opaque',
    },
  },
  {
    name: 'JSON of none of the shapes',
    answer: { status: 409, body: { reason: 'conflict' } },
    expected: { status: 409, apiCode: 'HTTP_409', apiMessage: '{"reason":"conflict"}', shape: 'opaque' },
    json: {
      status: 409,
      code: 'HTTP_409',
      message: '{"reason":"conflict"}',
      action: ACTION,
      retryClass: 'permanent',
      shape: 'opaque',
    },
  },
  {
    name: 'an empty body',
    answer: { status: 500 },
    expected: { status: 500, apiCode: 'HTTP_500', apiMessage: 'HTTP 500', shape: 'opaque' },
    json: {
      status: 500,
      code: 'HTTP_500',
      message: 'HTTP 500',
      action: ACTION,
      retryClass: 'retryable',
      shape: 'opaque',
    },
  },
  {
    name: 'errorCode as the 3-digit HTTP status (a number)',
    answer: { status: 400, body: { errorCode: 400, errorMessage: 'Invalid cache mode' } },
    expected: { status: 400, apiCode: '400', apiMessage: 'Invalid cache mode', shape: 'errorCode' },
    json: {
      status: 400,
      code: '400',
      message: 'Invalid cache mode',
      action: ACTION,
      retryClass: 'permanent',
      shape: 'errorCode',
    },
  },
];

describe('error bodies become one ApiError', () => {
  let rec: Recorder;
  let client: Client;

  before(async () => {
    rec = await Recorder.start();
    client = createClient({
      baseUrl: rec.baseUrl,
      ...rec.credentials,
      rates: FAST_RATES,
      retry: { maxAttempts: 1 },
      // A 429 pauses the area: on a virtual clock, nothing waits for real.
      clock: new VirtualClock(),
    });
  });
  after(async () => {
    await client.close();
    await rec.close();
  });

  async function errorFor(answer: ScriptedResponse): Promise<ApiError> {
    rec.enqueue(`GET ${PATH}`, answer);
    try {
      await client.location.getReportStatus({ accountName: ACC, txid: 'tx' });
    } catch (e) {
      expect(e).to.be.instanceOf(ApiError);
      return e as ApiError;
    }
    throw new Error('expected an ApiError');
  }

  for (const c of CASES) {
    it(c.name, async () => {
      const e = await errorFor(c.answer);
      expect(e.code).to.equal('FB_API');
      expect(e.action).to.equal(ACTION);
      for (const [k, v] of Object.entries(c.expected)) expect(e[k as keyof ApiError], k).to.deep.equal(v);
      expect(e.retryClass).to.equal(c.json.retryClass);
      expect(e.toJSON()).to.deep.equal(c.json);
      expect(JSON.parse(JSON.stringify(e))).to.deep.equal(c.json);
      expect(e.message).to.equal(
        `${ACTION}: HTTP ${c.json.status} ${String(c.json.code)}: ${String(c.json.message)}`,
      );
    });
  }

  it('a 2xx answer that is not JSON (a proxy sign-in page) fails the call, permanent, not its result', async () => {
    const e = await errorFor({
      status: 200,
      headers: { 'content-type': 'text/html' },
      body: '<html><body>Sign in to the proxy</body></html>',
    });
    expect(e).to.include({ status: 200, apiCode: 'HTTP_200', shape: 'opaque', retryClass: 'permanent' });
    expect(e.apiMessage).to.equal(
      "the answer is not JSON (text/html), so not the service's: <html><body>Sign in to the proxy</body></html>",
    );
    // An empty 2xx body stays a result (spec: some answers have none).
    rec.enqueue(`GET ${PATH}`, { status: 200 });
    expect(await client.location.getReportStatus({ accountName: ACC, txid: 'tx' })).to.equal(null);
  });

  it('a long opaque body is cut to 500 characters in the message', async () => {
    const e = await errorFor({ status: 400, body: 'x'.repeat(5_000) });
    expect(e.apiMessage).to.have.length(500);
  });

  it('Retry-After on an error is kept in ms', async () => {
    const e = await errorFor({
      status: 503,
      headers: { 'retry-after': '7' },
      body: { errorCode: 'X', errorMessage: 'y' },
    });
    expect(e.retryAfterMs).to.equal(7_000);
  });

  describe('classification', () => {
    const cases: [ScriptedResponse, string][] = [
      [
        { status: 429, body: { errorCode: 'TOO_MANY_REQUESTS', errorMessage: 'Too many requests' } },
        'retryable',
      ],
      [
        { status: 500, body: { errorCode: 'INTERNAL_ERROR', errorMessage: 'Internal system error' } },
        'retryable',
      ],
      [{ status: 502, body: 'Bad gateway' }, 'retryable'],
      [{ status: 503, body: { error: 'unavailable', error_description: 'down' } }, 'retryable'],
      [{ status: 504 }, 'retryable'],
      [
        { status: 400, body: { errorCode: 'INTERNAL_ERROR', errorMessage: 'Failed to get location' } },
        'retryable',
      ],
      [
        { status: 500, body: { errorCode: 'INTERNAL_ERROR', errorMessage: 'Failed to get location' } },
        'retryable',
      ],
      [
        { status: 400, body: { errorCode: 'INTERNAL_ERROR', errorMessage: 'Fail to verify device' } },
        'permanent',
      ],
      [{ status: 400, body: { errorCode: 'INVALID_PARAMETER', errorMessage: 'Invalid JSON' } }, 'permanent'],
      [
        {
          status: 400,
          body: {
            errorCode: 'CACHE_UNAVAILABLE',
            errorMessage: 'Location cache has no data for this device',
          },
        },
        'permanent',
      ],
      [
        {
          status: 401,
          body: {
            errorCode: 'INVALID_ACCESS',
            errorMessage: 'The access policy denied the resource operation for this user',
          },
        },
        'permanent',
      ],
      [{ status: 404, body: 'Not Found' }, 'permanent'],
      [{ status: 400, body: SESSION_EXPIRED }, 'session'],
    ];
    for (const [answer, expected] of cases) {
      const label =
        typeof answer.body === 'object' ? JSON.stringify(answer.body) : String(answer.body ?? '(empty)');
      it(`${answer.status} ${label} → ${expected}`, async () => {
        // The expired session is replayed once after a new login, and thrown when it comes back again.
        if (expected === 'session') rec.enqueue(`GET ${PATH}`, answer);
        const e = await errorFor(answer);
        expect(e.retryClass).to.equal(expected);
        expect(e.status).to.equal(answer.status);
      });
    }

    it('classifyApiError agrees for the same inputs', () => {
      expect(classifyApiError(429, 'X', 'y')).to.equal('retryable');
      expect(classifyApiError(599, 'X', 'y')).to.equal('retryable');
      expect(classifyApiError(400, 'INVALID_PARAMETER', SESSION_EXPIRED.errorMessage)).to.equal('session');
      expect(classifyApiError(400, 'INTERNAL_ERROR', 'Failed to get location')).to.equal('retryable');
      expect(classifyApiError(400, 'INVALID_PARAMETER', 'Failed to get location')).to.equal('permanent');
      expect(classifyApiError(403, 'X', 'y')).to.equal('permanent');
    });
  });
});
