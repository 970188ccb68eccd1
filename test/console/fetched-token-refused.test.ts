/**
 * A daemon whose fetched bearer tokens the service refuses (one, and the one fetched again) keeps the refusal for a
 * back-off, and fetches another after it. The console's banner said of every refusal that the daemon sends nothing
 * until it is restarted, which is not so of this one: it now says when the daemon fetches another, and no restart.
 * A real `fleetbook serve` (the built binary) on an emulator over loopback, behind a proxy that hands out tokens the
 * emulator never issued, and a headless Chromium.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { consoleSuite } from '../helpers/console-suite.js';
import { startRewritingProxy, type RewritingProxy } from '../helpers/rewriting-proxy.js';

const PLAYBOOKS = join(import.meta.dirname, '..', 'fixtures', 'login-count');
const TOKEN = 'fetched-token-refused-console-01';
const DAEMON_TOKEN = 'fetched-token-refused-daemon-01';

describe('console: a daemon whose fetched tokens are refused', function () {
  this.timeout(120_000);
  let proxy: RewritingProxy | undefined;
  const t = consoleSuite({
    name: 'fetched-token-refused',
    playbooks: PLAYBOOKS,
    token: TOKEN,
    daemonToken: DAEMON_TOKEN,
    env: async (emu) => {
      let issued = 0;
      proxy = await startRewritingProxy(emu.url, (method, path, body) =>
        method === 'POST' && path === '/api/ts/v1/oauth2/token'
          ? { ...(body as object), access_token: `never-issued-${++issued}` }
          : undefined,
      );
      return { FLEETBOOK_API_URL: `${proxy.url}/api` };
    },
  });
  after(() => proxy?.close());

  it('the banner says when the daemon fetches another token, and no restart', async () => {
    const failed = await t.daemon.manualRun('list-once', DAEMON_TOKEN, { account: t.account });
    expect(failed.status).to.equal('failed');
    const { p, close } = await t.freshPage({ watchConsole: true });
    try {
      await p.goto(`${t.daemon.url}/#/runs`);
      const banner = p.getByRole('alert').filter({ hasText: 'Credentials refused' });
      await banner.waitFor();
      const text = await banner.innerText();
      expect(text).to.match(/the service refuses the tokens the daemon fetches/);
      expect(text).to.match(/until it fetches another at /);
      expect(text).to.match(
        /the bearer token fetched for client \S+ was refused, and so was the one fetched again/,
      );
      expect(text).to.not.match(/restart/i);
    } finally {
      await close();
    }
  });
});
