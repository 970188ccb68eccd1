/**
 * A dry run started from the console's run form (console/pages/start-run.js) against a real `fleetbook serve` on
 * loopback, in a headless Chromium (test/helpers/browser.ts). Before, the form started only real runs: seeing
 * what a playbook would do on the live fleet needed a shell on the machine (`fleetbook run --dry-run`). The form
 * now has a "Dry run" choice, off by default and kept over the sign-in a start asks for (lost, the start after
 * signing in would act on the fleet), and a dry run's page says it is one and lists its planned calls.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { CATALOG } from '../../src/api/catalog.js';
import { checkAccessibility, screenshot, until } from '../helpers/browser.js';
import {
  bodyRows,
  columns,
  consoleSuite,
  factOf,
  runStatusIs,
  shownRun,
  tableCaptioned,
} from '../helpers/console-suite.js';
import { accountDevices, calls } from '../runner/helpers.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'dry-run-started');
const PLAYBOOK = 'suspend-active';
const TOKEN = 'dry-run-start-console-token-0123';
const MUTATING = Object.entries(CATALOG)
  .filter(([, op]) => op.mutating)
  .map(([name]) => name);

describe('console: a dry run started from the run form', function () {
  this.timeout(120_000);
  const t = consoleSuite({ name: 'dry-run-start', playbooks: FIXTURES, token: TOKEN });

  it('sends no call that acts, and the run page says it is a dry run and lists its planned calls', async () => {
    const active = (await accountDevices(t.emu, t.account)).filter((d) => d.state === 'active').length;
    expect(active, 'active devices in the account').to.be.greaterThan(0);
    const { p, close } = await t.freshPage();
    try {
      // On loopback, the playbooks read without a session; starting a run asks to sign in.
      await p.goto(`${t.daemon.url}/#/playbooks`);
      const form = p.getByRole('form', { name: `Start ${PLAYBOOK}` });
      await form.getByLabel('account', { exact: true }).fill(t.account);
      const dry = form.getByRole('checkbox', { name: 'Dry run', exact: true });
      expect(await dry.isChecked(), 'Dry run, before it is chosen').to.equal(false);
      await dry.check();
      console.log(`    screenshot: ${await screenshot(p, 'dry-run-form')}`);
      await checkAccessibility(p, 'the run form with its Dry run choice');
      await form.getByRole('button', { name: 'Start run' }).click();

      await p.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
      await p.getByLabel('Console token', { exact: true }).fill(TOKEN);
      await p.getByRole('button', { name: 'Sign in', exact: true }).click();
      await form.waitFor();
      expect(await dry.isChecked(), 'Dry run, once signed in').to.equal(true);
      await form.getByRole('button', { name: 'Start run' }).click();

      const id = await shownRun(p);
      await until('the run shown succeeded', async (seen) => runStatusIs(p, 'succeeded', seen));
      expect(await factOf(p, 'Trigger')).to.equal('manual, dry run');
      const said = p.getByRole('note').filter({ hasText: 'dry run' });
      expect((await said.innerText()).trim()).to.equal(
        'This is a dry run: it makes the calls that only read, and sends none that changes anything. The calls it would make are listed under Planned calls.',
      );
      const planned = tableCaptioned(p, 'Planned calls');
      expect(await columns(planned)).to.deep.equal(['Step', 'Action', 'Calls', 'Devices']);
      expect(await bodyRows(planned)).to.deep.equal([['suspend', 'devices.suspend', '1', String(active)]]);
      // Where a real run shows its devices' results: none, and why.
      const devices = tableCaptioned(p, 'Devices');
      const deviceRows = await until('the device table read', async (seen) => {
        const rows = await bodyRows(devices);
        seen(JSON.stringify(rows));
        return rows.length ? rows : undefined;
      });
      expect(deviceRows).to.deep.equal([
        ['No device results: a dry run does not make the calls it plans (see Planned calls).'],
      ]);
      console.log(`    screenshot: ${await screenshot(p, 'dry-run-page')}`);
      await checkAccessibility(p, 'the page of a dry run');

      const c = await calls(t.emu);
      expect(
        MUTATING.filter((a) => c.actions[a]),
        'the mutating calls the emulator saw',
      ).to.deep.equal([]);
      expect(c.devices, 'the devices changed').to.deep.equal({});
      expect(c.actions['devices.list'], 'the listing made').to.be.greaterThan(0);
      const res = await fetch(`${t.daemon.url}/console/api/runs/${id}`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      const { run } = (await res.json()) as { run: { dryRun?: boolean; triggerText: string } };
      expect([run.dryRun, run.triggerText]).to.deep.equal([true, 'manual, dry run']);
      expect(t.pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    } finally {
      await close();
    }
  });
});
