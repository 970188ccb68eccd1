/**
 * The console's sign-in round trip (console/pending.js) against a real `fleetbook serve` on loopback, in a
 * headless Chromium (test/helpers/browser.ts). On loopback a console reads without a session but acts only with
 * one: "Start run" with a filled form, or "Cancel run", shows the sign-in form, and once signed in the form comes
 * back as filled, or the run's page, for the operator to act (not by itself). That was kept in the page's memory
 * only: a reload during sign-in showed the page again on its defaults, without the sign-in form, and signing in by
 * the token address (`#token=`) went to the runs list. The action waiting for sign-in is now kept in the tab's
 * sessionStorage, never with a secret: a field named like one (as the daemon masks it in a run's inputs) is typed
 * again, and the form says so. The runs list's filters, set from its form, live in the address and so survive a
 * reload too (as a run's device table's do: console-device-page.test.ts).
 */
import { join } from 'node:path';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { SECRET_KEY } from '../../src/util/secrets.js';
import { checkAccessibility, screenshot } from '../helpers/browser.js';
import { consoleSuite, startConsoleRun } from '../helpers/console-suite.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'console-start');
const PLAYBOOK = 'rotate-webhook';
const LONG = 'hold';
const TOKEN = 'sign-in-reload-console-token-012';
/** What the operator types in the secret field: it never reaches the browser's storage. */
const TYPED_SECRET = 'typed-webhook-secret-4711';

interface RunDetail {
  run: { id: string; status: string; inputs?: Record<string, unknown>; cancelRequested?: string };
}

