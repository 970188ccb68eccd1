/**
 * The console's run form and the constraints of a playbook's inputs (console/pages/start-run.js), against a real
 * `fleetbook serve` (the built binary) with the example playbooks, in a headless Chromium:
 * - the help text of a field says what its input's constraints take;
 * - a field carries the attributes the browser knows of them (`min`, `max`, `minlength`, `pattern` when the
 *   browser reads the RE2 pattern as RE2 does);
 * - a start the daemon refuses (400: a sensor given twice) shows the daemon's words next to the form, its
 *   backticked input name as code rather than between backticks, and starts no run.
 */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { checkAccessibility, until } from '../helpers/browser.js';
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
});
