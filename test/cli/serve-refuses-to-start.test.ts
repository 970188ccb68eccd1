/**
 * Settings and arguments with which `fleetbook serve` cannot do its job are refused at start, exit 2, naming
 * what to change (the built binary in a child process, on its embedded emulator):
 * - `FLEETBOOK_LEASE=0s` (or `1ms`) was accepted, and the daemon then died, exit 1, blaming "another process"
 *   for a lease it could never renew in time.
 * - `--playbooks DIR` of a directory without playbooks started a daemon that acknowledged callbacks and ran
 *   nothing, where `validate` exits 2.
 * - `--listen 127.0.0.1:notaport` was reported as `FLEETBOOK_LISTEN: ... is not valid`, a variable not set.
 * - Listener credentials with white space at either end (a secret file's newline) were registered with the
 *   service as they were, and one of them missing was reported naming both.
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { fleetbook } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const PLAYBOOKS = join(import.meta.dirname, '..', 'fixtures', 'listener-hardening');

describe('fleetbook serve refuses to start (child process)', function () {
  this.timeout(30_000);
  let tmp: string;
  before(async () => (tmp = tempDir('fleetbook-serve-refuses-to-start-')));

  const serve = (env: Record<string, string>, o: { playbooks?: string; listen?: string } = {}) => {
    const state = join(tmp, 'state.db');
    return fleetbook(
      [
        'serve',
        '--playbooks',
        o.playbooks ?? PLAYBOOKS,
        '--listen',
        o.listen ?? '127.0.0.1:0',
        '--state',
        state,
      ],
      env,
      [],
      undefined,
      // A daemon that starts does not exit: it is stopped here, and the test fails.
      10_000,
    );
  };

  it('with a lease too short to be renewed', async () => {
    for (const lease of ['0s', '1ms']) {
      const r = await serve({ FLEETBOOK_LEASE: lease });
      expect(r.code, `${lease}: ${r.stderr}`).to.equal(2);
      expect(r.stderr).to.include(`FLEETBOOK_LEASE: "${lease}" is too short: at least 1s`);
    }
    expect(existsSync(join(tmp, 'state.db')), 'no store opened').to.equal(false);
  });

  it('with a playbook directory that holds no playbook', async () => {
    const empty = join(tmp, 'empty');
    await mkdir(empty);
    // A playbook test is no playbook.
    await writeFile(join(empty, 'notes.test.yaml'), 'playbook: notes\ncases: []\n');
    const r = await serve({}, { playbooks: empty });
    expect(r.code, r.stderr).to.equal(2);
    expect(r.stderr).to.include(`no playbooks (*.yaml, *.yml) in ${empty}; not starting`);
    expect(existsSync(join(tmp, 'state.db')), 'no store opened').to.equal(false);
  });

  it('with a --listen that is no address, naming the flag', async () => {
    const r = await serve({}, { listen: '127.0.0.1:notaport' });
    expect(r.code, r.stderr).to.equal(2);
    expect(r.stderr).to.include('--listen: "127.0.0.1:notaport" is not valid: HOST:PORT');
    expect(r.stderr).to.not.include('FLEETBOOK_LISTEN');
  });

  it('with listener credentials that begin or end with white space, or one of them missing, naming it', async () => {
    const service = {
      FLEETBOOK_API_URL: 'http://127.0.0.1:9/api',
      FLEETBOOK_ACCESS_TOKEN: 'token-0001',
      FLEETBOOK_USERNAME: 'ops',
      FLEETBOOK_PASSWORD: 'password-0001',
    };
    const said: Record<string, string> = {};
    const cases: Record<string, Record<string, string>> = {
      'a username ending in a newline, on the emulator': {
        FLEETBOOK_CALLBACK_USERNAME: 'listener\n',
        FLEETBOOK_CALLBACK_PASSWORD: 'listener-password',
      },
      'a password beginning with a space, on a service': {
        ...service,
        FLEETBOOK_CALLBACK_USERNAME: 'listener',
        FLEETBOOK_CALLBACK_PASSWORD: ' listener-password',
      },
      'no password, on a service': { ...service, FLEETBOOK_CALLBACK_USERNAME: 'listener' },
    };
    for (const [name, env] of Object.entries(cases)) {
      const r = await serve(env);
      expect(r.code, `${name}: ${r.stderr}`).to.equal(2);
      said[name] = r.stderr.split('\n').find((l) => l.includes('FLEETBOOK_CALLBACK_')) ?? r.stderr;
    }
    expect(said).to.deep.equal({
      'a username ending in a newline, on the emulator':
        '  FLEETBOOK_CALLBACK_USERNAME: begins or ends with white space, which the listener would be registered with, and every callback would have to carry',
      'a password beginning with a space, on a service':
        '  FLEETBOOK_CALLBACK_PASSWORD: begins or ends with white space, which the listener would be registered with, and every callback would have to carry',
      'no password, on a service':
        'fleetbook: FLEETBOOK_CALLBACK_PASSWORD is not set, but FLEETBOOK_CALLBACK_USERNAME is: set it (with FLEETBOOK_API_URL, the listener is registered with both, and refuses callbacks without them)',
    });
    expect(existsSync(join(tmp, 'state.db')), 'no store opened').to.equal(false);
  });
});
