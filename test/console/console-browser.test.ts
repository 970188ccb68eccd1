/**
 * The console (docs/console.md) end to end, as an operator uses it: a real `fleetbook serve` on an emulator of
 * this process, its SQLite state in a temporary directory, a console token set, and a headless Chromium
 * (test/helpers/browser.ts) on its page. The operator signs in by the address with the token, watches a callback's
 * run appear and end live, opens it, starts a report from its playbook's form and filters its devices by an error
 * type (the same rows the JSON API gives, the CSV link with the same filter), opens a device's history, starts a
 * long run and cancels it, and visits the callbacks and rate budgets pages: each step is screenshotted
 * (test-output/console/) and checked by axe-core. Beside it, the access rules of the JSON API on loopback.
 */
import { spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Locator, Page } from 'playwright-core';
import { checkAccessibility, screenshot, until } from '../helpers/browser.js';
import { BIN, emulatorEnv, fleetbook } from '../helpers/cli.js';
import { consoleSuite } from '../helpers/console-suite.js';
import { accountDevices, imei } from '../runner/helpers.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'console');
/** The console token: 32 characters. */
const TOKEN = 'console-browser-token-0123456789';
const CALLBACK_PLAYBOOK = 'usage-locate';
const REPORT_PLAYBOOK = 'location-report';
const LONG_PLAYBOOK = 'long-wait';
const REQUEST_ID = 'console-usage-1';
/** Devices of the emulator's one account: enough for the report to end with several error types. */
const DEVICES = 200;
/** Location errors the emulator adds to the seed's own (a cache miss, a device that is not IoT). */
const DEVICE_ERRORS = { 'ABSENT SUBSCRIBER': 0.05, 'SVC CONSENT CHECK FAILED': 0.04 };

type Json = Record<string, unknown>;

interface DeviceCounts {
  total: number;
  succeeded: number;
  failed: number;
  skipped: number;
  byError: Record<string, number>;
}

interface RunRow {
  id: string;
  playbook: string;
  status: string;
  trigger: { type: string; requestId?: string };
  devices?: DeviceCounts;
  inputs?: Json;
  error?: string;
  steps?: { id: string; status: string; error?: string }[];
}

interface DeviceRow {
  step: string;
  deviceId: string;
  outcome: string;
  errorType?: string;
}

/** The header texts of a table, in order. */
async function columns(table: Locator): Promise<string[]> {
  return (await table.locator('thead th').allInnerTexts()).map((s) => s.trim());
}

/** The index of the column headed `name` (case ignored); fails listing the headers there are. */
function column(cols: string[], name: string): number {
  const i = cols.findIndex((c) => c.toLowerCase() === name.toLowerCase());
  expect(i, `a column "${name}" among ${JSON.stringify(cols)}`).to.be.at.least(0);
  return i;
}

/** A row's cells (td or th), not those of a table nested in it. */
const cells = (row: Locator) => row.locator(':scope > td, :scope > th');

/** The texts of every body row of a table, cell by cell. */
async function bodyRows(table: Locator): Promise<string[][]> {
  const rows = await table.locator(':scope > tbody > tr').all();
  return Promise.all(rows.map(async (r) => (await cells(r).allInnerTexts()).map((s) => s.trim())));
}

/** The table whose caption says `caption`, exactly (a chart's table, "Runs over time", is not the runs table). */
const tableCaptioned = (page: Page, caption: string) =>
  page.locator('table', {
    has: page.locator('caption', { hasText: new RegExp(`^\\s*${caption}\\s*$`) }),
  });

