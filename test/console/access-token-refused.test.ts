/**
 * A daemon whose given FLEETBOOK_ACCESS_TOKEN the service stops taking (revoked, expired) fails every run's every
 * call with FB_AUTH until it is restarted with a fresh token, and said so only in each run's error: `/status` and
 * the console spoke of stopped session logins only, and `/metrics` had nothing for it. Now `/status` has
 * `authRefused` (what was refused, since when, the error naming the variable and what to do), `/metrics` the gauge
 * `fleetbook_auth_refused`, and every page of the console a banner saying so. `/readyz` stays 200: the listener
 * still stores every callback, to be run once the daemon is restarted. A real `fleetbook serve` (the built binary)
 * on an emulator over loopback, which revokes the token it issued, and a headless Chromium.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { checkAccessibility, screenshot } from '../helpers/browser.js';
import { consoleSuite } from '../helpers/console-suite.js';
import { Raw } from '../emulator/helpers.js';
import { calls } from '../runner/helpers.js';

const PLAYBOOKS = join(import.meta.dirname, '..', 'fixtures', 'login-count');
const TOKEN = 'access-token-refused-console-01';
const DAEMON_TOKEN = 'access-token-refused-daemon-01';

describe('status, metrics and console: a daemon whose given access token is refused', function () {
  this.timeout(120_000);
  let accessToken = '';
  const t = consoleSuite({
    name: 'access-token-refused',
    playbooks: PLAYBOOKS,
    token: TOKEN,
    daemonToken: DAEMON_TOKEN,
    // A token the emulator issued, given as it is: the daemon cannot fetch another.
    env: async (emu) => {
      accessToken = await new Raw(emu).token();
      return { FLEETBOOK_ACCESS_TOKEN: accessToken };
    },
  });

  const manualRun = () => t.daemon.manualRun('list-once', DAEMON_TOKEN, { account: t.account });
  const get = async (path: string) => {
    const res = await fetch(`${t.daemon.url}${path}`);
    return { status: res.status, text: await res.text() };
  };
  const gauge = async () =>
    /^fleetbook_auth_refused (\S+)$/m.exec((await get('/metrics')).text)?.[1] ?? '(absent)';
  type Status = {
    authRefused?: { credential: string; since: string; error: string };
    logins: { stopped?: string; counted: unknown[] };
  };
  const requests = async () => (await calls(t.emu)).actions;
  const status = async () => JSON.parse((await get('/status')).text) as Status;

  it('says so in /status, /metrics and on every page of the console once the token is revoked', async () => {
    const ok = await manualRun();
    expect(ok.status, JSON.stringify(ok)).to.equal('succeeded');
    expect(await gauge(), 'while the token is taken').to.equal('0');
    expect((await status()).authRefused, 'while the token is taken').to.equal(undefined);

    const basic = Buffer.from(`${t.emu.defaults.clientId}:${t.emu.defaults.clientSecret}`).toString('base64');
    const revoked = await new Raw(t.emu).send('POST', '/api/ts/v1/oauth2/revoke', `token=${accessToken}`, {
      authorization: `Basic ${basic}`,
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(revoked.status).to.equal(200);
    const before = Date.now();
    const failed = await manualRun();
    expect(failed.status).to.equal('failed');
    expect(JSON.stringify(failed)).to.match(/the access token \(FLEETBOOK_ACCESS_TOKEN\) was refused/);

    const s = await status();
    expect(s.authRefused, JSON.stringify(s)).to.not.equal(undefined);
    const refused = s.authRefused!;
    expect(refused.credential).to.equal('access token');
    expect(Date.parse(refused.since)).to.be.within(before - 1000, Date.now());
    expect(refused.error).to.match(/^the access token \(FLEETBOOK_ACCESS_TOKEN\) was refused: HTTP 401/);
    expect(refused.error).to.match(/set a fresh FLEETBOOK_ACCESS_TOKEN/);
    // Not a stopped login: the user's password was never refused, nor counted.
    expect(s.logins).to.deep.equal({ counted: [] });
    expect(await gauge(), 'once refused').to.equal('1');
    expect(
      /^fleetbook_session_logins_stopped (\S+)$/m.exec((await get('/metrics')).text)?.[1],
      'no session login stopped',
    ).to.equal('0');
    // Still ready: the callbacks it takes are stored for the runs after its restart.
    const ready = await get('/readyz');
    expect(ready.status, ready.text).to.equal(200);

    // A later run sends nothing with the refused token.
    const sent = await requests();
    expect((await manualRun()).status).to.equal('failed');
    expect(await requests(), 'no request sent with the refused token').to.deep.equal(sent);
    expect((await status()).authRefused?.since, 'since the first refusal').to.equal(refused.since);

    const { p, close } = await t.freshPage({ watchConsole: true });
    try {
      for (const page of ['#/runs', '#/playbooks']) {
        await p.goto(`${t.daemon.url}/${page}`);
        const banner = p.getByRole('alert').filter({ hasText: 'Credentials refused' });
        await banner.waitFor();
        const text = await banner.innerText();
        expect(text).to.match(/the access token \(FLEETBOOK_ACCESS_TOKEN\) was refused/);
        expect(text).to.match(/set a fresh FLEETBOOK_ACCESS_TOKEN/);
        expect(text).to.match(/restart/i);
        expect(await p.getByRole('alert').filter({ hasText: 'Session logins stopped' }).count()).to.equal(0);
      }
      await checkAccessibility(p, 'the playbooks page with the access token refused');
      await screenshot(p, 'access-token-refused');
    } finally {
      await close();
    }
  });
});