describe('console: what a reload keeps', function () {
  this.timeout(120_000);
  const t = consoleSuite({ name: 'sign-in', playbooks: FIXTURES, token: TOKEN });

  const bearer = { authorization: `Bearer ${TOKEN}` };

  async function runIds(playbook: string): Promise<string[]> {
    const res = await fetch(`${t.daemon.url}/console/api/runs?playbook=${playbook}`, { headers: bearer });
    return ((await res.json()) as { runs: { id: string }[] }).runs.map((r) => r.id);
  }

  async function runDetail(id: string): Promise<RunDetail> {
    return (await (
      await fetch(`${t.daemon.url}/console/api/runs/${id}`, { headers: bearer })
    ).json()) as RunDetail;
  }

  /** Everything the tab's sessionStorage holds, as one text. */
  async function stored(p: Page): Promise<string> {
    return p.evaluate(() => {
      const s = (
        globalThis as unknown as {
          sessionStorage: {
            length: number;
            key(i: number): string | null;
            getItem(k: string): string | null;
          };
        }
      ).sessionStorage;
      const out: Record<string, string | null> = {};
      for (let i = 0; i < s.length; i++) {
        const k = s.key(i) as string;
        out[k] = s.getItem(k);
      }
      return JSON.stringify(out);
    });
  }

  /** The playbook's form, filled with a value in every field, the secret among them. */
  async function fillForm(p: Page) {
    await p.goto(`${t.daemon.url}/#/playbooks`);
    const form = p.getByRole('form', { name: `Start ${PLAYBOOK}` });
    await form.getByLabel('account', { exact: true }).fill('0000123456-00003');
    await form.getByLabel('retries', { exact: true }).fill('7');
    await form.getByLabel('notify', { exact: true }).check();
    await form.getByLabel('settings', { exact: true }).fill('{"url": "https://hooks.example/a"}');
    await form.getByLabel('webhookToken', { exact: true }).fill(TYPED_SECRET);
    return form;
  }

  async function formValues(form: ReturnType<Page['getByRole']>) {
    return {
      account: await form.getByLabel('account', { exact: true }).inputValue(),
      retries: await form.getByLabel('retries', { exact: true }).inputValue(),
      notify: await form.getByLabel('notify', { exact: true }).isChecked(),
      settings: await form.getByLabel('settings', { exact: true }).inputValue(),
      webhookToken: await form.getByLabel('webhookToken', { exact: true }).inputValue(),
    };
  }

  async function signIn(p: Page) {
    await p.getByLabel('Console token', { exact: true }).fill(TOKEN);
    await p.getByRole('button', { name: 'Sign in', exact: true }).click();
  }

  it('keeps the filled form over a reload during sign-in, but for its secret, typed again', async () => {
    const before = await runIds(PLAYBOOK);
    const { p, close } = await t.freshPage();
    try {
      const form = await fillForm(p);
      await form.getByRole('button', { name: 'Start run' }).click();
      await p.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
      expect(await stored(p), 'the tab storage during sign-in').to.not.include(TYPED_SECRET);

      await p.reload();
      await p.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
      expect((await p.getByRole('status').innerText()).trim(), 'why, after the reload').to.match(
        /^Starting a run needs signing in\./,
      );
      console.log(`    screenshot: ${await screenshot(p, 'start-run-sign-in-reloaded')}`);
      await checkAccessibility(p, 'the sign-in form after a reload');
      await signIn(p);

      await p.getByRole('heading', { name: 'Playbooks', exact: true }).waitFor();
      await form.waitFor();
      expect(await formValues(form), 'the form once signed in').to.deep.equal({
        account: '0000123456-00003',
        retries: '7',
        notify: true,
        settings: '{"url": "https://hooks.example/a"}',
        webhookToken: '',
      });
      expect((await form.getByRole('status').innerText()).trim()).to.equal(
        'Signed in. The run is not started yet: check its inputs, then start it. ' +
          'Type webhookToken again: a secret is not kept over a reload.',
      );
      console.log(`    screenshot: ${await screenshot(p, 'start-run-signed-in-reloaded')}`);
      await checkAccessibility(p, 'the form given back after a reload');
      expect(await stored(p), 'the tab storage once the form is given back').to.equal('{}');
      expect(await runIds(PLAYBOOK), 'the runs, signed in, before Start run').to.deep.equal(before);

      await form.getByLabel('webhookToken', { exact: true }).fill(TYPED_SECRET);
      await form.getByRole('button', { name: 'Start run' }).click();
      await p.getByRole('heading', { name: /^Run / }).waitFor();
      const after = await runIds(PLAYBOOK);
      expect(after.slice(1)).to.deep.equal(before);
      expect((await runDetail(after[0]!)).run.inputs).to.deep.equal({
        account: '0000123456-00003',
        retries: 7,
        notify: true,
        settings: { url: 'https://hooks.example/a' },
        webhookToken: '***',
      });
      expect(await stored(p), 'the tab storage once the run started').to.equal('{}');
      expect(t.pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    } finally {
      await close();
    }
  });

  it('gives the secret back too when the page was not reloaded, never storing it', async () => {
    const { p, close } = await t.freshPage();
    try {
      const form = await fillForm(p);
      await form.getByRole('button', { name: 'Start run' }).click();
      await p.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
      expect(await stored(p), 'the tab storage during sign-in').to.not.include(TYPED_SECRET);
      await signIn(p);
      await form.waitFor();
      expect(await formValues(form), 'the form once signed in').to.deep.equal({
        account: '0000123456-00003',
        retries: '7',
        notify: true,
        settings: '{"url": "https://hooks.example/a"}',
        webhookToken: TYPED_SECRET,
      });
      expect((await form.getByRole('status').innerText()).trim()).to.equal(
        'Signed in. The run is not started yet: check its inputs, then start it.',
      );
      expect(t.pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    } finally {
      await close();
    }
  });

  it('gives the form back after signing in by the token address, reloaded or not', async () => {
    for (const reload of [false, true]) {
      const { p, close } = await t.freshPage();
      try {
        const form = await fillForm(p);
        await form.getByLabel('account', { exact: true }).fill(`0000123456-0000${reload ? 5 : 4}`);
        await form.getByRole('button', { name: 'Start run' }).click();
        await p.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
        if (reload) await p.reload();
        await p.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
        // The address the daemon printed, opened in the same tab: the token leaves the address at once.
        await p.goto(`${t.daemon.url}/#token=${TOKEN}`);
        await p.getByRole('heading', { name: 'Playbooks', exact: true }).waitFor();
        await form.waitFor();
        expect(p.url(), `the address, ${reload ? '' : 'not '}reloaded`).to.match(/#\/playbooks$/);
        expect(
          await form.getByLabel('account', { exact: true }).inputValue(),
          `the form, ${reload ? '' : 'not '}reloaded`,
        ).to.equal(`0000123456-0000${reload ? 5 : 4}`);
        expect(t.pageErrors, 'uncaught errors in the page').to.deep.equal([]);
      } finally {
        await close();
      }
    }
  });

  it('goes back without signing in, forgetting the run to start', async () => {
    const { p, close } = await t.freshPage();
    try {
      const form = await fillForm(p);
      await form.getByRole('button', { name: 'Start run' }).click();
      await p.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
      await p.reload();
      await p.getByRole('button', { name: 'Back without signing in' }).click();
      await p.getByRole('heading', { name: 'Playbooks', exact: true }).waitFor();
      await form.waitFor();
      expect(await form.getByLabel('account', { exact: true }).inputValue()).to.equal('0000123456-00001');
      expect(await form.getByRole('status').count(), 'a note on the form').to.equal(0);
      expect(await stored(p), 'the tab storage').to.equal('{}');
      await p.reload();
      await p.getByRole('heading', { name: 'Playbooks', exact: true }).waitFor();
      expect(t.pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    } finally {
      await close();
    }
  });

  it('brings the run page back over a reload during the sign-in Cancel run asked for', async () => {
    const runId = await startConsoleRun(t.daemon, LONG, TOKEN);
    const { p, close } = await t.freshPage();
    try {
      await p.goto(`${t.daemon.url}/#/runs/${runId}`);
      await p.getByRole('button', { name: 'Cancel run' }).click();
      await p.getByRole('button', { name: 'Confirm cancel' }).click();
      await p.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();

      await p.reload();
      await p.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
      expect((await p.getByRole('status').innerText()).trim(), 'why, after the reload').to.match(
        /^Cancelling a run needs signing in\./,
      );
      await signIn(p);
      await p.getByRole('heading', { name: /^Run / }).waitFor();
      expect(p.url()).to.match(new RegExp(`#/runs/${runId}$`));
      await p.getByRole('button', { name: 'Cancel run' }).waitFor();
      expect((await p.getByRole('status').innerText()).trim(), 'the note once signed in').to.equal(
        'Signed in. The run is not cancelled: cancel it again if you still want to.',
      );
      expect(await stored(p), 'the tab storage once the page is given back').to.equal('{}');
      const signed = await runDetail(runId);
      expect([signed.run.status, signed.run.cancelRequested], 'the run, signed in').to.deep.equal([
        'running',
        undefined,
      ]);
      expect(t.pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    } finally {
      await close();
      await fetch(`${t.daemon.url}/console/api/runs/${runId}/cancel`, { method: 'POST', headers: bearer });
    }
  });

  it("keeps the runs list's filters over a reload, set from its form", async () => {
    const ours = await runIds(PLAYBOOK);
    expect(ours.length, `runs of ${PLAYBOOK} started above`).to.be.greaterThan(0);
    const { p, close } = await t.freshPage();
    try {
      await p.goto(`${t.daemon.url}/#/runs`);
      const filters = p.getByRole('form', { name: 'Filter runs' });
      const field = (name: string) =>
        filters.getByRole(name === 'From' ? 'textbox' : 'combobox', { name, exact: true });
      const rows = p.locator('#runs-table tbody tr[data-run-id]');
      // Set as an operator sets them, one after another; each navigates.
      await field('Playbook').selectOption(PLAYBOOK);
      await field('Status').selectOption('succeeded');
      await field('Trigger').selectOption('manual');
      await field('From').fill('2020-01-01T00:00');
      const shown = async (what: string) => {
        await p.waitForFunction(
          (n) =>
            (
              globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }
            ).document.querySelectorAll('#runs-table tbody tr[data-run-id]').length === n,
          ours.length,
        );
        return {
          what,
          playbook: await field('Playbook').inputValue(),
          status: await field('Status').inputValue(),
          trigger: await field('Trigger').inputValue(),
          from: await field('From').inputValue(),
          rows: await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-run-id'))),
        };
      };
      const want = (what: string) => ({
        what,
        playbook: PLAYBOOK,
        status: 'succeeded',
        trigger: 'manual',
        from: '2020-01-01T00:00',
        rows: ours,
      });
      expect(await shown('as set')).to.deep.equal(want('as set'));
      await p.reload();
      await p.getByRole('heading', { name: 'Runs', exact: true }).waitFor();
      expect(await shown('reloaded')).to.deep.equal(want('reloaded'));
      expect(t.pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    } finally {
      await close();
    }
  });

  it('takes as a secret in typed JSON what the daemon says it masks, holding no copy of that rule', async () => {
    const res = await fetch(`${t.daemon.url}/console/api/playbooks`, { headers: bearer });
    const { secretName } = (await res.json()) as { secretName?: string };
    expect(secretName, 'the names of secrets, as the playbooks API serves them').to.equal(SECRET_KEY.source);
    // The page's module, as the browser runs it: plain JavaScript, with no types for this project to check.
    const moduleUrl = new URL('../../console/pending.js', import.meta.url).href;
    const pending = (await import(moduleUrl)) as {
      holdsSecret(value: string | boolean, secretName: RegExp): boolean;
    };
    expect(Object.keys(pending), "the page's own rule for the names of secrets").to.not.include(
      'SECRET_NAME',
    );
    const served = new RegExp(secretName!);
    const values: [string | boolean, boolean][] = [
      ['x', false],
      ['token', false],
      [true, false],
      ['["a", "token"]', false],
      ['{"url": "https://hooks.example/a"}', false],
      ['{"bypassCache": "yes", "passengerCount": 2}', false],
      ['{"hooks": [{"url": "u", "Authorization": "Basic x"}]}', true],
      ['{"url": "u", "apiKey": "k"}', true],
      ['{"client_secret": ', true],
    ];
    expect(values.map(([value]) => [value, pending.holdsSecret(value, served)])).to.deep.equal(values);
  });
});
