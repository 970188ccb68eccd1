/**
 * Settings and arguments with which `fleetbook serve` cannot do its job are refused at start, exit 2, naming
 * what to change (the built binary in a child process, on its embedded emulator):
 * - `FLEETBOOK_LEASE=0s` (or `1ms`) was accepted, and the daemon then died, exit 1, blaming "another process"
 *   for a lease it could never renew in time.
 * - `--playbooks DIR` of a directory without playbooks started a daemon that acknowledged callbacks and ran
 *   nothing, where `validate` exits 2.
 * - `--listen 127.0.0.1:notaport` was reported as `FLEETBOOK_LISTEN: ... is not valid`, a variable not set.
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { fleetbook } from '../helpers/cli.js';
import { tempDir } from '../runner/helpers.js';

const PLAYBOOKS = join(import.meta.dirname, '..', 'fixtures', 'listener-hardening');

describe('fleetbook serve refuses to start (child process)', function () {
  this.timeout(30_000);
  let tmp: { dir: string; close(): Promise<void> };
  before(async () => (tmp = await tempDir()));
  after(() => tmp.close());

  const serve = (env: Record<string, string>, o: { playbooks?: string; listen?: string } = {}) => {
    const state = join(tmp.dir, 'state.db');
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
    expect(existsSync(join(tmp.dir, 'state.db')), 'no store opened').to.equal(false);
  });

  it('with a playbook directory that holds no playbook', async () => {
    const empty = join(tmp.dir, 'empty');
    await mkdir(empty);
    // A playbook test is no playbook.
    await writeFile(join(empty, 'notes.test.yaml'), 'playbook: notes\ncases: []\n');
    const r = await serve({}, { playbooks: empty });
    expect(r.code, r.stderr).to.equal(2);
    expect(r.stderr).to.include(`no playbooks (*.yaml, *.yml) in ${empty}; not starting`);
    expect(existsSync(join(tmp.dir, 'state.db')), 'no store opened').to.equal(false);
  });

  it('with a --listen that is no address, naming the flag', async () => {
    const r = await serve({}, { listen: '127.0.0.1:notaport' });
    expect(r.code, r.stderr).to.equal(2);
    expect(r.stderr).to.include('--listen: "127.0.0.1:notaport" is not valid: HOST:PORT');
    expect(r.stderr).to.not.include('FLEETBOOK_LISTEN');
  });
});
