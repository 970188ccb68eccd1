/**
 * The console's run page (docs/console.md) against a real `fleetbook serve` and a headless Chromium
 * (test/helpers/console-suite.ts): a cancel asked of another process that holds the run, said in the words of
 * `fleetbook runs show`, until that process, or this serve once it died, cancels the run; a device sent more than
 * once within its step, its attempts beneath its outcome.
 */
import { hostname } from 'node:os';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { checkAccessibility, screenshot, until } from '../helpers/browser.js';
import { fleetbook } from '../helpers/cli.js';
import { LONG_PLAYBOOK, TOKEN, operatorSuite, type RunRow } from '../helpers/console-operator.js';
import { bodyRows, cells, factOf, runStatusIs, tableCaptioned } from '../helpers/console-suite.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { group, imei, MISS, run } from '../store/fixtures.js';

/** On a run page showing the run running: Cancel, confirmed, then what the page says of the cancel asked. */
async function cancelShown(p: Page): Promise<string> {
  await until('the run shown running', async (seen) => runStatusIs(p, 'running', seen));
  await p.getByRole('button', { name: 'Cancel run' }).click();
  await p.getByRole('button', { name: 'Confirm cancel' }).click();
  return until('the cancel shown requested', async (seen) => {
    const text = await factOf(p, 'Cancel requested');
    seen(text);
    return text.startsWith('(no') ? undefined : text;
  });
}

