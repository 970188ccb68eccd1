/**
 * The console's runs list (docs/console.md) end to end, as an operator uses it: a real `fleetbook serve` on an
 * emulator of this process, its SQLite state in a temporary directory, a console token set, and a headless
 * Chromium (test/helpers/browser.ts) on its page. The operator signs in by the address with the token, watches a
 * callback's run appear and end live, opens it, starts a report from its playbook's form and filters its devices
 * by an error type (the same rows the JSON API gives, the CSV link with the same filter), opens a device's history,
 * starts a long run and cancels it, and visits the callbacks and rate budgets pages: each step is screenshotted
 * (test-output/console/) and checked by axe-core. Beside it, what the runs list shows and keeps in its address.
 */
import { expect } from 'chai';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { Locator } from 'playwright-core';
import { checkAccessibility, screenshot, until } from '../helpers/browser.js';
import {
  CALLBACK_PLAYBOOK,
  LONG_PLAYBOOK,
  REPORT_PLAYBOOK,
  REQUEST_ID,
  TOKEN,
  operatorSuite,
  type DeviceRow,
  type Json,
  type RunRow,
} from '../helpers/console-operator.js';
import {
  bodyRows,
  cells,
  column,
  columns,
  factOf,
  runStatusIs,
  tableCaptioned,
} from '../helpers/console-suite.js';
import { accountDevices, imei } from '../runner/helpers.js';

