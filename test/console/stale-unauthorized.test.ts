/**
 * A 401 that answers a request sent before the tab signed in says nothing of the session it has now. On a daemon
 * that listens beyond loopback, reading needs the token: the console showed the sign-in form for any 401, whenever
 * it came, and the logins banner asks `/console/api/overview` as every page opens. When that answer (401, sent
 * unsigned) came after the token address had signed the tab in, the form came back over the page the operator had
 * just reached. Here the browser holds that answer until the tab has signed in, then gives it as the daemon gave
 * it. Real daemon, real browser.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import type { Route } from 'playwright-core';
import { consoleSuite } from '../helpers/console-suite.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'console-start');
const TOKEN = 'stale-unauthorized-console-token-0';

describe('console: a 401 to a request sent before signing in', function () {
  this.timeout(60_000);
  const t = consoleSuite({ name: 'stale-401', playbooks: FIXTURES, token: TOKEN, host: '0.0.0.0' });

  it('does not bring the sign-in form back once the tab has signed in', async () => {
    const { p, close } = await t.freshPage();
    try {
      const held: Route[] = [];
      let holding = true;
      await p.route('**/console/api/overview', (route) =>
        holding ? void held.push(route) : route.continue(),
      );
      await p.goto(`${t.daemon.url}/#/playbooks`);
      await p.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
      expect(held.length, 'overview requests sent unsigned, held').to.be.greaterThan(0);
      holding = false;

      await p.goto(`${t.daemon.url}/#token=${TOKEN}`);
      await p.getByRole('heading', { name: 'Runs', exact: true }).waitFor();
      // The answers the daemon gave the requests sent unsigned, delivered now.
      const answered = Promise.all(held.map(() => p.waitForResponse('**/console/api/overview')));
      for (const route of held)
        await route.fulfill({
          status: 401,
          contentType: 'application/json',
          body: JSON.stringify({
            error: 'the console token is needed: sign in, or send it as a bearer token',
          }),
        });
      await answered;
      // Whatever the 401s set off has rendered by then.
      await p.evaluate(() => new Promise((r) => setTimeout(r, 100)));
      expect(await p.getByRole('heading', { name: 'Sign in', exact: true }).count(), 'sign-in form').to.equal(
        0,
      );
      expect(await p.getByRole('heading', { name: 'Runs', exact: true }).count(), 'the page').to.equal(1);
      expect(t.pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    } finally {
      await close();
    }
  });
});
