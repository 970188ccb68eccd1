/**
 * A fetched bearer token the service refuses is fetched again once; when the one fetched again is refused too, the
 * call fails with FB_AUTH saying so, and neither login it was sent with counts as a failed login of the user: each
 * was refused for its token, never reaching the password. The emulator always issues a token it takes, so a
 * rewriting proxy in front of it answers each token request with a token it never issued. Three `fleetbook call`s
 * (the built binary, one state file) send six such logins: were they counted, the store would stop the third call
 * after the four of the first two, and a fifth would lock the user.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { emulatorEnv, fleetbook } from '../helpers/cli.js';
import { startRewritingProxy, type RewritingProxy } from '../helpers/rewriting-proxy.js';
import { calls, control } from '../runner/helpers.js';
import { tempDir } from '../helpers/temp.js';

describe('a fetched token refused, and the one fetched again refused too (child processes)', function () {
  this.timeout(90_000);
  let emu: Emulator;
  let proxy: RewritingProxy;
  let state: string;

  before(async () => {
    emu = await startEmulator({ port: 0, timeScale: 0 });
    let issued = 0;
    proxy = await startRewritingProxy(emu.url, (method, path, body) =>
      method === 'POST' && path === '/api/ts/v1/oauth2/token'
        ? { ...(body as object), access_token: `never-issued-${++issued}` }
        : undefined,
    );
    state = join(tempDir('fleetbook-fetched-token-refused-'), 'state.db');
  });
  after(async () => {
    await proxy?.close();
    await emu?.close();
  });

  const env = (through: string) => ({
    ...emulatorEnv(emu),
    FLEETBOOK_API_URL: through,
    FLEETBOOK_STATE: state,
  });
  const actions = async () => (await calls(emu)).actions;
  const locked = async () =>
    (
      (await control(emu, 'GET', '/accounts?devices=0')) as { users: { username: string; locked: boolean }[] }
    ).users.find((u) => u.username === emu.defaults.username)!.locked;

  it('each call fails saying so, one fetch again each, no login counted, the user not locked', async () => {
    const body = JSON.stringify({ accountName: emu.defaults.accounts[0]! });
    for (let i = 1; i <= 3; i++) {
      const r = await fleetbook(['call', 'devices.list', '--body', body], env(`${proxy.url}/api`));
      expect(r.code, r.stderr).to.equal(1);
      expect(r.stderr).to.match(
        new RegExp(
          `FB_AUTH.*the bearer token fetched for client ${emu.defaults.clientId} was refused, and so was the one ` +
            'fetched again: HTTP 401',
        ),
      );
      expect(r.stderr).to.match(/no failed login of the user was counted for it/);
      expect(r.stderr).to.match(/FLEETBOOK_CLIENT_ID/);
      expect(r.stderr).to.not.match(/FB_LOGIN|not sending another session login/);
      const a = await actions();
      expect(a['oauth.token'], 'a token fetched, then fetched again once').to.equal(2 * i);
      expect(a['session.login'], 'the login sent with each').to.equal(2 * i);
      expect(a['devices.list'] ?? 0, 'the call never sent without a session').to.equal(0);
    }
    expect(proxy.rewritten).to.equal(6);
    const json = await fleetbook(['logins', '--json'], env(emu.baseUrl));
    expect(json.code, json.stderr).to.equal(0);
    expect(JSON.parse(json.stdout)).to.deep.equal([]);
    expect(await locked()).to.equal(false);

    // The user's credentials were right all along: a call with the emulator's own tokens goes through.
    const ok = await fleetbook(['call', 'devices.list', '--body', body], env(emu.baseUrl));
    expect(ok.code, ok.stderr).to.equal(0);
  });
});
