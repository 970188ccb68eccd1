/**
 * The console's run page of a run cancelled from it lists every step of the run's playbook version: those the
 * run never reached `unreached`, nested ones indented under their loop, apart from a step skipped by its `if`
 * (which says why). Before, it listed only the steps that started, and nothing said what did not happen. A real
 * `fleetbook serve` and a headless Chromium (test/helpers/console-suite.ts).
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { checkAccessibility, screenshot, until } from '../helpers/browser.js';
import { cells, consoleSuite, runStatusIs, tableCaptioned } from '../helpers/console-suite.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'unreached-steps');
const TOKEN = 'unreached-steps-console-token-01';

describe('console: the steps a cancelled run never reached', function () {
  this.timeout(120_000);
  const t = consoleSuite({ name: 'unreached-steps', playbooks: FIXTURES, token: TOKEN });

  it('the run page lists them `unreached`, nested ones under their loop, after the steps that ran', async () => {
    const { p, close } = await t.signedIn();
    try {
      await t.openRunning(p, 'held-up');
      await p.getByRole('button', { name: 'Cancel run' }).click();
      await p.getByRole('button', { name: 'Confirm cancel' }).click();
      await until('the run shown cancelled', async (seen) => runStatusIs(p, 'cancelled', seen), 30_000, 250);
      const steps = tableCaptioned(p, 'Steps');
      const rows = async () => {
        const out: [string, string, string, number][] = [];
        for (const row of await steps.locator(':scope > tbody > tr').all()) {
          const texts = (await cells(row).allInnerTexts()).map((s) => s.trim());
          const th = row.getByRole('rowheader');
          const left = await th.evaluate((e) =>
            parseFloat(
              (
                globalThis as unknown as { getComputedStyle(el: unknown): Record<string, string> }
              ).getComputedStyle(e).paddingLeft as string,
            ),
          );
          out.push([texts[0]!, texts[1]!, texts[texts.length - 1]!, left]);
        }
        return out;
      };
      const shown = await until('the steps of the cancelled run', async (seen) => {
        const r = await rows();
        seen(JSON.stringify(r));
        return r.some(([id, status]) => id === 'bye' && status === 'succeeded') ? r : undefined;
      });
      const top = shown[0]![3];
      // How far one level indents: the inner step's, if shown at all.
      const indent = (shown.find(([id]) => id === 'inner')?.[3] ?? top + 1) - top;
      const depth = (left: number) => Math.round((left - top) / indent);
      expect(shown.map(([id, status, note, left]) => [id, status, note, depth(left)])).to.deep.equal([
        ['quiet', 'skipped', 'if was false', 0],
        ['hold', 'cancelled', 'cancelled from the console', 0],
        ['each', 'unreached', '', 0],
        ['inner', 'unreached', '', 1],
        ['after', 'unreached', '', 0],
        ['bye', 'succeeded', '', 0],
      ]);
      expect(indent, 'the inner step indented').to.be.greaterThan(4);
      // Told apart from a skipped step at a glance, not only by its word: a badge of its own.
      const badge = (id: string) =>
        steps
          .locator(':scope > tbody > tr', { has: p.getByRole('rowheader', { name: id, exact: true }) })
          .locator('.badge');
      expect(await badge('after').getAttribute('class')).to.equal('badge badge-unreached');
      const look = async (id: string) =>
        badge(id).evaluate((e) => {
          const s = (
            globalThis as unknown as { getComputedStyle(el: unknown): Record<string, string> }
          ).getComputedStyle(e);
          return `${s.color} ${s.backgroundColor} ${s.borderStyle}`;
        });
      expect(await look('after'), 'an unreached badge beside a skipped one').to.not.equal(
        await look('quiet'),
      );
      console.log(`    screenshot: ${await screenshot(p, '21-unreached-steps')}`);
      await checkAccessibility(p, 'the page of a cancelled run with steps it never reached');
      expect(t.pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    } finally {
      await close();
    }
  });
});
