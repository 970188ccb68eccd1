import { expect } from 'chai';
import { loadConfig, unknownVariables } from '../src/config.js';
import { ConfigError } from '../src/errors.js';
import { redact } from '../src/log.js';

describe('configuration', () => {
  it('reads FLEETBOOK_* variables with defaults, lets flags override, and freezes the result', () => {
    const c = loadConfig(
      { FLEETBOOK_API_URL: 'http://127.0.0.1:9/api', FLEETBOOK_USERNAME: 'ops', FLEETBOOK_RATE: '50' },
      { username: 'other' },
    );
    expect(c.apiUrl).to.equal('http://127.0.0.1:9/api');
    expect(c.username).to.equal('other');
    expect(c.requestsPerSecond).to.equal(50);
    expect(c.state).to.equal('./.fleetbook/state.db');
    expect(c.shutdownGrace).to.equal('10s');
    expect(loadConfig({ FLEETBOOK_SHUTDOWN_GRACE: '1m30s' }).shutdownGrace).to.equal('1m30s');
    expect(Object.isFrozen(c)).to.equal(true);
  });

  it('reports every invalid variable at once, by its name', () => {
    try {
      loadConfig({
        FLEETBOOK_API_URL: 'ftp://x',
        FLEETBOOK_RATE: '0',
        FLEETBOOK_LOG_LEVEL: 'loud',
        FLEETBOOK_SHUTDOWN_GRACE: '10 seconds',
        FLEETBOOK_RETENTION: '3 months',
      });
      expect.fail('should have thrown');
    } catch (e) {
      expect(e).to.be.instanceOf(ConfigError);
      const m = (e as Error).message;
      expect(m).to.include('FLEETBOOK_API_URL');
      expect(m).to.include('FLEETBOOK_RATE');
      expect(m).to.include('FLEETBOOK_LOG_LEVEL');
      expect(m).to.include('FLEETBOOK_SHUTDOWN_GRACE');
      expect(m).to.include('FLEETBOOK_RETENTION');
    }
  });

  it('says what is wrong with each variable in its own words, never by the member it fills', () => {
    expect(() =>
      loadConfig({
        FLEETBOOK_API_URL: 'ftp://x',
        FLEETBOOK_LISTEN: 'nope',
        FLEETBOOK_MAX_RUNS: 'many',
        FLEETBOOK_CONCURRENCY: '0',
        FLEETBOOK_DAEMON_TOKEN: 'short',
      }),
    ).to.throw(
      ConfigError,
      [
        'invalid configuration:',
        `  FLEETBOOK_API_URL: "ftp://x" is not valid: an http or https URL, the service's {base_url}`,
        '  FLEETBOOK_LISTEN: "nope" is not valid: HOST:PORT the daemon listens on, a port up to 65535 (an IPv6 host in brackets), e.g. 127.0.0.1:8787',
        '  FLEETBOOK_DAEMON_TOKEN: must NOT have fewer than 16 characters',
        '  FLEETBOOK_MAX_RUNS: must be integer',
        '  FLEETBOOK_CONCURRENCY: must be >= 1',
      ].join('\n'),
    );
  });

  it('reads FLEETBOOK_WATCH as 1/true or 0/false, on by default, and refuses anything else', () => {
    expect(loadConfig({}).watch).to.equal(true);
    for (const on of ['1', 'true', 'TRUE']) expect(loadConfig({ FLEETBOOK_WATCH: on }).watch).to.equal(true);
    for (const off of ['0', 'false', ' False '])
      expect(loadConfig({ FLEETBOOK_WATCH: off }).watch).to.equal(false);
    expect(() => loadConfig({ FLEETBOOK_WATCH: 'maybe' })).to.throw(
      ConfigError,
      'FLEETBOOK_WATCH: must be boolean',
    );
  });

  it('refuses a request timeout too short to receive a callback, naming the variable and the least', () => {
    expect(loadConfig({}).requestTimeout).to.equal('30s');
    expect(loadConfig({ FLEETBOOK_REQUEST_TIMEOUT: '1s' }).requestTimeout).to.equal('1s');
    // 0 would turn the limit off, silently.
    for (const timeout of ['0s', '999ms'])
      expect(() => loadConfig({ FLEETBOOK_REQUEST_TIMEOUT: timeout }), timeout).to.throw(
        ConfigError,
        `FLEETBOOK_REQUEST_TIMEOUT: ${JSON.stringify(timeout)} is too short: at least 1s (a callback of 1 MB needs time to arrive)`,
      );
  });

  it('refuses a lease too short to be renewed, naming the variable and the least', () => {
    expect(loadConfig({}).lease).to.equal('15s');
    expect(loadConfig({ FLEETBOOK_LEASE: '1s' }).lease).to.equal('1s');
    for (const lease of ['0s', '1ms', '999ms'])
      expect(() => loadConfig({ FLEETBOOK_LEASE: lease }), lease).to.throw(
        ConfigError,
        `FLEETBOOK_LEASE: ${JSON.stringify(lease)} is too short: at least 1s (it is renewed every third of it)`,
      );
  });

  it('takes a listen address with a port up to 65535, an IPv6 host in brackets', () => {
    for (const listen of [
      '127.0.0.1:8787',
      '0.0.0.0:0',
      ':65535',
      'fleetbook.internal:443',
      '[::1]:8787',
      '[::]:80',
    ])
      expect(loadConfig({ FLEETBOOK_LISTEN: listen }).listen, listen).to.equal(listen);
    for (const listen of [
      '127.0.0.1:65536',
      '127.0.0.1:99999',
      '::1:8787',
      '127.0.0.1',
      '127.0.0.1:',
      '[::1]8787',
    ])
      expect(() => loadConfig({ FLEETBOOK_LISTEN: listen }), listen).to.throw(
        ConfigError,
        `FLEETBOOK_LISTEN: ${JSON.stringify(listen)} is not valid: HOST:PORT`,
      );
  });

  it('names the flag that gave a wrong value, not the variable it overrides', () => {
    expect(() =>
      loadConfig(
        { FLEETBOOK_LISTEN: '127.0.0.1:8787', FLEETBOOK_API_URL: 'ftp://env' },
        { listen: '127.0.0.1:notaport' },
      ),
    ).to.throw(
      ConfigError,
      [
        'invalid configuration:',
        `  FLEETBOOK_API_URL: "ftp://env" is not valid: an http or https URL, the service's {base_url}`,
        '  --listen: "127.0.0.1:notaport" is not valid: HOST:PORT the daemon listens on, a port up to 65535 (an IPv6 host in brackets), e.g. 127.0.0.1:8787',
      ].join('\n'),
    );
    expect(() => loadConfig({}, { apiUrl: 'ftp://flag' })).to.throw(ConfigError, '  --api-url: "ftp://flag"');
  });

  it('names each FLEETBOOK_ variable nothing reads, with the closest that is read; secrets are read', () => {
    expect(
      unknownVariables({
        FLEETBOOK_RATE: '5',
        FLEETBOOK_RATES: '5',
        FLEETBOOK_CONCURENCY: '2',
        FLEETBOOK_SECRET_X: 'x',
        FLEETBOOK_NOTHING_LIKE_IT: '1',
        PATH: '/bin',
      }),
    ).to.deep.equal([
      'FLEETBOOK_CONCURENCY is set, but fleetbook reads no such variable (did you mean FLEETBOOK_CONCURRENCY?)',
      'FLEETBOOK_NOTHING_LIKE_IT is set, but fleetbook reads no such variable',
      'FLEETBOOK_RATES is set, but fleetbook reads no such variable (did you mean FLEETBOOK_RATE?)',
    ]);
  });

  it('registers the secrets it reads so that no log line can show them', () => {
    loadConfig({ FLEETBOOK_PASSWORD: 'hunter2-config-test', FLEETBOOK_CLIENT_SECRET: 'cs-config-test-42' });
    expect(redact('pw=hunter2-config-test secret=cs-config-test-42')).to.equal('pw=*** secret=***');
  });
});
