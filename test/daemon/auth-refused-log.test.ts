/**
 * A daemon whose credentials the service refuses said so in each run's error, `/status` and the console, and
 * nowhere in its log: an operator reading the log saw nothing. Now its log says it once, at `error`, as the
 * credentials are refused (which, since when, the error naming what to do: `/status`'s `authRefused`), however
 * many calls are refused after. And a token it fetched itself, refused, and the one fetched again refused too, is
 * kept refused for a back-off: the next run fails at once, sending neither a token request nor a login, and
 * `/status` says so. A real `fleetbook serve` (the built binary) on an emulator over loopback; the fetched tokens
 * are handed out by a proxy in front of it, which the emulator never issued.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { DaemonWorld, type DaemonProcess } from '../helpers/daemon.js';
import { startRewritingProxy, type RewritingProxy } from '../helpers/rewriting-proxy.js';
import { actionCounts } from '../runner/helpers.js';

const PLAYBOOKS = join(import.meta.dirname, '..', 'fixtures', 'login-count');
const TOKEN = 'auth-refused-log-daemon-0';

interface Status {
  authRefused?: { credential: string; since: string; error: string; nextAttempt?: string };
  logins: { stopped?: string; counted: unknown[] };
}

describe('daemon: credentials refused said once in its log, a fetched token refused twice kept', function () {
  this.timeout(120_000);
  let world: DaemonWorld;
  let proxy: RewritingProxy;

  before(async () => {
    world = await DaemonWorld.create('auth-refused-log', {
      user: 'arl-listener',
      password: 'arl-listener-password',
    });
    let issued = 0;
    proxy = await startRewritingProxy(world.emu.url, (method, path, body) =>
      method === 'POST' && path === '/api/ts/v1/oauth2/token'
        ? { ...(body as object), access_token: `never-issued-${++issued}` }
        : undefined,
    );
  });
  after(async () => {
    await proxy?.close();
    await world?.close();
  });

  const manualRun = (daemon: DaemonProcess) =>
    daemon.manualRun('list-once', TOKEN, { account: world.emu.defaults.accounts[0]! });
  const refusedLines = (d: DaemonProcess) => d.logs().filter((l) => l.message === 'credentials refused');
  const sent = async () => {
    const a = await actionCounts(world.emu);
    return { token: a['oauth.token'] ?? 0, login: a['session.login'] ?? 0, list: a['devices.list'] ?? 0 };
  };

  it('a given access token refused: one error line for every run refused', async () => {
    const daemon = await world.start('given token daemon', PLAYBOOKS, {
      state: world.state('given.db'),
      env: { FLEETBOOK_ACCESS_TOKEN: 'a-token-never-issued', FLEETBOOK_DAEMON_TOKEN: TOKEN },
    });
    for (let i = 0; i < 4; i++) {
      const r = await manualRun(daemon);
      expect(r.status).to.equal('failed');
      expect(JSON.stringify(r)).to.match(/the access token \(FLEETBOOK_ACCESS_TOKEN\) was refused/);
    }
    const status = await daemon.getJson<Status>('/status');
    expect(status.authRefused?.credential).to.equal('access token');
    const lines = refusedLines(daemon);
    expect(lines, 'one line for four runs refused').to.have.length(1);
    const line = lines[0]!;
    expect(line.level).to.equal('error');
    // The same words as /status.
    expect({ credential: line.what, since: line.since, error: line.error }).to.deep.equal(status.authRefused);
    expect(String(line.error)).to.match(/set a fresh FLEETBOOK_ACCESS_TOKEN/);
    await daemon.stop();
  });

  it('a fetched token refused twice: kept refused, the next run sends nothing, said once', async () => {
    const daemon = await world.start('fetched token daemon', PLAYBOOKS, {
      state: world.state('fetched.db'),
      env: { FLEETBOOK_API_URL: `${proxy.url}/api`, FLEETBOOK_DAEMON_TOKEN: TOKEN },
    });
    const before = await sent();
    const first = await manualRun(daemon);
    expect(first.status).to.equal('failed');
    expect(JSON.stringify(first)).to.match(/was refused, and so was the one fetched again/);
    const after = await sent();
    expect(after, 'a token fetched, then fetched again once').to.deep.equal({
      token: before.token + 2,
      login: before.login + 2,
      list: before.list,
    });

    const status = await daemon.getJson<Status>('/status');
    const refused = status.authRefused!;
    expect(refused, JSON.stringify(status)).to.not.equal(undefined);
    expect(refused.credential).to.equal('fetched token');
    expect(refused.error).to.match(/the bearer token fetched for client \S+ was refused/);
    expect(Date.parse(refused.nextAttempt!) - Date.parse(refused.since), 'a minute').to.equal(60_000);
    expect(status.logins).to.deep.equal({ counted: [] });
    const gauge = /^fleetbook_auth_refused (\S+)$/m.exec(
      await (await fetch(`${daemon.url}/metrics`)).text(),
    )?.[1];
    expect(gauge).to.equal('1');

    // Within the back-off, the next runs fail at once, sending nothing.
    for (let i = 0; i < 3; i++) {
      const r = await manualRun(daemon);
      expect(r.status).to.equal('failed');
      expect(JSON.stringify(r)).to.include(JSON.stringify(refused.error).slice(1, -1));
    }
    expect(await sent(), 'no token request, no login').to.deep.equal(after);
    expect((await daemon.getJson<Status>('/status')).authRefused).to.deep.equal(refused);

    const lines = refusedLines(daemon);
    expect(lines, 'one line for four runs refused').to.have.length(1);
    expect(lines[0]!.level).to.equal('error');
    const { credential, ...rest } = refused;
    expect(lines[0], 'the same words as /status').to.deep.include({ what: credential, ...rest });
    await daemon.stop();
  });
});
