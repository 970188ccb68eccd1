/**
 * Secrets never appear in a log line or an error message: a failing run (a wrong password, then calls that
 * fail and are retried, a session that expires) logged at debug level as JSON, and every thrown error's
 * message and `toJSON()`, are searched for the password, the client secret, the Basic header value, the
 * bearer token and the session token.
 */
import { PassThrough } from 'node:stream';
import { expect } from 'chai';
import { createClient, type Client } from '../../src/api/client.js';
import { VirtualClock } from '../../src/clock.js';
import { FleetbookError } from '../../src/errors.js';
import { createLogger } from '../../src/log.js';
import { failure, FAST_RATES, Recorder, SESSION_EXPIRED } from '../helpers/recorder.js';

const ACC = '0000123456-00001';
const SECRETS = {
  clientSecret: 'cs-5f1e0c9a7b3d4e2f8a6b',
  password: 'pw-Correct-Horse-Battery-7731',
  wrongPassword: 'pw-Wrong-Staple-0042',
  bearer: 'bt-9d8c7b6a5f4e3d2c1b0a',
  session: 'st-0a1b2c3d4e5f6a7b8c9d',
  session2: 'st-ffeeddccbbaa99887766',
};
const basic = Buffer.from(`fleet-client:${SECRETS.clientSecret}`).toString('base64');

function capture() {
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c.toString('utf8')));
  return { stream, text: () => chunks.join('') };
}

/** Every form of an error a user or a log could see: message, JSON, the cause chain, the stack. */
function errorTexts(e: unknown): string[] {
  // Not an error (nothing was thrown), it would show nothing, and be clean for no reason.
  expect(e, 'an error').to.be.instanceOf(Error);
  const out: string[] = [];
  let cur: unknown = e;
  for (let depth = 0; cur instanceof Error && depth < 5; depth++) {
    out.push(cur.message, String(cur.stack), JSON.stringify(cur));
    if (cur instanceof FleetbookError) out.push(JSON.stringify(cur.toJSON()));
    cur = cur.cause;
  }
  return out;
}

function assertClean(texts: string[], where: string) {
  const all = texts.join('\n');
  const leaked = Object.entries({ ...SECRETS, basic }).filter(([, value]) => all.includes(value));
  expect(
    leaked.map(([name]) => name),
    `secrets found in ${where}:\n${all}`,
  ).to.deep.equal([]);
}

