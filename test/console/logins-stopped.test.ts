/**
 * A daemon whose session logins are stopped (four that may have failed, counted on the store) said so only in its
 * log and in `/status`: its metrics and its console, where an operator looks first, showed nothing, and every run
 * failed. `/metrics` now has `fleetbook_session_logins_stopped` (1 while stopped), and every page of the console
 * shows a banner saying why and how to go on, until the daemon logs in again. A real `fleetbook serve` (the built
 * binary) and real CLI processes on one state file, against an emulator over loopback whose `resetNext` fault
 * loses the answers of the logins, and a headless Chromium.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { checkAccessibility, screenshot, until } from '../helpers/browser.js';
import { emulatorEnv, fleetbook } from '../helpers/cli.js';
import { consoleSuite } from '../helpers/console-suite.js';
import { calls, setFaults } from '../runner/helpers.js';

const PLAYBOOKS = join(import.meta.dirname, '..', 'fixtures', 'login-count');
const TOKEN = 'logins-stopped-console-token-01';
const DAEMON_TOKEN = 'logins-stopped-daemon-token-01';

describe('console and metrics: a daemon whose session logins are stopped', function () {
  this.timeout(120_000);
  const t = consoleSuite({
    name: 'logins-stopped',
    playbooks: PLAYBOOKS,
    token: TOKEN,
    daemonToken: DAEMON_TOKEN,
  });

  const manualRun = () => t.daemon.manualRun('list-once', DAEMON_TOKEN, { account: t.account });

  /** The value of the gauge in `/metrics`, or `(absent)`. */
  async function stoppedGauge(): Promise<string> {
    const text = await (await fetch(`${t.daemon.url}/metrics`)).text();
    return /^fleetbook_session_logins_stopped (\S+)$/m.exec(text)?.[1] ?? '(absent)';
  }

  it('counts it in /metrics and shows it on every page until the daemon logs in again', async () => {
    expect(await stoppedGauge(), 'before any login').to.equal('0');
    const env = { ...emulatorEnv(t.emu), FLEETBOOK_STATE: t.state };
    // A cron'd `fleetbook call` on the daemon's state file whose logins lose their answers: 3, then 1 more.
    await setFaults(t.emu, { resetNext: { 'session.login': 4 } });
    const body = JSON.stringify({ accountName: t.account });
    for (let i = 0; i < 2; i++) await fleetbook(['call', 'devices.list', '--body', body], env);
    expect((await calls(t.emu)).actions['session.login']).to.equal(4);

    const failed = await manualRun();
    expect(failed.status).to.equal('failed');
    expect(await stoppedGauge(), 'once stopped').to.equal('1');

    const { p, close } = await t.freshPage({ watchConsole: true });
    try {
      for (const page of ['#/runs', '#/playbooks']) {
        await p.goto(`${t.daemon.url}/${page}`);
        const banner = p.getByRole('alert').filter({ hasText: 'Session logins stopped' });
        await banner.waitFor();
        const text = await banner.innerText();
        expect(text).to.match(/not sending another session login as admin: 4 logins/);
        expect(text).to.match(/fleetbook logins clear admin/);
      }
      await checkAccessibility(p, 'the playbooks page with logins stopped');
      await screenshot(p, 'logins-stopped');

      const cleared = await fleetbook(['logins', 'clear', 'admin'], env);
      expect(cleared.code, cleared.stderr).to.equal(0);
      const after = await manualRun();
      expect(after.status, JSON.stringify(after)).to.equal('succeeded');
      expect(await stoppedGauge(), 'once logged in again').to.equal('0');
      // The page open all along: the banner goes once the daemon logs in again.
      await until('the banner gone', async (seen) => {
        const n = await p.getByRole('alert').filter({ hasText: 'Session logins stopped' }).count();
        seen(`${n} banner(s)`);
        return n === 0 ? true : undefined;
      });
    } finally {
      await close();
    }
  });
});
