/**
 * A wrong or expired FLEETBOOK_ACCESS_TOKEN (a bearer token given as it is) was counted as a failed login of the
 * user: the login it was sent with was answered 401 for the token, never reaching the user's password, and after
 * four such starts every process on the store stopped logging in as the user, telling the operator to fix the
 * user's credentials, which were never wrong. Now a login refused for its bearer token (the emulator's RFC 6750
 * challenge) is not counted, and the call fails saying that the access token was refused and what to do. A wrong
 * password still counts, and stops at four (test/cli/login-count.test.ts). The built binary, one state file, the
 * emulator over loopback.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { emulatorEnv, fleetbook } from '../helpers/cli.js';
import { calls, control } from '../runner/helpers.js';
import { tempDir } from '../helpers/temp.js';

const LIST = join(import.meta.dirname, '..', 'fixtures', 'login-count', 'list-once.yaml');

describe('a refused FLEETBOOK_ACCESS_TOKEN is not a failed login of the user (child processes)', function () {
  this.timeout(90_000);
  let emu: Emulator;
  let state: string;

  before(async () => {
    emu = await startEmulator({ port: 0, timeScale: 0 });
    state = join(tempDir('fleetbook-wrong-access-token-'), 'state.db');
  });
  after(async () => {
    await emu?.close();
  });

  const env = (extra: Record<string, string> = {}) => ({
    ...emulatorEnv(emu),
    FLEETBOOK_STATE: state,
    ...extra,
  });
  const logins = async () => (await calls(emu)).actions['session.login'] ?? 0;
  const locked = async () =>
    (
      (await control(emu, 'GET', '/accounts?devices=0')) as { users: { username: string; locked: boolean }[] }
    ).users.find((u) => u.username === emu.defaults.username)!.locked;

  it('five calls and runs with a wrong access token: each fails saying so, none counted, the user not locked', async () => {
    const wrong = env({ FLEETBOOK_ACCESS_TOKEN: 'expired-or-wrong-token' });
    const body = JSON.stringify({ accountName: emu.defaults.accounts[0]! });
    for (let i = 0; i < 5; i++) {
      const r =
        i % 2 === 0
          ? await fleetbook(['call', 'devices.list', '--body', body], wrong)
          : await fleetbook(['run', LIST, '--input', `account=${emu.defaults.accounts[0]!}`], wrong);
      expect(r.code, r.stderr).to.equal(1);
      expect(r.stderr).to.match(/the access token \(FLEETBOOK_ACCESS_TOKEN\) was refused: HTTP 401/);
      expect(r.stderr).to.match(/set a fresh FLEETBOOK_ACCESS_TOKEN/);
      expect(r.stderr).to.match(/FLEETBOOK_CLIENT_ID and FLEETBOOK_CLIENT_SECRET/);
      expect(r.stderr).to.not.match(/fix the credentials|not sending another session login/);
      expect(await logins(), 'one login sent by each').to.equal(i + 1);
    }
    const shown = await fleetbook(['logins'], env());
    expect(shown.code, shown.stderr).to.equal(0);
    expect(shown.stdout).to.match(/no session logins counted/);
    const json = await fleetbook(['logins', '--json'], env());
    expect(JSON.parse(json.stdout)).to.deep.equal([]);
    expect(await locked()).to.equal(false);

    // The user's credentials were right all along: a login with a good token goes through.
    const ok = await fleetbook(['call', 'devices.list', '--body', body], env());
    expect(ok.code, ok.stderr).to.equal(0);
  });
});
