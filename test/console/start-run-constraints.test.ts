/**
 * The console's run form and the constraints of a playbook's inputs (console/pages/start-run.js), against a real
 * `fleetbook serve` (the built binary) with the example playbooks, in a headless Chromium:
 * - the help text of a field says what its input's constraints take;
 * - a field carries the attributes the browser knows of them (`min`, `max`, `minlength`, `pattern` when the
 *   browser reads the RE2 pattern as RE2 does);
 * - a start the daemon refuses (400: a sensor given twice) shows the daemon's words next to the form, its
 *   backticked input name as code rather than between backticks, and starts no run; a value it quotes that holds
 *   a backtick is text, not the start of a code span (it showed the value's tail and the words after it as code);
 * - a value that breaks what the field's attributes say is said next to the field once it is left, and as it is
 *   typed again until it fits (the form is `novalidate`, and said nothing until the daemon refused the start);
 *   the daemon still has the last word: the start goes to it, and its refusal is shown.
 */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Locator } from 'playwright-core';
import { checkAccessibility, screenshot, until } from '../helpers/browser.js';
import { consoleSuite } from '../helpers/console-suite.js';

const ROOT = join(import.meta.dirname, '..', '..');
const PLAYBOOK = 'rollout-sensor-configuration';
const TOKEN = 'start-run-constraints-console-tok';
const UUID = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
const A = '30ca92f4-cca3-467f-b9ef-100000000001';
const B = '1963d0fb-5aba-441c-88e1-100000000003';

