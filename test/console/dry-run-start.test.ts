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
  column,
  columns,
  consoleSuite,
  factOf,
  runStatusIs,
  shownRun,
  startConsoleRun,
  tableCaptioned,
} from '../helpers/console-suite.js';
import { accountDevices, calls, imei, setFaults } from '../runner/helpers.js';

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
      // Where a real run shows its devices' results: each device it would have suspended, `skipped` with
      // DRY RUN (product.md 5a), filtered by error type and downloaded as CSV as a real run's are.
      const ids = (await accountDevices(t.emu, t.account))
        .filter((d) => d.state === 'active')
        .map(imei)
        .sort();
      const devices = tableCaptioned(p, 'Devices');
      const cols = await columns(devices);
      const [stepCol, deviceCol, outcomeCol, errorCol] = ['Step', 'Device', 'Outcome', 'Error type'].map(
        (c) => column(cols, c),
      ) as [number, number, number, number];
      const shown = async (what: string, n: number) =>
        until(what, async (seen) => {
          const rows = await bodyRows(devices);
          seen(JSON.stringify(rows));
          return rows.length === n && rows[0]!.length > 1 ? rows : undefined;
        });
      const deviceRows = await shown('the planned devices in the table', active);
      expect(
        deviceRows.map((r) => [r[stepCol], r[deviceCol], r[outcomeCol], r[errorCol]]).sort(),
      ).to.deep.equal(ids.map((d) => ['suspend', `${d} imei`, 'skipped', 'DRY RUN']));
      await p.getByRole('combobox', { name: 'Error type', exact: true }).selectOption('DRY RUN');
      expect((await shown('the table filtered by DRY RUN', active)).map((r) => r[errorCol])).to.deep.equal(
        ids.map(() => 'DRY RUN'),
      );
      const csvHref = await p.getByRole('link', { name: 'Download CSV' }).getAttribute('href');
      const csv = await fetch(new URL(csvHref!, p.url()), { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(csv.status).to.equal(200);
      const csvRows = (await csv.text())
        .split('\n')
        .filter((l) => l !== '')
        .slice(1)
        .map((l) => l.split(',').slice(1, 6).join(' '));
      expect(csvRows.sort()).to.deep.equal(ids.map((d) => `suspend ${d} imei skipped DRY RUN`));
      await p.getByRole('combobox', { name: 'Outcome', exact: true }).selectOption('failed');
      const none = await until('the table filtered by failed', async (seen) => {
        const rows = await bodyRows(devices);
        seen(JSON.stringify(rows));
        return rows.length === 1 && rows[0]!.length === 1 ? rows : undefined;
      });
      expect(none).to.deep.equal([['No device results match.']]);
      console.log(`    screenshot: ${await screenshot(p, 'dry-run-page')}`);
      await checkAccessibility(p, 'the page of a dry run');

      // A device's history says the entry is a dry run's: nothing was sent to it.
      await p.goto(`${t.daemon.url}/#/devices/${ids[0]}`);
      const history = tableCaptioned(p, 'History');
      const hcols = await columns(history);
      const entry = await until("the device's history", async (seen) => {
        const rows = await bodyRows(history);
        seen(JSON.stringify(rows));
        return rows.find((r) => r[column(hcols, 'Step')] === 'suspend');
      });
      expect([entry[column(hcols, 'Run status')], entry[column(hcols, 'Outcome')]]).to.deep.equal([
        'succeeded dry run',
        'skipped',
      ]);
      expect(entry[column(hcols, 'Error type')]).to.equal('DRY RUN');
      await checkAccessibility(p, "a device's history with a dry run's entry");

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
  it('lists the calls planned so far, and their devices, while the dry run goes on', async () => {
    const [device] = (await accountDevices(t.emu, t.account)).filter((d) => d.state === 'active').map(imei);
    const { p, close } = await t.signedIn();
    // The listing after the suspend answers slowly: the page is read while the run is in it.
    await setFaults(t.emu, { latencyMs: 6000 });
    try {
      const runId = await startConsoleRun(
        t.daemon,
        'suspend-then-look',
        TOKEN,
        { account: t.account, imei: device },
        { dryRun: true },
      );
      await p.goto(`${t.daemon.url}/#/runs/${runId}`);
      const planned = tableCaptioned(p, 'Planned calls');
      const rows = await until('the planned suspend while the run goes on', async (seen) => {
        const r = await bodyRows(planned);
        seen(JSON.stringify(r));
        return r[0]?.[0] === 'suspend' ? r : undefined;
      });
      expect(rows).to.deep.equal([['suspend', 'devices.suspend', '1', '1']]);
      const devices = tableCaptioned(p, 'Devices');
      const deviceRows = await until('the planned device while the run goes on', async (seen) => {
        const r = await bodyRows(devices);
        seen(JSON.stringify(r));
        return r.length === 1 && r[0]!.length > 1 ? r : undefined;
      });
      const cols = await columns(devices);
      expect(
        [column(cols, 'Device'), column(cols, 'Outcome'), column(cols, 'Error type')].map(
          (i) => deviceRows[0]![i],
        ),
      ).to.deep.equal([`${device} imei`, 'skipped', 'DRY RUN']);
      // Still going: the page showed them before the run ended.
      const api = await fetch(`${t.daemon.url}/console/api/runs/${runId}`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      const { run } = (await api.json()) as { run: { status: string; planned?: unknown } };
      expect(run.status).to.equal('running');
      expect(run.planned).to.deep.equal([
        { step: 'suspend', action: 'devices.suspend', calls: 1, devices: 1 },
      ]);
      console.log(`    screenshot: ${await screenshot(p, 'dry-run-in-progress')}`);
      await setFaults(t.emu, {});
      await until('the run shown succeeded', async (seen) => runStatusIs(p, 'succeeded', seen));
      expect(await bodyRows(planned)).to.deep.equal([['suspend', 'devices.suspend', '1', '1']]);
      expect(t.pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    } finally {
      await setFaults(t.emu, {});
      await close();
    }
  });
});
