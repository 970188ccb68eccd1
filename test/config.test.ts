import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { engineSettings } from '../src/actions/settings.js';
import { loadConfig, unknownVariables } from '../src/config.js';
import { checkCredentials, checkListenerCredentials } from '../src/connect.js';
import { ConfigError } from '../src/errors.js';
import { redact } from '../src/log.js';
import { SqliteStore } from '../src/store/sqlite.js';
import { tempDir } from './helpers/temp.js';

/** The variables of docs/configuration.md's table, as its first column names them. */
function documentedVariables(): string[] {
  const doc = readFileSync(join(import.meta.dirname, '..', 'docs', 'configuration.md'), 'utf8');
  const names = new Set<string>();
  for (const line of doc.split('\n')) {
    const first = /^\| ([^|]*)\|/.exec(line)?.[1] ?? '';
    for (const m of first.matchAll(/`(FLEETBOOK_[A-Z_]+)`/g)) names.add(m[1] as string);
  }
  return [...names].sort();
}

/** The service's settings of a complete set, for the variables only checked beside them. */
const SERVICE = {
  FLEETBOOK_API_URL: 'http://127.0.0.1:9/api',
  FLEETBOOK_ACCESS_TOKEN: 'token-0001',
  FLEETBOOK_USERNAME: 'ops',
  FLEETBOOK_PASSWORD: 'password-0001',
};
/** The listener's credentials, which `serve` on a service needs. */
const LISTENER = {
  FLEETBOOK_CALLBACK_USERNAME: 'listener',
  FLEETBOOK_CALLBACK_PASSWORD: 'listener-password',
};

/**
 * Everything a start checks of the configuration before it acts, in the order `run` and `serve` check it: the
 * variables, the engine's settings, the service's credentials, the listener's.
 */