describe('console: the run form and the constraints of inputs', function () {
  this.timeout(120_000);
  // The example rollout, and a playbook with a field of each kind the browser checks.
  const playbooks = mkdtempSync(join(tmpdir(), 'fleetbook-form-constraints-'));
  copyFileSync(join(ROOT, 'playbooks', `${PLAYBOOK}.yaml`), join(playbooks, `${PLAYBOOK}.yaml`));
  copyFileSync(
    join(ROOT, 'test', 'fixtures', 'console-constraints', 'tune-sensors.yaml'),
    join(playbooks, 'tune-sensors.yaml'),
  );
  after(() => rmSync(playbooks, { recursive: true, force: true }));
  const t = consoleSuite({ name: 'run-form-constraints', playbooks, token: TOKEN });

  it('says the constraints, and shows the refusal of a sensor given twice', async () => {
    const { p, close } = await t.signedIn();
    try {
      await p.goto(`${t.daemon.url}/#/playbooks`);
      const form = p.getByRole('form', { name: `Start ${PLAYBOOK}` });
      const sensors = form.getByLabel('sensors', { exact: true });
      const help = async (label: string) => {
        const id = await form.getByLabel(label, { exact: true }).getAttribute('aria-describedby');
        return (await form.locator(`[id="${id}"]`).innerText()).trim();
      };
      expect(await help('sensors')).to.equal(
        'array, as JSON · Resource ids (UUIDs) of the sensors to configure, the canary first. · at least 1 item · ' +
          `each string matching ${UUID} · no item twice`,
      );

      await sensors.fill(JSON.stringify([A, B, A]));
      await form.getByRole('button', { name: 'Start run' }).click();
      const said = await until('the refusal next to the form', async (seen) => {
        const alert = form.getByRole('alert');
        const text = (await alert.count()) ? (await alert.innerText()).trim() : '';
        seen(text);
        return text || undefined;
      });
      // The daemon's backticked name reads as code, as the rest of the form's words read as text.
      expect(said).to.equal(`input sensors: item 2 "${A}" is given twice (uniqueItems)`);
      expect(await form.getByRole('alert').locator('code').allInnerTexts()).to.deep.equal(['sensors']);
      const headers = { authorization: `Bearer ${TOKEN}` };
      const res = await fetch(`${t.daemon.url}/console/api/runs?playbook=${PLAYBOOK}`, { headers });
      expect(
        ((await res.json()) as { runs: unknown[] }).runs,
        'the runs the refused start began',
      ).to.deep.equal([]);
      await checkAccessibility(p, 'the run form refused for a constraint');
      expect(t.pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    } finally {
      await close();
    }
  });

  it('gives the fields the attributes the browser checks, the pattern only where it means what RE2 means', async () => {
    const { p, close } = await t.signedIn();
    try {
      await p.goto(`${t.daemon.url}/#/playbooks`);
      const form = p.getByRole('form', { name: 'Start tune-sensors' });
      const attrs = async (label: string) => {
        const field = form.getByLabel(label, { exact: true });
        await field.waitFor();
        const names = ['type', 'min', 'max', 'minlength', 'maxlength', 'pattern'];
        const values = await Promise.all(names.map((n) => field.getAttribute(n)));
        return Object.fromEntries(names.flatMap((n, i) => (values[i] === null ? [] : [[n, values[i]]])));
      };
      expect({
        holdTimeMs: await attrs('holdTimeMs'),
        ratio: await attrs('ratio'),
        region: await attrs('region'),
        label: await attrs('label'),
      }).to.deep.equal({
        holdTimeMs: { type: 'number', min: '100', max: '60000' },
        ratio: { type: 'number', min: '0', max: '1' },
        // No maxlength: the browser counts UTF-16 units, the daemon characters.
        region: { type: 'text', minlength: '4', pattern: '^[a-z]+-[0-9]$' },
        // Unanchored: RE2 finds it anywhere, the browser would match the whole text.
        label: { type: 'text' },
      });
      // The browser reads them as the daemon does.
      const validity = async (label: string, value: string) => {
        const field = form.getByLabel(label, { exact: true });
        await field.fill(value);
        return field.evaluate((el) => {
          const v = (el as unknown as { validity: Record<string, boolean> }).validity;
          return ['valid', 'rangeUnderflow', 'rangeOverflow', 'patternMismatch'].filter((k) => v[k]);
        });
      };
      expect({
        low: await validity('holdTimeMs', '50'),
        high: await validity('holdTimeMs', '70000'),
        fits: await validity('holdTimeMs', '100'),
        upper: await validity('region', 'EU-1'),
        region: await validity('region', 'eu-1'),
      }).to.deep.equal({
        low: ['rangeUnderflow'],
        high: ['rangeOverflow'],
        fits: ['valid'],
        upper: ['patternMismatch'],
        region: ['valid'],
      });
      expect(t.pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    } finally {
      await close();
    }
  });

  /** The alert next to `form`, once it says something: its text, and the text of each element in it. */
  async function refusal(form: Locator): Promise<{ text: string; elements: string[] }> {
    const alert = form.getByRole('alert');
    const text = await until('the refusal next to the form', async (seen) => {
      const said = (await alert.count()) ? (await alert.innerText()).trim() : '';
      seen(said);
      return said || undefined;
    });
    const elements = await alert
      .locator('*')
      .evaluateAll((els) =>
        els.map(
          (el) => `${el.tagName.toLowerCase()}: ${(el as unknown as { textContent: string }).textContent}`,
        ),
      );
    return { text, elements };
  }

  it('shows a quoted value holding a backtick as text, and the spans after it as code', async () => {
    const { p, close } = await t.signedIn();
    try {
      await p.goto(`${t.daemon.url}/#/playbooks`);
      const form = p.getByRole('form', { name: 'Start tune-sensors' });
      // No letter, as `[a-z]` asks: the daemon refuses it, quoting it.
      await form.getByLabel('label', { exact: true }).fill('1`<2>&3');
      await form.getByRole('button', { name: 'Start run' }).click();
      expect(await refusal(form)).to.deep.equal({
        text: 'input label: "1`<2>&3" does not match [a-z] (pattern)',
        elements: ['code: label', 'code: [a-z]'],
      });
      expect(t.pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    } finally {
      await close();
    }
  });

  it('says what a value breaks next to its field once left, and leaves the last word to the daemon', async () => {
    const { p, close } = await t.signedIn();
    try {
      await p.goto(`${t.daemon.url}/#/playbooks`);
      const form = p.getByRole('form', { name: 'Start tune-sensors' });
      /** What describes a field, each of its descriptions' texts (its help, and what it breaks), and whether it is marked invalid. */
      const said = async (label: string) => {
        const field = form.getByLabel(label, { exact: true });
        const ids = ((await field.getAttribute('aria-describedby')) ?? '').split(/\s+/).filter(Boolean);
        const texts = await Promise.all(
          ids.map(async (id) => (await form.locator(`[id="${id}"]`).innerText()).trim()),
        );
        return { described: texts.filter(Boolean), invalid: await field.getAttribute('aria-invalid') };
      };
      const field = (label: string) => form.getByLabel(label, { exact: true });
      const fits = (help: string) => ({ described: [help], invalid: null });
      const breaks = (help: string, problem: string) => ({ described: [help, problem], invalid: 'true' });
      const HOLD = 'integer · 100 to 60000';
      const REGION = 'string · matching ^[a-z]+-[0-9]$ · 4 to 12 characters';

      // Typing: nothing said before the field is left.
      await field('region').fill('EU');
      expect(await said('region'), 'region typed, not left').to.deep.equal(fits(REGION));
      await field('region').blur();
      expect(await said('region'), 'region left').to.deep.equal(
        breaks(REGION, 'Must be at least 4 characters.'),
      );
      // Once said, it follows the typing.
      await field('region').fill('EU-1');
      expect(await said('region'), 'region typed again').to.deep.equal(
        breaks(REGION, 'Must match ^[a-z]+-[0-9]$.'),
      );
      expect(
        await form
          .locator(`[id="${(await field('region').getAttribute('aria-describedby'))!.split(' ')[1]}"] code`)
          .allInnerTexts(),
      ).to.deep.equal(['^[a-z]+-[0-9]$']);
      await field('region').fill('eu-1');
      expect(await said('region'), 'region fixed').to.deep.equal(fits(REGION));

      await field('holdTimeMs').fill('50');
      await field('holdTimeMs').press('Tab');
      expect(await said('holdTimeMs'), 'holdTimeMs left').to.deep.equal(
        breaks(HOLD, 'Must be at least 100.'),
      );
      await field('holdTimeMs').fill('70000');
      expect(await said('holdTimeMs')).to.deep.equal(breaks(HOLD, 'Must be at most 60000.'));
      await field('holdTimeMs').fill('250.5');
      expect(await said('holdTimeMs')).to.deep.equal(breaks(HOLD, 'Must be an integer.'));
      await field('ratio').fill('1.5');
      await field('ratio').blur();
      expect(await said('ratio')).to.deep.equal(breaks('number · 0 to 1', 'Must be at most 1.'));
      await field('ratio').fill('');
      expect(await said('ratio'), 'ratio emptied').to.deep.equal(fits('number · 0 to 1'));
      await field('region').fill('EU-1');
      await field('region').blur();
      console.log(`    screenshot: ${await screenshot(p, 'start-run-field-problems')}`);
      await field('region').fill('eu-1');
      await checkAccessibility(p, 'the run form saying what a value breaks');

      // The daemon decides: the start goes to it, and its refusal is what the form says.
      await field('holdTimeMs').fill('50');
      await form.getByRole('button', { name: 'Start run' }).click();
      expect((await refusal(form)).text).to.equal('input holdTimeMs: 50 is less than 100 (minimum)');
      expect(await said('holdTimeMs'), 'holdTimeMs refused').to.deep.equal(
        breaks(HOLD, 'Must be at least 100.'),
      );
      const res = await fetch(`${t.daemon.url}/console/api/runs?playbook=tune-sensors`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(
        ((await res.json()) as { runs: unknown[] }).runs,
        'the runs the refused start began',
      ).to.deep.equal([]);
      expect(t.pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    } finally {
      await close();
    }
  });
});