describe('console: the runs list', function () {
  this.timeout(180_000);
  const { t, apiGet, runDetail, reportRun } = operatorSuite('console-runs-list');

  it('shows runs live, a run with its devices, a device, and starts and cancels runs', async () => {
    const { p } = await t.freshPage({ watchConsole: true });
    const shots: string[] = [];
    const step = async (name: string, context: string) => {
      shots.push(await screenshot(p, name));
      await checkAccessibility(p, context);
    };
    const nav = (name: string) => p.getByRole('navigation').getByRole('link', { name, exact: true });
    const heading = (name: string | RegExp) =>
      p.getByRole('heading', typeof name === 'string' ? { name, exact: true } : { name });

    // 1. Signed in by the address with the token: the runs page, listening to the run stream.
    const stream = p.waitForResponse((r) => new URL(r.url()).pathname === '/console/api/runs/stream', {
      timeout: 15_000,
    });
    await p.goto(`${t.daemon.url}/#token=${TOKEN}`);
    await heading('Runs').waitFor();
    expect(p.url(), 'the address once signed in').to.not.include(TOKEN);
    const streamed = await stream.catch(() => undefined);
    expect(streamed, 'the runs page opened GET /console/api/runs/stream').to.not.equal(undefined);
    expect(streamed!.status(), 'the run stream answered').to.equal(200);
    const runsTable = tableCaptioned(p, 'Runs');
    await runsTable.waitFor();
    await step('01-runs', 'the runs page');

    // 2. A DeviceUsage callback: its run appears in the table and ends there, without the page reloading.
    await p.evaluate(() => ((globalThis as unknown as { notReloaded: boolean }).notReloaded = true));
    const located = (await accountDevices(t.emu, t.account))
      .filter((d) => d.state === 'active' && d.iot)
      .slice(0, 3)
      .map(imei);
    const res = await fetch(`${t.daemon.url}/callbacks/DeviceUsage`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        username: t.callback.username,
        password: t.callback.password,
        requestId: REQUEST_ID,
        deviceResponse: {
          alertServiceResponse: {
            triggerName: 'overuse-console',
            accountName: t.account,
            payAsYouGo: { deviceIds: located.map((id) => ({ id, kind: 'IMEI' })) },
          },
        },
      }),
    });
    expect(res.status, `the callback: ${await res.clone().text()}`).to.equal(200);
    const runCols = await columns(runsTable);
    const [playbookCol, triggerCol, statusCol] = ['Playbook', 'Trigger', 'Status'].map((c) =>
      column(runCols, c),
    );
    const callbackRow = async (seen: (s: string) => void) => {
      for (const row of await runsTable.locator('tr[data-run-id]').all()) {
        const texts = await cells(row).allInnerTexts();
        if (texts[playbookCol!]?.includes(CALLBACK_PLAYBOOK) && /callback/i.test(texts[triggerCol!] ?? ''))
          return { row, id: (await row.getAttribute('data-run-id'))!, status: texts[statusCol!]!.trim() };
      }
      seen(JSON.stringify(await bodyRows(runsTable)));
      return undefined;
    };
    const appeared = await until('the callback run in the runs table', callbackRow, 20_000);
    const listed = await apiGet<{ runs: RunRow[] }>(`/runs?playbook=${CALLBACK_PLAYBOOK}`);
    expect(
      listed.runs.map((r) => [r.id, r.trigger.type]),
      'the runs of the callback playbook (JSON API)',
    ).to.deep.equal([[appeared.id, 'callback']]);
    await until(
      'the callback run shown succeeded',
      async (seen) => {
        const r = await callbackRow(seen);
        if (r) seen(`status cell "${r.status}"`);
        return r && /^succeeded$/i.test(r.status) ? r : undefined;
      },
      30_000,
    );
    expect(
      await p.evaluate(() => (globalThis as unknown as { notReloaded?: boolean }).notReloaded),
      'the runs page was not reloaded',
    ).to.equal(true);
    await step('02-runs-live', 'the runs page with the callback run');

    // 3. The callback run's page: its steps, timeline and devices.
    const callbackRunId = appeared.id;
    await cells(runsTable.locator(`tr[data-run-id="${callbackRunId}"]`))
      .first()
      .getByRole('link')
      .click();
    await heading(/^Run /).waitFor();
    for (const section of ['Steps', 'Timeline', 'Devices']) await heading(section).waitFor();
    const steps = await bodyRows(tableCaptioned(p, 'Steps'));
    expect(steps.map((r) => r.join(' ')).join('\n'), 'the steps table')
      .to.match(/\bnote\b/)
      .and.match(/\blocate\b/);
    const callbackDevices = tableCaptioned(p, 'Devices');
    await until('the callback run devices', async (seen) => {
      const rows = await bodyRows(callbackDevices);
      seen(JSON.stringify(rows));
      // Each device's cell: its id, then its kind.
      return located.every((id) => rows.some((r) => r.includes(`${id} imei`))) ? true : undefined;
    });
    await step('03-callback-run', 'the page of the callback run');

    // 4. The report, started from its playbook's form with typed inputs: its page, until it succeeds.
    await nav('Playbooks').click();
    await heading('Playbooks').waitFor();
    const reportForm = p.getByRole('form', { name: `Start ${REPORT_PLAYBOOK}` });
    await reportForm.waitFor();
    const accountField = reportForm.getByLabel('account', { exact: true });
    expect(await accountField.inputValue(), 'the account field, as the default fills it').to.equal(
      '0000123456-00001',
    );
    await accountField.fill(t.account);
    await reportForm.getByLabel('batch', { exact: true }).fill('25');
    await step('04-playbooks', 'the playbooks page');
    await reportForm.getByRole('button', { name: 'Start run' }).click();
    await heading(/^Run /).waitFor();
    const reportRunId = await until('the report run id in the address', async (seen) => {
      seen(p.url());
      return /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/.exec(p.url())?.[0];
    });
    await until(
      'the report run shown succeeded',
      async (seen) => runStatusIs(p, 'succeeded', seen),
      60_000,
      500,
    );
    const report = (await runDetail(reportRunId)).run;
    expect(report.playbook).to.equal(REPORT_PLAYBOOK);
    expect(report.version, 'the version of the playbook it executes').to.match(/^[0-9a-f]{16}$/);
    expect(await factOf(p, 'Version'), 'the version shown').to.equal(report.version);
    expect(report.status).to.equal('succeeded');
    expect(report.inputs, 'the inputs the form sent, typed').to.deep.equal({ account: t.account, batch: 25 });
    const byError = Object.entries(report.devices?.byError ?? {}).sort((a, b) => b[1] - a[1]);
    expect(
      byError.length,
      `error types of the report's devices: ${JSON.stringify(report.devices)}`,
    ).to.be.at.least(2);
    await step('05-report-run', 'the page of the report run');

    // 5. Its devices, a page at a time as the JSON API pages them; then filtered by an error type: the rows the
    // JSON API gives, and a CSV link with the filter.
    const devicesTable = tableCaptioned(p, 'Devices');
    const devCols = await columns(devicesTable);
    const stepCol = column(devCols, 'Step');
    const errorCol = column(devCols, 'Error type');
    const deviceCol = devCols.findIndex((c) => /^device/i.test(c));
    expect(deviceCol, `a device id column among ${JSON.stringify(devCols)}`).to.be.at.least(0);
    const shows = (what: string, page: { devices: DeviceRow[] }) =>
      until(what, async (seen) => {
        const shown = (await bodyRows(devicesTable)).map((r) => `${r[stepCol]} ${r[deviceCol]}`);
        seen(`${shown.length} rows: ${shown.slice(0, 3).join(', ')}...`);
        const want = page.devices.map((d) => `${d.step} ${d.deviceId} ${d.kind}`);
        return JSON.stringify(shown) === JSON.stringify(want) ? true : undefined;
      });
    const page1 = await apiGet<{ devices: DeviceRow[]; next?: string }>(`/runs/${reportRunId}/devices`);
    expect(page1.next, 'the report has more devices than a page').to.be.a('string');
    const page2 = await apiGet<{ devices: DeviceRow[]; next?: string }>(
      `/runs/${reportRunId}/devices?after=${encodeURIComponent(page1.next!)}`,
    );
    await shows('the first page of devices, as the JSON API gives it', page1);
    // A located device's row says where it is: the location the report returned, as the JSON API gives it.
    const returnedCol = column(devCols, 'Returned');
    const locatedAt = page1.devices.findIndex((d) => d.data !== undefined);
    expect(locatedAt, `a located device on the first page: ${JSON.stringify(page1.devices)}`).to.be.at.least(
      0,
    );
    const where = page1.devices[locatedAt]!.data as {
      latitude: number;
      longitude: number;
      radius: number;
      cached?: boolean;
    };
    expect(where.latitude, `the first located device's data: ${JSON.stringify(where)}`).to.be.a('number');
    const cell = (await bodyRows(devicesTable))[locatedAt]![returnedCol];
    expect(cell, 'its Returned cell').to.be.a('string');
    // The location, then (on the line beneath) its radius and whether it was cached.
    expect(cell, 'its Returned cell').to.equal(
      `${where.latitude}, ${where.longitude} ±${where.radius} m${where.cached ? ', cached' : ''}`,
    );
    await p.getByRole('button', { name: 'Next page' }).click();
    await shows('the second page of devices, as the JSON API gives it', page2);
    await p.getByRole('button', { name: 'First page' }).click();
    await shows('the first page of devices again', page1);

    const [errorType] = byError[0]!;
    await p.getByRole('combobox', { name: 'Error type', exact: true }).selectOption(errorType);
    await p.getByRole('button', { name: 'Apply filters' }).click();
    const expected = await apiGet<{ devices: DeviceRow[]; next?: string }>(
      `/runs/${reportRunId}/devices?errorType=${encodeURIComponent(errorType)}&limit=500`,
    );
    expect(expected.next, 'one page of the JSON API holds them all').to.equal(undefined);
    expect(expected.devices.length, `devices of error type ${errorType} (JSON API)`).to.be.at.least(1);
    // Each row: the device's id then its kind, its error type then (beneath it) the type's class.
    const want = expected.devices
      .map((d) => `${d.deviceId} ${d.kind} | ${d.errorType} ${d.errorClass}`)
      .sort()
      .join('\n');
    const filtered = await until(`the devices table filtered by ${errorType}`, async (seen) => {
      const rows = await bodyRows(devicesTable);
      const shown = rows.map((r) => `${r[deviceCol]} | ${r[errorCol]}`).sort();
      seen(shown.slice(0, 5).join(', ') + ` (${rows.length} rows)`);
      return shown.join('\n') === want ? rows : undefined;
    });
    expect(
      expected.devices.every((d) => d.errorType === errorType && d.errorClass),
      `each device of the JSON API's page has the error type and a class: ${JSON.stringify(expected.devices)}`,
    ).to.equal(true);
    const csvHref = await p.getByRole('link', { name: 'Download CSV' }).getAttribute('href');
    expect(csvHref, 'the Download CSV link').to.be.a('string');
    const csvUrl = new URL(csvHref!, p.url());
    expect(csvUrl.pathname).to.equal(`/console/api/runs/${reportRunId}/devices.csv`);
    expect(csvUrl.searchParams.get('errorType'), `the CSV link ${csvHref} carries the filter`).to.equal(
      errorType,
    );
    const csv = await fetch(new URL(csvUrl.pathname + csvUrl.search, t.daemon.url), {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(csv.status).to.equal(200);
    // Lines as report.write writes the ledger: its columns, LF line breaks, fields quoted as RFC 4180 says.
    const csvLines = (await csv.text()).split('\n').filter((l) => l !== '');
    expect(csvLines[0]).to.equal(
      'runId,step,deviceId,kind,outcome,errorType,errorClass,attempts,at,requestId',
    );
    expect(csvLines.length - 1, 'rows of the CSV').to.equal(expected.devices.length);
    expect(
      csvLines.slice(1).filter((l) => l.split(',')[5] !== errorType),
      `CSV rows not of error type ${errorType}`,
    ).to.deep.equal([]);
    await step('06-report-devices-filtered', `the report run's devices filtered by ${errorType}`);

    // 6. A device of the table: its history holds this run.
    const link = cells(devicesTable.locator(':scope > tbody > tr').first()).nth(deviceCol).getByRole('link');
    const deviceId = await link.innerText();
    expect(filtered[0]![deviceCol], 'the first row: its device id, then its kind').to.equal(
      `${deviceId} imei`,
    );
    await link.click();
    await heading(`Device ${deviceId}`).waitFor();
    const history = tableCaptioned(p, 'History');
    await until(`a History row of run ${reportRunId}`, async (seen) => {
      const rows = await history.locator(':scope > tbody > tr').all();
      seen(JSON.stringify(await bodyRows(history)));
      for (const row of rows) {
        if ((await row.locator(`a[href*="${reportRunId}"]`).count()) > 0) return true;
        if ((await row.innerText()).includes(reportRunId)) return true;
      }
      return undefined;
    });
    await step('07-device', `the page of device ${deviceId}`);

    // 7. The long run, started from its form and cancelled from its page.
    await nav('Playbooks').click();
    await heading('Playbooks').waitFor();
    await p
      .getByRole('form', { name: `Start ${LONG_PLAYBOOK}` })
      .getByRole('button', { name: 'Start run' })
      .click();
    await heading(/^Run /).waitFor();
    const longRunId = await until('the long run id in the address', async (seen) => {
      seen(p.url());
      const id = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/.exec(p.url())?.[0];
      return id && id !== reportRunId ? id : undefined;
    });
    expect((await runDetail(longRunId)).run.playbook).to.equal(LONG_PLAYBOOK);
    await until('the long run shown running', async (seen) => runStatusIs(p, 'running', seen), 20_000);
    await step('08-long-run', 'the page of the long run');
    await p.getByRole('button', { name: 'Cancel run' }).click();
    await p.getByRole('button', { name: 'Confirm cancel' }).click();
    await until(
      'the long run shown cancelled',
      async (seen) => runStatusIs(p, 'cancelled', seen),
      30_000,
      500,
    );
    const cancelled = await runDetail(longRunId);
    expect(cancelled.run.status, 'the long run (JSON API)').to.equal('cancelled');
    expect(cancelled.run.error).to.equal('cancelled from the console');
    // Its step in flight was cancelled with it, not failed.
    // The step after it was never reached.
    expect(cancelled.run.steps?.map((s) => [s.id, s.status, s.error])).to.deep.equal([
      ['hold', 'cancelled', 'cancelled from the console'],
      ['done', 'unreached', undefined],
    ]);
    expect(cancelled.cancellable).to.equal(false);
    await step('09-long-run-cancelled', 'the page of the cancelled run');

    // 8. The callbacks and the rate budgets.
    await nav('Callbacks').click();
    await heading('Callbacks').waitFor();
    const recent = tableCaptioned(p, 'Recent callbacks');
    await until(`the callback ${REQUEST_ID} among the recent ones`, async (seen) => {
      const rows = await bodyRows(recent);
      seen(JSON.stringify(rows));
      return rows.some((r) => r.some((c) => c.includes(REQUEST_ID))) ? true : undefined;
    });
    await step('10-callbacks', 'the callbacks page');
    await nav('Rate budgets').click();
    await heading('Rate budgets').waitFor();
    const rates = tableCaptioned(p, 'Rate budgets');
    await until('the rate budgets', async (seen) => {
      const rows = await bodyRows(rates);
      seen(JSON.stringify(rows));
      return rows.some((r) => r.some((c) => /^(m2m|loc)\b/.test(c))) ? true : undefined;
    });
    await step('11-rates', 'the rate budgets page');
    // Every area with the numbers docs/console.md gives it, in the API and in the table.
    const { areas } = await apiGet<{ areas: Json[] }>('/rates');
    const numbers = ['budget', 'concurrency', 'inFlight', 'waiting', 'throttled'];
    expect(
      areas.flatMap((a) =>
        numbers
          .filter((k) => typeof a[k] !== 'number')
          .map((k) => `${String(a.area)}: ${k} is ${String(a[k])}`),
      ),
      `GET /console/api/rates: ${JSON.stringify(areas)}`,
    ).to.deep.equal([]);
    const rateCols = await columns(rates);
    const numberCols = ['Budget (req/s)', 'Concurrency', 'In flight', 'Waiting', '429s'].map((c) =>
      column(rateCols, c),
    );
    expect(
      (await bodyRows(rates)).flatMap((r) =>
        numberCols
          .filter((i) => !/^\d+(\.\d+)?$/.test(r[i] ?? ''))
          .map((i) => `${r[0]}: ${rateCols[i]} shows "${r[i]}"`),
      ),
      'the rate budgets table',
    ).to.deep.equal([]);

    expect(t.pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    console.log(`    screenshots:\n      ${shots.join('\n      ')}`);
  });

  it('tells runs started in the same minute apart by the ids it shows', async () => {
    const ids = [await reportRun(), await reportRun()];
    const { p, close } = await t.signedIn();
    try {
      await p.goto(`${t.daemon.url}/#/runs?playbook=${REPORT_PLAYBOOK}`);
      const table = tableCaptioned(p, 'Runs');
      const shown = await until('the two runs listed', async (seen) => {
        const texts = await Promise.all(
          ids.map(async (id) => {
            const link = table.locator(`tr[data-run-id="${id}"]`).getByRole('link');
            return (await link.count()) ? (await link.innerText()).trim() : undefined;
          }),
        );
        seen(JSON.stringify(texts));
        return texts.every((t) => t !== undefined) ? (texts as string[]) : undefined;
      });
      expect(new Set(shown).size, `the ids shown for runs ${ids.join(', ')}: ${shown.join(', ')}`).to.equal(
        2,
      );
      const headings: string[] = [];
      for (const id of ids) {
        await p.goto(`${t.daemon.url}/#/runs/${id}`);
        await p.getByRole('heading', { name: 'Steps', exact: true }).waitFor();
        headings.push(await p.getByRole('heading', { level: 1 }).innerText());
      }
      expect(new Set(headings).size, `the headings of the two runs: ${headings.join(', ')}`).to.equal(2);
      const csv = await fetch(`${t.daemon.url}/console/api/runs/${ids[0]}/devices.csv`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(csv.headers.get('content-disposition'), 'the CSV file name').to.equal(
        `attachment; filename="run-${ids[0]}-devices.csv"`,
      );
      await csv.body?.cancel();
    } finally {
      await close();
    }
  });

  it('shows no rows of the filters before under a filter the daemon refuses', async () => {
    const runId = await reportRun();
    const { p, close } = await t.signedIn();
    try {
      const refused = async (table: Locator, address: string, error: RegExp) => {
        await p.goto(`${t.daemon.url}/${address}`);
        await until(`the error of ${address}`, async (seen) => {
          const alerts = await p.getByRole('alert').allInnerTexts();
          seen(JSON.stringify(alerts));
          return alerts.some((a) => error.test(a)) ? true : undefined;
        });
        expect(await bodyRows(table), `the rows under ${address}`).to.deep.equal([]);
      };
      const runs = tableCaptioned(p, 'Runs');
      await p.goto(`${t.daemon.url}/#/runs?playbook=${REPORT_PLAYBOOK}`);
      await runs.locator(`tr[data-run-id="${runId}"]`).waitFor();
      await refused(runs, '#/runs?status=over', /^status must be one of/);

      const devices = tableCaptioned(p, 'Devices');
      await p.goto(`${t.daemon.url}/#/runs/${runId}?outcome=failed`);
      await devices.locator(':scope > tbody > tr a').first().waitFor();
      await refused(devices, `#/runs/${runId}?outcome=over`, /^outcome must be one of/);
    } finally {
      await close();
    }
  });

  it('keeps the runs "Load more" brought in the address: a reload and Back show them again', async () => {
    // Runs of a playbook of their own, a minute apart, ended: more than two pages of the list.
    const store = new SqliteStore(t.state);
    const start = Date.parse('2026-01-01T00:00:00.000Z');
    for (let i = 0; i < 120; i++)
      store.createRun({
        id: `0000b01c-0000-4000-8000-${String(i).padStart(12, '0')}`,
        playbook: 'bulk',
        status: 'succeeded',
        trigger: { type: 'manual' },
        inputs: {},
        startedAt: new Date(start + i * 60_000).toISOString(),
        endedAt: new Date(start + i * 60_000 + 1000).toISOString(),
      });
    await store.close();
    const all = (await apiGet<{ runs: RunRow[] }>('/runs?playbook=bulk&limit=200')).runs.map((r) => r.id);
    expect(all.length).to.equal(120);
    const { p, close } = await t.signedIn();
    try {
      const rows = p.locator('#runs-table tbody tr[data-run-id]');
      const shows = (what: string, n: number) =>
        until(what, async (seen) => {
          const ids = await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-run-id')));
          seen(`${p.url()}: ${ids.length} rows`);
          return JSON.stringify(ids) === JSON.stringify(all.slice(0, n)) ? true : undefined;
        });
      const loadMore = p.getByRole('button', { name: 'Load more' });
      await p.goto(`${t.daemon.url}/#/runs?playbook=bulk`);
      await shows('the first page', 50);
      await loadMore.click();
      await shows('two pages', 100);
      expect(p.url(), 'the address').to.match(/#\/runs\?playbook=bulk&more=/);
      await p.reload();
      await shows('two pages, reloaded', 100);
      await rows.nth(80).getByRole('link').click();
      await p.getByRole('heading', { name: /^Run / }).waitFor();
      await p.goBack();
      await shows('two pages, back from a run of the second', 100);
      await loadMore.click();
      await shows('every run', 120);
      expect(await loadMore.count(), 'Load more, every run shown').to.equal(0);
      await p.reload();
      await shows('every run, reloaded', 120);
      // Another filter lists from the first page.
      await p
        .getByRole('form', { name: 'Filter runs' })
        .getByRole('combobox', { name: 'Status' })
        .selectOption('succeeded');
      await shows('the first page of another filter', 50);
      expect(p.url(), 'the address of another filter').to.not.include('more=');
      expect(t.pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    } finally {
      await close();
    }
  });
});