function startChecks(env: NodeJS.ProcessEnv): void {
  const config = loadConfig(env);
  engineSettings({ ...config, embedded: !config.apiUrl });
  checkCredentials(config);
  checkListenerCredentials(config);
}

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

  it('refuses a bad value of every variable configuration.md lists, naming the variable', () => {
    const dir = tempDir('fleetbook-config-');
    const aFile = join(dir, 'not-a-directory');
    writeFileSync(aFile, 'x');
    const damaged = join(dir, 'damaged.db');
    writeFileSync(damaged, randomBytes(5000));
    // Each variable's wrong value, and what it is checked by; the SERVICE ones with a complete service beside.
    const bad: Record<string, () => unknown> = {
      FLEETBOOK_API_URL: () => startChecks({ FLEETBOOK_API_URL: 'ftp://x' }),
      FLEETBOOK_CLIENT_ID: () => startChecks({ ...SERVICE, FLEETBOOK_CLIENT_ID: 'fleet:client' }),
      FLEETBOOK_CLIENT_SECRET: () =>
        startChecks({ ...SERVICE, FLEETBOOK_CLIENT_ID: 'c', FLEETBOOK_CLIENT_SECRET: 's\n' }),
      FLEETBOOK_ACCESS_TOKEN: () => startChecks({ ...SERVICE, FLEETBOOK_ACCESS_TOKEN: ' t' }),
      FLEETBOOK_USERNAME: () => startChecks({ FLEETBOOK_USERNAME: 'ops' }),
      FLEETBOOK_PASSWORD: () => startChecks({ ...SERVICE, FLEETBOOK_PASSWORD: 'password-0001\n' }),
      FLEETBOOK_SESSION_HEADER: () => startChecks({ FLEETBOOK_SESSION_HEADER: 'VZ M2M' }),
      FLEETBOOK_RATE: () => startChecks({ FLEETBOOK_RATE: 'fast' }),
      FLEETBOOK_CONCURRENCY: () => startChecks({ FLEETBOOK_CONCURRENCY: '1.5' }),
      FLEETBOOK_STATE: () => new SqliteStore(damaged).close(),
      FLEETBOOK_LEASE: () => startChecks({ FLEETBOOK_LEASE: '500ms' }),
      FLEETBOOK_RETENTION: () => startChecks({ FLEETBOOK_RETENTION: '3 months' }),
      FLEETBOOK_LISTEN: () => startChecks({ FLEETBOOK_LISTEN: '127.0.0.1:65536' }),
      // A secret file's newline: the listener would be registered with it, and every callback refused.
      FLEETBOOK_CALLBACK_USERNAME: () =>
        startChecks({ ...SERVICE, ...LISTENER, FLEETBOOK_CALLBACK_USERNAME: 'listener\n' }),
      FLEETBOOK_CALLBACK_PASSWORD: () =>
        startChecks({ ...SERVICE, ...LISTENER, FLEETBOOK_CALLBACK_PASSWORD: ' listener-password' }),
      // A secret file's newline: the senders sign with the key as they were given it.
      FLEETBOOK_CALLBACK_SECRET: () => startChecks({ FLEETBOOK_CALLBACK_SECRET: 'shared-key\n' }),
      FLEETBOOK_CALLBACK_URL: () => startChecks({ FLEETBOOK_CALLBACK_URL: 'ftp://x' }),
      // Commas alone: no account to register for, which would register the listener for none.
      FLEETBOOK_CALLBACK_ACCOUNTS: () => startChecks({ FLEETBOOK_CALLBACK_ACCOUNTS: ' , ' }),
      FLEETBOOK_DAEMON_TOKEN: () => startChecks({ FLEETBOOK_DAEMON_TOKEN: 'short' }),
      FLEETBOOK_CONSOLE_TOKEN: () => startChecks({ FLEETBOOK_CONSOLE_TOKEN: 'short' }),
      FLEETBOOK_MAX_RUNS: () => startChecks({ FLEETBOOK_MAX_RUNS: '0' }),
      FLEETBOOK_INBOX_LIMIT: () => startChecks({ FLEETBOOK_INBOX_LIMIT: 'lots' }),
      FLEETBOOK_CALLBACK_FAILURE_LIMIT: () => startChecks({ FLEETBOOK_CALLBACK_FAILURE_LIMIT: '-1' }),
      FLEETBOOK_CALLBACK_FAILURE_WINDOW: () => startChecks({ FLEETBOOK_CALLBACK_FAILURE_WINDOW: 'a minute' }),
      FLEETBOOK_CALLBACK_PENDING_BYTES: () => startChecks({ FLEETBOOK_CALLBACK_PENDING_BYTES: '1000' }),
      FLEETBOOK_REQUEST_TIMEOUT: () => startChecks({ FLEETBOOK_REQUEST_TIMEOUT: '0s' }),
      FLEETBOOK_SHUTDOWN_GRACE: () => startChecks({ FLEETBOOK_SHUTDOWN_GRACE: '10 seconds' }),
      FLEETBOOK_WATCH: () => startChecks({ FLEETBOOK_WATCH: 'maybe' }),
      // A file where the directory should be: every report.write would fail, after the steps before it acted.
      FLEETBOOK_REPORTS_DIR: () => startChecks({ FLEETBOOK_REPORTS_DIR: aFile }),
      FLEETBOOK_WEBHOOK_ALLOW: () => startChecks({ FLEETBOOK_WEBHOOK_ALLOW: '10.0.0.0/33' }),
      FLEETBOOK_EMULATOR_WEBHOOKS: () => startChecks({ FLEETBOOK_EMULATOR_WEBHOOKS: 'yes' }),
      FLEETBOOK_EXPRESSION_BUDGET: () => startChecks({ FLEETBOOK_EXPRESSION_BUDGET: '10' }),
      FLEETBOOK_LOG_LEVEL: () => startChecks({ FLEETBOOK_LOG_LEVEL: 'loud' }),
    };
    expect(Object.keys(bad).sort(), 'a case for each documented variable').to.deep.equal(
      documentedVariables(),
    );
    const accepted: string[] = [];
    for (const [name, attempt] of Object.entries(bad)) {
      try {
        attempt();
        accepted.push(name);
      } catch (e) {
        expect(e, name).to.have.property('code', 'FB_CONFIG');
        expect((e as Error).message, name).to.include(name);
      }
    }
    expect(accepted, 'taken without a word').to.deep.equal([]);
  });

  it('refuses listener credentials with white space at either end, and names the one missing', () => {
    expect(() => startChecks({ ...SERVICE, ...LISTENER })).to.not.throw();
    for (const [name, value] of [
      ['FLEETBOOK_CALLBACK_USERNAME', 'listener\n'],
      ['FLEETBOOK_CALLBACK_PASSWORD', ' listener-password'],
    ] as const) {
      expect(() => loadConfig({ ...SERVICE, ...LISTENER, [name]: value }), name).to.throw(
        ConfigError,
        `${name}: begins or ends with white space, which the listener would be registered with`,
      );
      // The same on the embedded emulator: its listener is registered with what it is given too.
      expect(() => loadConfig({ ...LISTENER, [name]: value }), name).to.throw(ConfigError, name);
    }
    const refusal = (env: NodeJS.ProcessEnv) => {
      try {
        startChecks(env);
        return 'taken';
      } catch (e) {
        return (e as Error).message;
      }
    };
    const why = 'the listener is registered with both, and refuses callbacks without them';
    expect({
      password: refusal({ ...SERVICE, FLEETBOOK_CALLBACK_USERNAME: 'listener' }),
      username: refusal({ ...SERVICE, FLEETBOOK_CALLBACK_PASSWORD: 'listener-password' }),
      both: refusal(SERVICE),
    }).to.deep.equal({
      password: `FLEETBOOK_CALLBACK_PASSWORD is not set, but FLEETBOOK_CALLBACK_USERNAME is: set it (with FLEETBOOK_API_URL, ${why})`,
      username: `FLEETBOOK_CALLBACK_USERNAME is not set, but FLEETBOOK_CALLBACK_PASSWORD is: set it (with FLEETBOOK_API_URL, ${why})`,
      both: `FLEETBOOK_CALLBACK_USERNAME and FLEETBOOK_CALLBACK_PASSWORD are required with FLEETBOOK_API_URL: ${why}`,
    });
  });

  it('takes a FLEETBOOK_CALLBACK_URL whose path only has /callbacks in it, as a proxy prefix', () => {
    for (const url of [
      'https://gw.example.com/callbacks/fleetbook',
      'https://gw.example.com/fleetbook-callbacks',
      'https://gw.example.com/callbacks-prod/',
    ])
      expect(loadConfig({ FLEETBOOK_CALLBACK_URL: url }).callbackUrl).to.equal(url);
    expect(() =>
      loadConfig({ FLEETBOOK_CALLBACK_URL: 'https://gw.example.com/callbacks/deviceusage/' }),
    ).to.throw(ConfigError, "FLEETBOOK_CALLBACK_URL: ends in /callbacks, the listener's route");
  });

  it('says why callback accounts, the callback key and the reports directory are refused', () => {
    expect(() => loadConfig({ FLEETBOOK_CALLBACK_ACCOUNTS: ' , ' })).to.throw(
      ConfigError,
      'FLEETBOOK_CALLBACK_ACCOUNTS: names no account: give them comma-separated, e.g. 0000123456-00001,0000123456-00002',
    );
    expect(
      loadConfig({ FLEETBOOK_CALLBACK_ACCOUNTS: '0000123456-00001, 0000123456-00002,' }).callbackAccounts,
    ).to.deep.equal(['0000123456-00001', '0000123456-00002']);
    // Commas alone allow nothing, as if unset: said, as for the accounts.
    expect(() => loadConfig({ FLEETBOOK_WEBHOOK_ALLOW: ' , ' })).to.throw(
      ConfigError,
      'FLEETBOOK_WEBHOOK_ALLOW: names no host: give host names, addresses or CIDR ranges comma-separated, e.g. hooks.internal.example,10.20.0.0/16',
    );
    expect(
      loadConfig({ FLEETBOOK_WEBHOOK_ALLOW: 'hooks.internal.example, 10.20.0.0/16,' }).webhookAllow,
    ).to.deep.equal(['hooks.internal.example', '10.20.0.0/16']);
    expect(() => loadConfig({ FLEETBOOK_CALLBACK_SECRET: ' shared-key' })).to.throw(
      ConfigError,
      'FLEETBOOK_CALLBACK_SECRET: begins or ends with white space, which the senders would have to sign with',
    );
    const dir = tempDir('fleetbook-config-');
    const aFile = join(dir, 'reports');
    writeFileSync(aFile, 'x');
    expect(() => engineSettings({ reportsDir: aFile })).to.throw(
      ConfigError,
      `FLEETBOOK_REPORTS_DIR: ${aFile} is not a directory`,
    );
    // Not there yet: the first report.write makes it.
    expect(engineSettings({ reportsDir: join(dir, 'new', 'reports') }).reportsDir).to.equal(
      join(dir, 'new', 'reports'),
    );
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
