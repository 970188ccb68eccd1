/**
 * The console's device table and device page (docs/console.md) against a real `fleetbook serve` and a headless
 * Chromium (test/helpers/console-suite.ts): a run's device filters and page live in the address, so Back from a
 * device's page and a reload show them again.
 */
import { expect } from 'chai';
import { until } from '../helpers/browser.js';
import { operatorSuite, type DeviceRow } from '../helpers/console-operator.js';
import { bodyRows, tableCaptioned } from '../helpers/console-suite.js';

describe('console: the device table and page', function () {
  this.timeout(180_000);
  const { t, apiGet, runDetail, reportRun } = operatorSuite('console-device-page');

  it("keeps a run's device filters and page in the address: Back from a device and a reload show them", async () => {
    const runId = await reportRun();
    const { byError } = (await runDetail(runId)).run.devices!;
    const [errorType] = Object.entries(byError).sort((a, b) => b[1] - a[1])[0]!;
    // A row as the table shows its first two cells: the step, then the device's id with its kind.
    const rowOf = (d: DeviceRow) => `${d.step} ${d.deviceId} ${d.kind}`;
    const devicesOf = async (q: string) =>
      (await apiGet<{ devices: DeviceRow[]; next?: string }>(`/runs/${runId}/devices${q}`)).devices.map(
        rowOf,
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
      await shows('the first page', page1.devices.map(rowOf));
      expect(t.pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    } finally {
      await close();
    }
  });
});
