/**
 * The console's pages fit the window's width (docs/console.md): on a laptop's 1280 or 1024 pixels and on a phone's
 * 390, a page never scrolls sideways as a whole. A table wider than the window (a run's devices with their request
 * ids, on a phone) scrolls sideways on its own, its page around it still; on a wide window a long id wraps within
 * its cell. Against a real `fleetbook serve` and a headless Chromium, on a report run with device errors, its
 * playbooks in a folder whose path (which the playbooks page shows) is wider than a phone, as a checkout's can be.
 */
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { screenshot, until } from '../helpers/browser.js';
import { FIXTURES, operatorSuite } from '../helpers/console-operator.js';
import { tableCaptioned } from '../helpers/console-suite.js';
import { tempDir } from '../helpers/temp.js';

/** How far the page scrolls sideways: the document's width beyond the window's. */
const sideways = (p: Page) =>
  p.evaluate('document.documentElement.scrollWidth - window.innerWidth') as Promise<number>;

describe('console: pages fit the width of the window', function () {
  this.timeout(180_000);
  const playbooks = join(
    tempDir('console-page-width-'),
    'home/operator/src/github.com/acmecorp/fleetops/playbooks',
  );
  cpSync(FIXTURES, playbooks, { recursive: true });
  const { t, reportRun, apiGet } = operatorSuite('console-page-width', playbooks);

  it('shows every page without sideways scrolling at 1280, 1024 and 390 pixels', async () => {
    const runId = await reportRun();
    const { devices } = await apiGet<{ devices: { deviceId: string }[] }>(`/runs/${runId}/devices`);
    const device = devices[0]!.deviceId;
    const pages: [string, string][] = [
      ['Runs', '#/runs'],
      [`Run `, `#/runs/${runId}`],
      ['Device ', `#/devices/${encodeURIComponent(device)}`],
      ['Playbooks', '#/playbooks'],
      ['Callbacks', '#/callbacks'],
      ['Rate budgets', '#/rates'],
    ];
    const { p, close } = await t.signedIn();
    try {
      const wide: string[] = [];
      for (const width of [1280, 1024, 390]) {
        await p.setViewportSize({ width, height: 900 });
        for (const [heading, hash] of pages) {
          await p.goto(`${t.daemon.url}/${hash}`);
          await p.getByRole('heading', { level: 1, name: new RegExp(`^${heading}`) }).waitFor();
          // Each page filled: its tables' rows (the playbooks' cards), the widest content there is.
          await p
            .locator(hash === '#/playbooks' ? 'main h2' : 'table.data tbody tr')
            .first()
            .waitFor();
          const by = await sideways(p);
          if (by > 0) wide.push(`${hash} at ${width} px scrolls ${by} px sideways`);
          if (width !== 1024 && hash !== '#/playbooks')
            await screenshot(p, `width-${width}-${heading.trim().toLowerCase().replace(/ /g, '-')}`);
        }
      }
      expect(wide, 'pages wider than the window').to.deep.equal([]);

      // The run's device table, too wide for a phone, scrolls sideways in its frame; on a laptop's screen it fits,
      // its frame does not scroll, so that its header stays in view as the page scrolls down.
      const table = tableCaptioned(p, 'Devices');
      const frame = table.locator('xpath=..');
      const frameOf = () =>
        frame.evaluate((e) => ({
          wider: e.scrollWidth > e.clientWidth,
          overflowX: (
            globalThis as unknown as { getComputedStyle(e: unknown): { overflowX: string } }
          ).getComputedStyle(e).overflowX,
        }));
      await p.setViewportSize({ width: 390, height: 900 });
      await p.goto(`${t.daemon.url}/#/runs/${runId}`);
      await table.locator('tbody tr').first().waitFor();
      expect(await frameOf(), 'on a phone').to.deep.equal({ wider: true, overflowX: 'auto' });
      // A laptop's 1280 pixels hold the whole table: the frame does not scroll, no column cut at its edge.
      await p.setViewportSize({ width: 1280, height: 900 });
      await until("the frame stops scrolling on a laptop's screen", async (seen) => {
        const now = await frameOf();
        seen(JSON.stringify(now));
        return !now.wider && now.overflowX === 'visible' ? true : undefined;
      });
      const header = table.locator('thead th').first();
      await table.locator('tbody tr').last().scrollIntoViewIfNeeded();
      const top = await header.evaluate((e) => Math.round(e.getBoundingClientRect().top));
      expect(top, 'the header, the page scrolled down to the last row').to.equal(0);
      expect(t.pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    } finally {
      await close();
    }
  });
});
