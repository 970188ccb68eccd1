/**
 * Which names are a secret's (src/util/secrets.ts SECRET_KEY): a name holds the word password, token, secret...,
 * as camelCase, snake_case or kebab-case spell words, not those letters inside another word. `passengerCount` and
 * `bypassCache` were masked, as inputs and report columns, and shown as password fields on the console.
 */
import { expect } from 'chai';
import { MASK, redactRun, redactValue, SECRET_KEY } from '../../src/util/secrets.js';

const SECRET = [
  'password',
  'Password',
  'PASSWORD',
  'adminPassword',
  'admin_password',
  'ADMIN_PASSWORD',
  'db-pass',
  'dbPass',
  'passwd',
  'passphrase',
  'passwordHash',
  'apiKey',
  'ApiKey',
  'APIKey',
  'apikey',
  'APIKEY',
  'api_key',
  'API_KEY',
  'x-api-key',
  'xApiKey',
  'apiKeys',
  'clientSecret',
  'client_secret',
  'CLIENT_SECRET',
  'secrets',
  'token',
  'accessToken',
  'refresh_token',
  'tokens',
  'bearerTOKEN',
  'Authorization',
  'proxyAuthorization',
  'credential',
  'credentials',
  'awsCredentials',
];

const NOT_SECRET = [
  'passengerCount',
  'passenger_count',
  'bypassCache',
  'BYPASS_CACHE',
  'passport',
  'compass',
  'tokenizer',
  'secretary',
  'keyboard',
  'monkey',
  'sortKey',
  'apiVersion',
  'rapidKey',
  'account',
  'enabled',
];

describe('the names of secrets', () => {
  it('are those holding a secret word whole, as camelCase, snake_case or kebab-case name words', () => {
    expect(
      SECRET.filter((name) => !SECRET_KEY.test(name)),
      'names not taken for a secret',
    ).to.deep.equal([]);
    expect(
      NOT_SECRET.filter((name) => SECRET_KEY.test(name)),
      'names taken for a secret',
    ).to.deep.equal([]);
  });

  it('mask what they name but a boolean, which hides nothing, as a run and a report show it', () => {
    expect(
      redactValue({
        passengerCount: 3,
        bypassCache: 'yes',
        apiKey: 'k-0123456789',
        pin: { token: 1234 },
        requirePassword: true,
        useToken: false,
        password: '',
        secret: null,
      }),
    ).to.deep.equal({
      passengerCount: 3,
      bypassCache: 'yes',
      apiKey: MASK,
      pin: { token: MASK },
      requirePassword: true,
      useToken: false,
      password: '',
      secret: null,
    });
  });

  it("mask a run's inputs and event, the one way every run history shows a run", () => {
    const run = {
      id: 'r1',
      status: 'running',
      inputs: { account: 'a1', webhookToken: 'typed-token-0123' },
      event: { service: 'DeviceUsage', auth: { clientSecret: 'event-secret-0123' } },
    };
    expect(redactRun(run)).to.deep.equal({
      id: 'r1',
      status: 'running',
      inputs: { account: 'a1', webhookToken: MASK },
      event: { service: 'DeviceUsage', auth: { clientSecret: MASK } },
    });
    expect(redactRun({ id: 'r2', inputs: {} }), 'a run no event started').to.deep.equal({
      id: 'r2',
      inputs: {},
    });
  });
});
