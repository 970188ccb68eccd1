/**
 * `fleetbook logins clear USER` forgets the user's count on every service in the store: an operator who fixed the
 * password of one service (a staging API and production on one state file, the same user name on both) let the
 * processes log in to the other too, whose password may still be wrong, towards a locked user. `--service URL`
 * clears the count of that service only; a URL the store has no count of the user for is refused, naming those it
 * has. The built binary on one state file, against two emulators over loopback refusing a wrong password.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { emulatorEnv, fleetbook } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

/** One listing, with no `retry:`: each run sends one login (and its attempts while its answers are lost). */
const LIST = join(import.meta.dirname, '..', 'fixtures', 'login-count', 'list-once.yaml');

const WRONG = 'not-the-password-1357';

interface Counted {
  service: string;
  username: string;
  failed: number;
}

describe('fleetbook logins clear USER --service URL (child processes)', function () {
  this.timeout(90_000);
  let staging: Emulator;
  let production: Emulator;
  let tmp: string;
  let state: string;

  before(async () => {
    staging = await startEmulator({ port: 0, timeScale: 0 });
    production = await startEmulator({ port: 0, timeScale: 0 });
    tmp = tempDir('fleetbook-logins-clear-service-');
    state = join(tmp, 'state.db');
  });
  after(async () => {
    await staging?.close();
    await production?.close();
  });

  const env = (emu: Emulator, extra: Record<string, string> = {}) => ({
    ...emulatorEnv(emu),
    FLEETBOOK_STATE: state,
    ...extra,
  });
  const wrongRun = (emu: Emulator) =>
    fleetbook(
      ['run', LIST, '--input', `account=${emu.defaults.accounts[0]!}`],
      env(emu, { FLEETBOOK_PASSWORD: WRONG }),
    );
  const counted = async (): Promise<[string, string, number][]> => {
    const shown = await fleetbook(['logins', '--json'], env(staging));
    expect(shown.code, shown.stderr).to.equal(0);
    return (JSON.parse(shown.stdout) as Counted[]).map((c) => [c.service, c.username, c.failed]);
  };

  it('clears the one service named, refuses one with no count, and leaves the others', async () => {
    for (let i = 0; i < 2; i++) expect((await wrongRun(staging)).code).to.equal(1);
    expect((await wrongRun(production)).code).to.equal(1);
    const both = [
      [staging.baseUrl, 'admin', 2],
      [production.baseUrl, 'admin', 1],
    ].sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    expect(await counted()).to.deep.equal(both);

    // A service the store has no count of the user for: refused, naming those it has, and nothing cleared.
    const elsewhere = await fleetbook(
      ['logins', 'clear', 'admin', '--service', 'https://api.example.com/api'],
      env(staging),
    );
    expect(elsewhere.code).to.equal(2);
    expect(elsewhere.stderr).to.include('https://api.example.com/api');
    expect(elsewhere.stderr).to.include(staging.baseUrl);
    expect(elsewhere.stderr).to.include(production.baseUrl);
    expect(await counted()).to.deep.equal(both);

    // A trailing slash names the same service.
    const cleared = await fleetbook(
      ['logins', 'clear', 'admin', '--service', `${staging.baseUrl}/`],
      env(staging),
    );
    expect(cleared.code, cleared.stderr).to.equal(0);
    expect(cleared.stdout).to.match(new RegExp(`cleared 2 logins of admin on ${staging.baseUrl}:`));
    expect(cleared.stdout).not.to.include(production.baseUrl);
    expect(await counted()).to.deep.equal([[production.baseUrl, 'admin', 1]]);

    const again = await fleetbook(['logins', 'clear', 'admin', '--service', staging.baseUrl], env(staging));
    expect(again.code).to.equal(2);
    expect(again.stderr).to.include(production.baseUrl);

    const bad = await fleetbook(['logins', 'clear', 'admin', '--service', 'not a url'], env(staging));
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.match(/--service/);
    expect(await counted()).to.deep.equal([[production.baseUrl, 'admin', 1]]);
  });
});
