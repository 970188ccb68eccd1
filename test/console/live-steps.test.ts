/**
 * The console's run page of a run in progress lists its steps as they stand, kept current as the page polls:
 * those it ended as they ended, the one it is in `running`, the rest `pending`, each with a badge of its own, and
 * the timeline times the one under way from when it began (and those that ended) and says which are to come.
 * Before, it said "No steps recorded yet" until the run ended, and then the step under way had no time. A real `fleetbook serve` and a headless Chromium (test/helpers/console-suite.ts).
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { checkAccessibility, screenshot, until } from '../helpers/browser.js';
import { bodyRows, consoleSuite, tableCaptioned } from '../helpers/console-suite.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'live-steps');
const TOKEN = 'live-steps-console-token-0000001';

describe('console: the steps of a run in progress', function () {
  this.timeout(120_000);
  const t = consoleSuite({ name: 'live-steps', playbooks: FIXTURES, token: TOKEN });

  it('the run page lists the steps it ended, the one it is in `running`, the rest `pending`', async () => {
    const { p, close } = await t.signedIn();
    try {
      await t.openRunning(p, 'goes-on');
      const steps = tableCaptioned(p, 'Steps');
      const shown = await until('the steps of the run as it waits', async (seen) => {
        const rows = (await bodyRows(steps)).map((r) => [r[0], r[1], r[r.length - 1]]);
        seen(JSON.stringify(rows));
        return rows.some(([id, status]) => id === 'hold' && status === 'running') ? rows : undefined;
      });
      expect(shown).to.deep.equal([
        ['first', 'succeeded', ''],
        ['quiet', 'skipped', 'if was false'],
        ['each', 'succeeded', ''],
        ['inner', 'succeeded', ''],
        ['hold', 'running', ''],
        ['after', 'pending', ''],
        ['bye', 'pending', ''],
      ]);
      const badge = (id: string) =>
        steps
          .locator(':scope > tbody > tr', { has: p.getByRole('rowheader', { name: id, exact: true }) })
          .locator('.badge');
      expect(await badge('after').getAttribute('class')).to.equal('badge badge-pending');
      const look = async (id: string) =>
        badge(id).evaluate((e) => {
          const s = (
            globalThis as unknown as { getComputedStyle(el: unknown): Record<string, string> }
          ).getComputedStyle(e);
          return `${s.color} ${s.backgroundColor} ${s.borderStyle}`;
        });
      // A step to come, told apart at a glance from one skipped and from one the run will never reach.
      expect(await look('after'), 'a pending badge beside a skipped one').to.not.equal(await look('quiet'));
      // The timeline times the step under way from when it began, and those that ended; those to come untimed.
      const timeline = p.locator('.timeline li');
      const line = async (id: string) =>
        (await timeline.filter({ has: p.getByText(id, { exact: true }) }).innerText()).replace(/\s+/g, ' ');
      expect(await line('hold')).to.match(/^hold \S.* so far · running$/);
      expect(await line('first')).to.match(/^first \S.* · succeeded$/);
      expect(await line('first')).to.not.include('so far');
      expect(await line('after')).to.equal('after not reached yet');
      const bar = timeline.filter({ has: p.getByText('hold', { exact: true }) }).locator('.timeline-bar');
      expect(await bar.getAttribute('class')).to.equal('timeline-bar bar-running');
      console.log(`    screenshot: ${await screenshot(p, '22-live-steps')}`);
      await checkAccessibility(p, 'the page of a run in progress with its steps');
      expect(t.pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    } finally {
      await close();
    }
  });
});