describe('redaction of secrets', () => {
  let rec: Recorder;
  const clients: Client[] = [];

  beforeEach(async () => {
    rec = await Recorder.start({
      clientId: 'fleet-client',
      clientSecret: SECRETS.clientSecret,
      password: SECRETS.password,
      // Sessions come from the login handler below, not from the recorder's own.
      checkSession: false,
    });
    // Secret-looking tokens, so that a leak cannot hide behind a common word.
    rec.handle('POST /api/ts/v1/oauth2/token', (r) =>
      r.headers.authorization === `Basic ${basic}`
        ? { status: 200, body: { access_token: SECRETS.bearer, token_type: 'Bearer', expires_in: 3600 } }
        : { status: 401, body: { error: 'invalid_client', error_description: 'bad client' } },
    );
    let logins = 0;
    rec.handle('POST /api/m2m/v1/session/login', (r) => {
      const b = r.body as { password?: string };
      if (b.password !== SECRETS.password)
        return {
          status: 401,
          body: { errorCode: 'INVALID_ACCESS', errorMessage: 'Invalid username or password' },
        };
      logins++;
      return { status: 200, body: { sessionToken: logins === 1 ? SECRETS.session : SECRETS.session2 } };
    });
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close();
    await rec.close();
  });

  it('a failing run logged at debug level as JSON shows no secret, nor do its errors', async () => {
    const log = capture();
    const logger = createLogger({ stream: log.stream, level: 'debug', format: 'json' });
    const clock = new VirtualClock();
    const errors: unknown[] = [];

    // 1. A wrong password.
    const wrong = createClient({
      baseUrl: rec.baseUrl,
      ...rec.credentials,
      password: SECRETS.wrongPassword,
      logger,
      clock,
      rates: FAST_RATES,
    });
    clients.push(wrong);
    errors.push(await failure(wrong.callbacks.list({ accountName: ACC })));
    errors.push(await failure(wrong.callbacks.list({ accountName: ACC })));

    // 2. The right password, then a session that expires and calls that fail, are retried, and fail again.
    const right = createClient({
      baseUrl: rec.baseUrl,
      ...rec.credentials,
      logger,
      clock,
      rates: FAST_RATES,
    });
    clients.push(right);
    await right.callbacks.list({ accountName: ACC });
    rec.enqueue(`GET /api/m2m/v1/callbacks/${ACC}`, { status: 400, body: SESSION_EXPIRED });
    await right.callbacks.list({ accountName: ACC });
    rec.handle('POST /api/loc/v1/locations', {
      status: 500,
      body: { errorCode: 'INTERNAL_ERROR', errorMessage: 'Internal system error' },
    });
    errors.push(
      await failure(
        right.location.locate({ accountName: ACC, deviceList: [{ id: '353456789012345', kind: 'imei' }] }),
      ),
    );
    rec.enqueue('POST /api/m2m/v1/devices/actions/suspend', { destroy: true });
    errors.push(
      await failure(
        right.devices.suspend({ accountName: ACC, devices: [{ id: '353456789012345', kind: 'imei' }] }),
      ),
    );
    rec.handle(`GET /api/m2m/v1/callbacks/${ACC}`, {
      status: 401,
      body: { errorCode: 'INVALID_ACCESS', errorMessage: 'denied' },
    });
    errors.push(await failure(right.callbacks.list({ accountName: ACC })));

    // Let winston flush.
    await new Promise((r) => setImmediate(r));
    const output = log.text();

    // The secrets were really in play: sent on the wire.
    const wire = rec.requests.map((r) => `${JSON.stringify(r.headers)} ${r.rawBody}`).join('\n');
    for (const v of [
      SECRETS.password,
      SECRETS.wrongPassword,
      SECRETS.bearer,
      SECRETS.session,
      SECRETS.session2,
      basic,
    ])
      expect(wire).to.include(v);
    // The log is not empty: the run was logged, at debug level, as JSON lines.
    const lines = output.trim().split('\n');
    for (const l of lines) expect(() => JSON.parse(l) as unknown).to.not.throw();
    expect(output).to.include('api call');
    expect(output).to.include('retrying API call');
    expect(output).to.include('session expired');
    expect(errors).to.have.length(5);

    assertClean([output], 'the log output');
    for (const e of errors) assertClean(errorTexts(e), `the error ${String(e)}`);
  });

  it('a secret the service echoes back in an error body is not shown in the error or the log', async () => {
    const log = capture();
    const logger = createLogger({ stream: log.stream, level: 'debug', format: 'json' });
    const client = createClient({
      baseUrl: rec.baseUrl,
      ...rec.credentials,
      logger,
      rates: FAST_RATES,
      retry: { maxAttempts: 2 },
      clock: new VirtualClock(),
    });
    clients.push(client);
    await client.callbacks.list({ accountName: ACC });
    // Services do quote what they got: "token X is not valid".
    rec.enqueue(
      `GET /api/m2m/v1/callbacks/${ACC}`,
      {
        status: 503,
        body: { errorCode: 'UNAVAILABLE', errorMessage: `session ${SECRETS.session} could not be verified` },
      },
      {
        status: 403,
        body: {
          error: 'invalid_token',
          error_description: `Bearer ${SECRETS.bearer} rejected`,
          cause: `password ${SECRETS.password}`,
        },
      },
    );
    const e = await failure(client.callbacks.list({ accountName: ACC }));
    await new Promise((r) => setImmediate(r));
    assertClean([log.text()], 'the log output');
    assertClean(errorTexts(e), 'the thrown error');
  });
});
