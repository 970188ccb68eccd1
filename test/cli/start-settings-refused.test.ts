/**
 * Settings that `serve` (and `run`) took without a word, and that then did nothing or the wrong thing, are refused
 * at start, exit 2, naming the variable and what to give (child processes; dist/ must be built):
 *
 * - FLEETBOOK_CALLBACK_URL ending in the listener's route (`https://host/callbacks`): registered as
 *   `https://host/callbacks/callbacks/DeviceUsage`, which the daemon answers 404, so that every callback was lost;
 * - FLEETBOOK_CALLBACK_ACCOUNTS naming an account that is no account name: its registrations failed at every
 *   attempt, tried again every 10 minutes for ever;
 * - FLEETBOOK_STATE a URL of another scheme than PostgreSQL's (`postgress://...`): taken for a file path, a SQLite
 *   file made under a folder named `postgress:`, and the runs recorded there;
 * - FLEETBOOK_RETENTION of nothing (`0d`): `serve` kept everything, as if it were unset.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { fleetbook } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const PLAYBOOK = join(import.meta.dirname, '..', '..', 'playbooks', 'sync-location-exclusions.yaml');

/** A service no one answers at, and the listener's settings a daemon on it needs: nothing is sent before the check. */
const ON_SERVICE = {
  FLEETBOOK_API_URL: 'http://127.0.0.1:9/api',
  FLEETBOOK_ACCESS_TOKEN: 'token-0001',
  FLEETBOOK_USERNAME: 'ops',
  FLEETBOOK_PASSWORD: 'password-0001',
  FLEETBOOK_CALLBACK_USERNAME: 'listener',
  FLEETBOOK_CALLBACK_PASSWORD: 'listener-password',
  FLEETBOOK_CALLBACK_URL: 'https://fleetbook.example.com',
  FLEETBOOK_CALLBACK_ACCOUNTS: '0000123456-00001',
  FLEETBOOK_LISTEN: '127.0.0.1:0',
  FLEETBOOK_LOG_LEVEL: 'error',
};

/** `serve` with `env` over ON_SERVICE, in a folder of its own; a daemon that starts is stopped after 10 s. */
async function serve(env: Record<string, string>) {
  const dir = tempDir('fb-start-refused-');
  const r = await fleetbook(
    ['serve', '--playbooks', PLAYBOOK],
    { FLEETBOOK_STATE: join(dir, 'state.db'), ...ON_SERVICE, ...env },
    [],
    dir,
    10_000,
  );
  return { ...r, dir };
}

describe('settings a start took without a word (child process)', function () {
  this.timeout(60_000);

  for (const url of [
    'https://fleetbook.example.com/callbacks',
    'https://fleetbook.example.com/x/callbacks/',
  ]) {
    it(`FLEETBOOK_CALLBACK_URL ${url}: refused, the route being fleetbook's to add`, async () => {
      const r = await serve({ FLEETBOOK_CALLBACK_URL: url });
      expect([r.code, r.stdout, r.stderr]).to.deep.equal([
        2,
        '',
        'fleetbook: invalid configuration:\n' +
          "  FLEETBOOK_CALLBACK_URL: ends in /callbacks, the listener's route, which fleetbook adds (it registers {url}/callbacks/{service}): give the daemon's address as the service reaches it, e.g. https://fleetbook.example.com\n",
      ]);
    });
  }

  it('FLEETBOOK_CALLBACK_URL with a query: refused, as the route would follow it', async () => {
    const r = await serve({ FLEETBOOK_CALLBACK_URL: 'https://fleetbook.example.com/?k=1' });
    expect([r.code, r.stderr]).to.deep.equal([
      2,
      'fleetbook: invalid configuration:\n' +
        "  FLEETBOOK_CALLBACK_URL: has a query, after which fleetbook's /callbacks/{service} would come: give the daemon's address alone, e.g. https://fleetbook.example.com\n",
    ]);
  });

  it('FLEETBOOK_CALLBACK_ACCOUNTS naming no account name: refused, naming it', async () => {
    const r = await serve({ FLEETBOOK_CALLBACK_ACCOUNTS: '0000123456-00001, 123456-1' });
    expect([r.code, r.stderr]).to.deep.equal([
      2,
      'fleetbook: invalid configuration:\n' +
        '  FLEETBOOK_CALLBACK_ACCOUNTS: "123456-1" is no account name (10 digits, a hyphen, then 5 digits, e.g. 0000123456-00001)\n',
    ]);
  });

  it('FLEETBOOK_STATE a URL of another scheme: refused, and no file made', async () => {
    const r = await serve({ FLEETBOOK_STATE: 'postgress://fleetbook@db.example.com:5432/fleetbook' });
    expect([r.code, r.stderr]).to.deep.equal([
      2,
      'fleetbook: invalid configuration:\n' +
        '  FLEETBOOK_STATE: a URL of scheme postgress:, which names no store (did you mean postgres://?): give a PostgreSQL URL (postgres:// or postgresql://) or the path of a SQLite file\n',
    ]);
    expect(existsSync(join(r.dir, 'postgress:'))).to.equal(false);
  });

  it('--state of `run` a URL of another scheme: refused, naming --state', async () => {
    const dir = tempDir('fb-start-refused-');
    const r = await fleetbook(
      ['run', PLAYBOOK, '--state', 'sqlite:///var/lib/fleetbook/state.db'],
      { FLEETBOOK_LOG_LEVEL: 'error' },
      [],
      dir,
    );
    expect([r.code, r.stderr]).to.deep.equal([
      2,
      'fleetbook: invalid configuration:\n' +
        '  --state: a URL of scheme sqlite:, which names no store: give a PostgreSQL URL (postgres:// or postgresql://) or the path of a SQLite file\n',
    ]);
    expect(existsSync(join(dir, 'sqlite:'))).to.equal(false);
  });

  // A token read from a secret file keeps the file's newline: every `Authorization: Bearer` was then refused 401,
  // since no client sends white space at the end of a header's value.
  it('FLEETBOOK_DAEMON_TOKEN and FLEETBOOK_CONSOLE_TOKEN with white space at an end: refused, naming each', async () => {
    const r = await serve({
      FLEETBOOK_DAEMON_TOKEN: 'daemon-token-0123456789\n',
      FLEETBOOK_CONSOLE_TOKEN: ' console-token-0123456789',
    });
    expect([r.code, r.stderr]).to.deep.equal([
      2,
      'fleetbook: invalid configuration:\n' +
        '  FLEETBOOK_DAEMON_TOKEN: begins or ends with white space, which no client can send in its Authorization header\n' +
        '  FLEETBOOK_CONSOLE_TOKEN: begins or ends with white space, which no client can send in its Authorization header\n',
    ]);
  });

  it('FLEETBOOK_RETENTION of nothing: refused, rather than read as unset', async () => {
    const r = await serve({ FLEETBOOK_RETENTION: '0d' });
    expect([r.code, r.stderr]).to.deep.equal([
      2,
      'fleetbook: invalid configuration:\n' +
        '  FLEETBOOK_RETENTION: "0d" would keep nothing: give how long to keep what ended, e.g. 90d, or leave it unset to keep everything\n',
    ]);
  });
});