describe('console: the run page', function () {
  this.timeout(180_000);
  const { t, apiGet, runDetail, runElsewhere } = operatorSuite('console-run-page');

  it('shows a cancel asked of the process that holds the run, until that process cancels it', async () => {
    // The run in a `fleetbook run` of its own on the daemon's state file, as a run another replica holds.
    const child = runElsewhere('30s');
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const { p, context } = await t.freshPage();
    try {
      const runId = await until('the run of the other process', async (seen) => {
        const { runs } = await apiGet<{ runs: RunRow[] }>(`/runs?playbook=${LONG_PLAYBOOK}&status=running`);
        seen(JSON.stringify(runs));
        return runs[0]?.id;
      });
      // Paused, the holder reads no request: the page shows the cancel asked, and no second Cancel.
      child.kill('SIGSTOP');
      await p.goto(`${t.daemon.url}/#token=${TOKEN}`);
      await p.getByRole('heading', { name: 'Runs', exact: true }).waitFor();
      await p.goto(`${t.daemon.url}/#/runs/${runId}`);
      const asked = await cancelShown(p);
      // The process that holds it is named, as `fleetbook runs show` names it (liveHolder, ownerText).
      const { cancelBy } = await runDetail(runId);
      const holder = `\`fleetbook run\` (pid ${child.pid} on ${hostname()}, since `;
      expect(cancelBy?.holder, 'cancelBy of the JSON API')
        .to.be.a('string')
        .that.satisfies((h: string) => h.startsWith(holder));
      // The sentence `fleetbook runs show` prints of it, word for word, its commands shown as code.
      const cli = await fleetbook(['runs', 'show', runId], { FLEETBOOK_STATE: t.state });
      const said = cli.stdout.split('\n').find((l) => l.startsWith('cancel requested ('));
      expect(said, `runs show: ${cli.stdout}${cli.stderr}`).to.be.a('string');
      expect(asked, 'the run page beside `runs show`').to.equal(
        said!.replace(/^cancel requested \((.*?)\): /, '$1: ').replaceAll('`', ''),
      );
      // Held by that process, named as the CLI names it, its command as code.
      expect(await factOf(p, 'Held by')).to.equal(cancelBy!.holder!.replaceAll('`', ''));
      expect(asked).to.equal(
        `cancelled from the console: ${cancelBy!.holder!.replaceAll('`', '')}, which holds the run, cancels it ` +
          'by its next lease renewal (within a third of FLEETBOOK_LEASE); its finally steps run there',
      );
      expect(
        await p.locator('main dl > div', { hasText: 'Cancel requested' }).locator('dd code').allInnerTexts(),
        'the commands shown as code',
      ).to.deep.equal(['fleetbook run']);
      expect(await p.getByRole('button', { name: 'Cancel run' }).count(), 'a second Cancel').to.equal(0);
      console.log(`    screenshot: ${await screenshot(p, '13-cancel-requested')}`);
      await checkAccessibility(p, 'the page of a run whose cancel was asked of another process');
      await p.goto(`${t.daemon.url}/#/runs`);
      const row = tableCaptioned(p, 'Runs').locator(`tr[data-run-id="${runId}"]`);
      await until('the run listed with its cancel requested', async (seen) => {
        const texts = (await cells(row).allInnerTexts()).map((c) => c.trim());
        seen(JSON.stringify(texts));
        return texts.includes('running cancel requested') ? true : undefined;
      });
      // Going on, the holder reads the request at its next renewal and cancels the run.
      child.kill('SIGCONT');
      await p.goto(`${t.daemon.url}/#/runs/${runId}`);
      await until('the run shown cancelled', async (seen) => runStatusIs(p, 'cancelled', seen), 40_000, 500);
      expect(await factOf(p, 'Cancel requested')).to.equal('(no Cancel requested shown)');
      expect(await factOf(p, 'Held by'), 'held by, once ended').to.equal('(no Held by shown)');
      expect(await exited, 'the exit code of `fleetbook run`').to.equal(1);
      expect(t.pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    } finally {
      child.kill('SIGKILL');
      await context.close();
    }
  });

  it('a run asked to cancel whose holder then dies is cancelled by this serve at its next lease renewal', async () => {
    const running = async () =>
      (await apiGet<{ runs: RunRow[] }>(`/runs?playbook=${LONG_PLAYBOOK}&status=running`)).runs.map(
        (r) => r.id,
      );
    const before = await running();
    // The run in a `fleetbook run` of its own on the daemon's state file, with a lease of a minute.
    const child = runElsewhere('60s');
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.once('exit', (_, signal) => resolve(signal)),
    );
    const { p, close } = await t.signedIn();
    try {
      const runId = await until('the run of the other process', async (seen) => {
        const ids = (await running()).filter((id) => !before.includes(id));
        seen(JSON.stringify(ids));
        return ids[0];
      });
      // Paused, it holds the run and reads no request: the cancel is asked of it.
      child.kill('SIGSTOP');
      await p.goto(`${t.daemon.url}/#/runs/${runId}`);
      const asked = await cancelShown(p);
      expect(asked).to.match(
        /^cancelled from the console: fleetbook run \(pid \d+ on .+\), which holds the run/,
      );
      console.log(`    screenshot: ${await screenshot(p, '14-cancel-requested-holder-gone')}`);
      await checkAccessibility(p, 'the page of a run asked to cancel of a paused holder');
      // Then it dies with its lease a minute long: this serve knows its process is gone (a pid of this host),
      // lets it go at its next lease renewal, takes the run up and cancels it, its lease far from run out.
      child.kill('SIGKILL');
      expect(await exited, 'how `fleetbook run` ended').to.equal('SIGKILL');
      await until('the run shown cancelled', async (seen) => runStatusIs(p, 'cancelled', seen), 30_000, 500);
      const ended = await runDetail(runId);
      expect([ended.run.status, ended.run.error, ended.cancelBy]).to.deep.equal([
        'cancelled',
        'cancelled from the console',
        undefined,
      ]);
      expect(await factOf(p, 'Cancel requested')).to.equal('(no Cancel requested shown)');
      expect(t.pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    } finally {
      child.kill('SIGKILL');
      await close();
    }
  });

  it("shows a device's attempts beneath its outcome when its step sent it more than once", async () => {
    // A report run in the daemon's state file, as a step records it: two devices missed the cache, one of them
    // located on its second attempt; a third located at once.
    const runId = '0000a77e-0000-4000-8000-000000000001';
    const at = '2026-11-23T10:00:00.000Z';
    const store = new SqliteStore(t.state);
    store.createRun(run(runId, { playbook: 'retried-report', status: 'succeeded', endedAt: at }));
    const missed = { outcome: 'failed', errorType: MISS, errorClass: 'remediable' } as const;
    store.recordDevices(runId, 'report', [group([imei(1), imei(2)], missed), group([imei(3)])], at);
    store.recordDevices(runId, 'report', [group([imei(1)], { attempts: 2 })], at);
    store.recordDevices(runId, 'report', [group([imei(2)], { ...missed, attempts: 2 })], at);
    await store.close();
    const { p, close } = await t.signedIn();
    try {
      // Step, Device (its kind beneath), Outcome (its attempts beneath), Error type (its class beneath).
      const shown = async (table: ReturnType<typeof tableCaptioned>, columns: number[]) =>
        (await bodyRows(table)).map((r) => columns.map((c) => r[c])).sort();
      const devices = tableCaptioned(p, 'Devices');
      await p.goto(`${t.daemon.url}/#/runs/${runId}`);
      await until('the three devices', async (seen) => {
        const n = await devices.locator(':scope > tbody > tr').count();
        seen(`${n} rows`);
        return n === 3 ? true : undefined;
      });
      expect(await shown(devices, [1, 2, 3])).to.deep.equal([
        [`${imei(1)} imei`, 'succeeded 2 attempts', '—'],
        [`${imei(2)} imei`, 'failed 2 attempts', `${MISS} remediable`],
        [`${imei(3)} imei`, 'succeeded', '—'],
      ]);
      // The device's page: each result, the first attempt's miss without a line beneath.
      const history = tableCaptioned(p, 'History');
      await p.goto(`${t.daemon.url}/#/devices/${imei(1)}`);
      await until('the two results', async (seen) => {
        const n = await history.locator(':scope > tbody > tr').count();
        seen(`${n} rows`);
        return n === 2 ? true : undefined;
      });
      expect(await shown(history, [4, 5])).to.deep.equal([
        ['failed', `${MISS} remediable`],
        ['succeeded 2 attempts', '—'],
      ]);
      expect(t.pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    } finally {
      await close();
    }
  });
});