describe('console: an operator in a browser', function () {
  this.timeout(180_000);
  const t = consoleSuite({
    name: 'console',
    playbooks: FIXTURES,
    token: TOKEN,
    env: { FLEETBOOK_LOG_LEVEL: 'info' },
    emulator: { devicesPerAccount: DEVICES, faults: { deviceErrors: DEVICE_ERRORS } },
  });

  /** The console's JSON API, as a script calls it: with the token as a bearer. */
  async function apiGet<T>(path: string): Promise<T> {
    const res = await fetch(`${t.daemon.url}/console/api${path}`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const text = await res.text();
    expect(res.status, `GET /console/api${path}: ${text.slice(0, 500)}`).to.equal(200);
    return JSON.parse(text) as T;
  }

  const runDetail = (id: string) =>
    apiGet<{
      run: RunRow & { version?: string; cancelRequested?: string };
      cancellable: boolean;
      cancelBy?: { holder?: string; serve?: string };
    }>(`/runs/${encodeURIComponent(id)}`);

  /** A `fleetbook run` of the long playbook on the daemon's state file, with its own lease: a run it holds. */
  const runElsewhere = (lease: string) =>
    spawn(process.execPath, [BIN, 'run', join(FIXTURES, `${LONG_PLAYBOOK}.yaml`)], {
      env: {
        PATH: process.env.PATH ?? '',
        ...emulatorEnv(t.emu),
        FLEETBOOK_STATE: t.state,
        FLEETBOOK_LEASE: lease,
      },
      stdio: 'ignore',
    });

  /** A report run started by the JSON API, as a script starts it, once it has succeeded: its id. */
  async function reportRun(): Promise<string> {
    const res = await fetch(`${t.daemon.url}/console/api/playbooks/${REPORT_PLAYBOOK}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ inputs: { account: t.account } }),
    });
    const text = await res.text();
    expect(res.status, `starting ${REPORT_PLAYBOOK}: ${text}`).to.equal(202);
    const { runId } = JSON.parse(text) as { runId: string };
    await until(
      `run ${runId} succeeded`,
      async (seen) => {
        const { status } = (await runDetail(runId)).run;
        seen(status);
        return status === 'succeeded' ? true : undefined;
      },
      60_000,
      500,
    );
    return runId;
  }

  it('refuses a query parameter a read does not take, or one given twice, naming those it takes', async () => {
    const answers: Record<string, string> = {};
    for (const path of [
      '/runs?stat=failed',
      '/runs?status=failed&status=succeeded',
      '/runs/x/devices?outcom=failed',
      '/runs/x/devices.csv?limit=5',
      '/charts/runs?days=2',
      '/rates?area=m2m',
      '/runs/stream?playbook=nightly',
    ]) {
      const res = await fetch(`${t.daemon.url}/console/api${path}`);
      answers[path] = `${res.status} ${((await res.json()) as { error: string }).error}`;
    }
    expect(answers).to.deep.equal({
      '/runs?stat=failed':
        '400 unknown query parameter "stat": this path takes playbook, status, trigger, from, to, before, limit',
      '/runs?status=failed&status=succeeded': '400 status is given 2 times: give it once',
      '/runs/x/devices?outcom=failed':
        '400 unknown query parameter "outcom": this path takes step, outcome, errorType, device, after, limit',
      '/runs/x/devices.csv?limit=5':
        '400 unknown query parameter "limit": this path takes step, outcome, errorType, device',
      '/charts/runs?days=2': '400 unknown query parameter "days": this path takes hours',
      '/rates?area=m2m': '400 unknown query parameter "area": this path takes none',
      '/runs/stream?playbook=nightly': '400 unknown query parameter "playbook": this path takes none',
    });
  });

  it('reads without credentials on loopback, and acts only with the token (and the header, with the cookie)', async () => {
    const url = `${t.daemon.url}/console/api`;
    const open = await fetch(`${url}/runs`);
    expect(open.status, 'GET /console/api/runs without credentials, on loopback').to.equal(200);
    expect(await open.json())
      .to.have.property('runs')
      .that.is.an('array');

    const overview = (await (await fetch(`${url}/overview`)).json()) as Json;
    expect(overview, 'the overview without credentials').to.include({
      readNeedsToken: false,
      authenticated: false,
      store: 'sqlite',
    });

    // Each start names a bad input: one that gets past the access rules is answered 400, and starts nothing.
    const start = async (headers: Record<string, string>) => {
      const res = await fetch(`${url}/playbooks/${REPORT_PLAYBOOK}/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ inputs: { batch: 'not a number' } }),
      });
      return `${res.status} ${await res.text()}`;
    };
    const session = await fetch(`${url}/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-fleetbook-console': '1' },
      body: JSON.stringify({ token: TOKEN }),
    });
    expect(session.status, 'POST /console/api/session with the token').to.equal(204);
    const cookie = (session.headers.get('set-cookie') ?? '').split(';')[0]!;
    expect(cookie, 'the session cookie').to.match(/^[^=]+=.+/);
    expect(session.headers.get('set-cookie'), 'the session cookie')
      .to.match(/HttpOnly/i)
      .and.match(/SameSite=Strict/i);
    expect(cookie, 'the session cookie does not hold the token').to.not.include(TOKEN);

    const bearer = `Bearer ${TOKEN}`;
    const header = { 'x-fleetbook-console': '1' };
    const cases: [string, Record<string, string>][] = [
      ['no credentials, with the header', header],
      ['no credentials, no header', {}],
      ['a wrong bearer, with the header', { ...header, authorization: `Bearer ${'x'.repeat(32)}` }],
      ['the bearer, no header', { authorization: bearer }],
      ['the session cookie, no header', { cookie }],
      ['the bearer and the header', { ...header, authorization: bearer }],
      ['the session cookie and the header', { ...header, cookie }],
    ];
    const expected: Record<string, number> = {
      // docs/console.md: acting always needs the token...
      'no credentials, with the header': 401,
      'no credentials, no header': 401,
      'a wrong bearer, with the header': 401,
      // ...and "an action (POST) made with the cookie also needs the header X-Fleetbook-Console: 1", which a
      // page of another site cannot send; a script's bearer, which such a page cannot send either, does not.
      'the bearer, no header': 400,
      'the session cookie, no header': 403,
      'the bearer and the header': 400,
      'the session cookie and the header': 400,
    };
    const answers: Record<string, string> = {};
    for (const [name, headers] of cases) answers[name] = await start(headers);
    expect(
      Object.fromEntries(Object.entries(answers).map(([k, v]) => [k, Number(v.slice(0, 3))])),
      `POST /console/api/playbooks/${REPORT_PLAYBOOK}/runs, answered:\n${JSON.stringify(answers, null, 2)}\n`,
    ).to.deep.equal(expected);
    expect(answers['the bearer and the header'], 'the 400 names the bad input').to.match(/batch/);
    // A body that says anything but `inputs` is refused, not started on the playbook's defaults.
    const misnamed = await fetch(`${url}/playbooks/${REPORT_PLAYBOOK}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...header, authorization: bearer },
      body: JSON.stringify({ input: { batch: 5 } }),
    });
    expect([misnamed.status, await misnamed.json()]).to.deep.equal([
      400,
      { error: 'unknown field "input" in the body: it takes "inputs"' },
    ]);

    const runs = await apiGet<{ runs: RunRow[] }>(`/runs?playbook=${REPORT_PLAYBOOK}`);
    expect(runs.runs, 'runs the refused starts started').to.deep.equal([]);
  });

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
      return located.every((id) => rows.some((r) => r.includes(id))) ? true : undefined;
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
        const want = page.devices.map((d) => `${d.step} ${d.deviceId}`);
        return JSON.stringify(shown) === JSON.stringify(want) ? true : undefined;
      });
    const page1 = await apiGet<{ devices: DeviceRow[]; next?: string }>(`/runs/${reportRunId}/devices`);
    expect(page1.next, 'the report has more devices than a page').to.be.a('string');
    const page2 = await apiGet<{ devices: DeviceRow[]; next?: string }>(
      `/runs/${reportRunId}/devices?after=${encodeURIComponent(page1.next!)}`,
    );
    await shows('the first page of devices, as the JSON API gives it', page1);
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
    const filtered = await until(`the devices table filtered by ${errorType}`, async (seen) => {
      const rows = await bodyRows(devicesTable);
      seen(JSON.stringify(rows.slice(0, 5)) + ` (${rows.length} rows)`);
      return rows.length === expected.devices.length && rows.every((r) => r[errorCol] === errorType)
        ? rows
        : undefined;
    });
    expect(
      filtered.map((r) => r[deviceCol]).sort(),
      'the device ids shown are those of the JSON API',
    ).to.deep.equal(expected.devices.map((d) => d.deviceId).sort());
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
    const deviceId = filtered[0]![deviceCol]!;
    await cells(devicesTable.locator(':scope > tbody > tr').first()).nth(deviceCol).getByRole('link').click();
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
    expect(cancelled.run.steps?.map((s) => [s.id, s.status, s.error])).to.deep.equal([
      ['hold', 'cancelled', 'cancelled from the console'],
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
      await until('the run shown running', async (seen) => runStatusIs(p, 'running', seen));
      await p.getByRole('button', { name: 'Cancel run' }).click();
      await p.getByRole('button', { name: 'Confirm cancel' }).click();
      const asked = await until('the cancel shown requested', async (seen) => {
        const text = await factOf(p, 'Cancel requested');
        seen(text);
        return text.startsWith('(no') ? undefined : text;
      });
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
      await until('the run shown running', async (seen) => runStatusIs(p, 'running', seen));
      await p.getByRole('button', { name: 'Cancel run' }).click();
      await p.getByRole('button', { name: 'Confirm cancel' }).click();
      const asked = await until('the cancel shown requested', async (seen) => {
        const text = await factOf(p, 'Cancel requested');
        seen(text);
        return text.startsWith('(no') ? undefined : text;
      });
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

  it('says why Cancel run asks to sign in, and brings the run page back, the run not cancelled', async () => {
    const res = await fetch(`${t.daemon.url}/console/api/playbooks/${LONG_PLAYBOOK}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ inputs: {} }),
    });
    expect(res.status, `starting ${LONG_PLAYBOOK}`).to.equal(202);
    const { runId } = (await res.json()) as { runId: string };
    const { p, context } = await t.freshPage();
    try {
      // On loopback, the run page reads without a session; cancelling needs one.
      await p.goto(`${t.daemon.url}/#/runs/${runId}`);
      await until('the run shown running', async (seen) => runStatusIs(p, 'running', seen));
      await p.getByRole('button', { name: 'Cancel run' }).click();
      await p.getByRole('button', { name: 'Confirm cancel' }).click();

      await p.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
      const why = p.getByRole('status');
      expect(await why.count(), 'a status on the sign-in form that says why').to.equal(1);
      expect(await why.innerText()).to.match(/^Cancelling a run needs signing in\./);
      console.log(`    screenshot: ${await screenshot(p, '15-cancel-sign-in')}`);
      await checkAccessibility(p, 'the sign-in form asked for by Cancel run');
      const refused = await runDetail(runId);
      expect([refused.run.status, refused.run.cancelRequested], 'the run, before signing in').to.deep.equal([
        'running',
        undefined,
      ]);

      await p.getByLabel('Console token', { exact: true }).fill(TOKEN);
      await p.getByRole('button', { name: 'Sign in', exact: true }).click();
      await p.getByRole('heading', { name: /^Run / }).waitFor();
      expect(p.url(), 'the page once signed in').to.match(new RegExp(`#/runs/${runId}$`));
      await until('the run shown running', async (seen) => runStatusIs(p, 'running', seen));
      const cancel = p.getByRole('button', { name: 'Cancel run' });
      await cancel.waitFor();
      expect((await p.getByRole('status').innerText()).trim(), 'the note once signed in').to.equal(
        'Signed in. The run is not cancelled: cancel it again if you still want to.',
      );
      // Focus goes to the button, where the operator left off, not to the top of the page.
      await until('the focus on Cancel run', async (seen) => {
        const focused = await p.evaluate(() => {
          const el = (
            globalThis as unknown as { document: { activeElement: { textContent: string } | null } }
          ).document.activeElement;
          return el?.textContent?.trim() ?? '';
        });
        seen(focused);
        return focused === 'Cancel run' ? true : undefined;
      });
      console.log(`    screenshot: ${await screenshot(p, '16-cancel-signed-in')}`);
      await checkAccessibility(p, 'the run page given back after signing in');
      const signed = await runDetail(runId);
      expect([signed.run.status, signed.run.cancelRequested], 'the run, signed in').to.deep.equal([
        'running',
        undefined,
      ]);

      await cancel.click();
      await p.getByRole('button', { name: 'Confirm cancel' }).click();
      await until('the run shown cancelled', async (seen) => runStatusIs(p, 'cancelled', seen), 30_000, 500);
      expect((await runDetail(runId)).run.error).to.equal('cancelled from the console');
      expect(t.pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    } finally {
      await context.close();
      // Whatever happened above, the run does not wait its ten minutes.
      await fetch(`${t.daemon.url}/console/api/runs/${runId}/cancel`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}` },
      });
    }
  });

  it('asks for the token when the one in the address is wrong, and signs in with it', async () => {
    const { p, context } = await t.freshPage();
    try {
      const wrong = 'w'.repeat(32);
      await p.goto(`${t.daemon.url}/#token=${wrong}`);
      await p.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
      expect(p.url(), 'the address, the wrong token taken out').to.not.include(wrong);
      expect(await p.getByRole('alert').innerText(), 'why the address did not sign in').to.match(/token/i);
      console.log(`    screenshot: ${await screenshot(p, '12-sign-in')}`);
      await checkAccessibility(p, 'the sign-in form');
      await p.getByLabel('Console token', { exact: true }).fill(TOKEN);
      await p.getByRole('button', { name: 'Sign in', exact: true }).click();
      await p.getByRole('heading', { name: 'Runs', exact: true }).waitFor();
      const cookies = await context.cookies(t.daemon.url);
      expect(cookies, 'the session cookie').to.have.length(1);
      expect(cookies[0]).to.include({ httpOnly: true, sameSite: 'Strict' });
      expect(cookies[0]!.value, 'the session cookie does not hold the token').to.not.include(TOKEN);
      expect(t.pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    } finally {
      await context.close();
    }
  });

  it('refuses a number field whose text is no number, naming it, and starts nothing', async () => {
    const { p, close } = await t.signedIn();
    try {
      const before = (await apiGet<{ runs: RunRow[] }>(`/runs?playbook=${REPORT_PLAYBOOK}`)).runs;
      await p.goto(`${t.daemon.url}/#/playbooks`);
      const form = p.getByRole('form', { name: `Start ${REPORT_PLAYBOOK}` });
      const batch = form.getByLabel('batch', { exact: true });
      // Keys a number field takes, typed as an operator types them: `1e` is no number.
      await batch.fill('');
      await batch.pressSequentially('1e');
      await form.getByRole('button', { name: 'Start run' }).click();
      const said = await until('why the form did not start', async (seen) => {
        seen(p.url());
        const alert = form.getByRole('alert');
        return (await alert.count()) ? alert.innerText() : undefined;
      });
      expect(said).to.equal('Input batch: what is typed is not a number.');
      expect(p.url(), 'the page').to.match(/#\/playbooks$/);
      const after = (await apiGet<{ runs: RunRow[] }>(`/runs?playbook=${REPORT_PLAYBOOK}`)).runs;
      expect(
        after.map((r) => r.id),
        'the runs of the playbook',
      ).to.deep.equal(before.map((r) => r.id));
      expect(t.pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    } finally {
      await close();
    }
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

  it("keeps a run's device filters and page in the address: Back from a device and a reload show them", async () => {
    const runId = await reportRun();
    const { byError } = (await runDetail(runId)).run.devices!;
    const [errorType] = Object.entries(byError).sort((a, b) => b[1] - a[1])[0]!;
    const devicesOf = async (q: string) =>
      (await apiGet<{ devices: DeviceRow[]; next?: string }>(`/runs/${runId}/devices${q}`)).devices.map(
        (d) => `${d.step} ${d.deviceId}`,
      );
    const page1 = await apiGet<{ devices: DeviceRow[]; next?: string }>(`/runs/${runId}/devices`);
    expect(page1.next, 'the run has more devices than a page').to.be.a('string');
    const page2 = await devicesOf(`?after=${encodeURIComponent(page1.next!)}`);
    const ofError = await devicesOf(`?errorType=${encodeURIComponent(errorType)}`);
    const { p, close } = await t.signedIn();
    try {
      const table = tableCaptioned(p, 'Devices');
      const shows = (what: string, want: string[]) =>
        until(what, async (seen) => {
          const rows = (await bodyRows(table)).map((r) => `${r[0]} ${r[1]}`);
          seen(`${p.url()}: ${rows.length} rows: ${rows.slice(0, 3).join(', ')}...`);
          return JSON.stringify(rows) === JSON.stringify(want) ? true : undefined;
        });
      const errorSelect = p.getByRole('combobox', { name: 'Error type', exact: true });
      await p.goto(`${t.daemon.url}/#/runs/${runId}`);
      await p.getByRole('button', { name: 'Next page' }).click();
      await shows('the second page', page2);
      await errorSelect.selectOption(errorType);
      await shows(`the devices of error type ${errorType}`, ofError);
      await table.locator(':scope > tbody > tr').first().getByRole('link').click();
      await p.getByRole('heading', { name: /^Device / }).waitFor();

      await p.goBack();
      await shows(`back from the device: the devices of error type ${errorType}`, ofError);
      expect(await errorSelect.inputValue(), 'the Error type filter').to.equal(errorType);
      await p.goBack();
      await shows('back again: the second page', page2);
      expect(await errorSelect.inputValue(), 'the Error type filter').to.equal('');
      await p.reload();
      await shows('the second page, reloaded', page2);
      await p.getByRole('button', { name: 'First page' }).click();
      await shows(
        'the first page',
        page1.devices.map((d) => `${d.step} ${d.deviceId}`),
      );
      expect(t.pageErrors, 'uncaught errors in the page').to.deep.equal([]);
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
});

/** What the run page's fact named `name` says, or `(no <name> shown)`. */
async function factOf(page: Page, name: string): Promise<string> {
  const fact = page
    .locator('main dl > div')
    .filter({ has: page.locator('dt', { hasText: new RegExp(`^\\s*${name}\\s*$`) }) })
    .locator('dd');
  return (await fact.count()) ? (await fact.first().innerText()).trim() : `(no ${name} shown)`;
}

/** Whether the run page's status (the Status of its facts) says `status`; what it says goes to `seen`. */
async function runStatusIs(page: Page, status: string, seen: (s: string) => void): Promise<true | undefined> {
  const text = await factOf(page, 'Status');
  seen(`status "${text}"`);
  return text.toLowerCase() === status ? true : undefined;
}
