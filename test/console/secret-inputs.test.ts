/**
 * The inputs named like a secret (src/util/secrets.ts SECRET_KEY, as a run's inputs mask them) on the console
 * and the daemon's run history, against a real `fleetbook serve` on loopback, in a headless Chromium
 * (test/helpers/browser.ts). They were served and shown in plain text:
 * - `GET /console/api/playbooks` served such an input's `default` as written (and an object input's default with
 *   its secret-named keys): it is now masked as a run's inputs are, and a run started with the field left as it
 *   is still gets the real default (the form leaves the input out, for the daemon to apply it);
 * - the run form showed such a field as plain text, prefilled with the default, for the browser to offer to
 *   autofill and save: it is now a password field, empty, with a button to show what is typed;
 * - the daemon's `GET /runs` served every run's inputs as given.
 * A name is a secret's when it holds a secret's word whole (`apiKey`), not its letters inside another word:
 * `passengerCount` and `bypassCache` were masked, and shown as password fields. A checkbox named like a secret is
 * no secret anywhere (true or false hides nothing): run history masked the one the form sent as it was.
 * An object (or a list) named like a secret was a one-line password field, where JSON does not fit: it is a
 * textarea, its text hidden as a password field's until shown by the same Show button.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { checkAccessibility, screenshot } from '../helpers/browser.js';
import { consoleSuite, shownRun, startConsoleRun } from '../helpers/console-suite.js';
import { fleetbook } from '../helpers/cli.js';
import { readState } from '../helpers/daemon.js';
import { MASK } from '../../src/util/secrets.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'console-secrets');
const PLAYBOOK = 'rotate-token';
const TOKEN = 'secret-inputs-console-token-0123';
/** The defaults of the playbook's secrets, as its file writes them. */
const DEFAULT_TOKEN = 'default-webhook-token-5150';
const DEFAULT_KEY = 'default-settings-key-6060';
const DEFAULTS = {
  account: '0000123456-00001',
  webhookToken: DEFAULT_TOKEN,
  settings: { url: 'https://hooks.example/a', apiKey: DEFAULT_KEY },
};
/** What the operator types in the secret field. */
const TYPED_SECRET = 'typed-webhook-token-8080';

describe('console: inputs named like a secret', function () {
  this.timeout(120_000);
  const t = consoleSuite({ name: 'secret-inputs', playbooks: FIXTURES, token: TOKEN });

  const bearer = { authorization: `Bearer ${TOKEN}` };

  /** The text of a GET answer, once it answered 200. */
  async function text(path: string): Promise<string> {
    const res = await fetch(`${t.daemon.url}${path}`, { headers: bearer });
    const body = await res.text();
    expect(res.status, `GET ${path}: ${body}`).to.equal(200);
    return body;
  }

  async function runIds(): Promise<string[]> {
    const { runs } = JSON.parse(await text(`/console/api/runs?playbook=${PLAYBOOK}`)) as {
      runs: { id: string }[];
    };
    return runs.map((r) => r.id);
  }

  /** The inputs a run was stored with: what its steps read. */
  function storedInputs(id: string): unknown {
    return readState(t.state, (db) => {
      const row = db.prepare('SELECT inputs_json FROM runs WHERE id = ?').get(id) as
        { inputs_json: string } | undefined;
      return row && (JSON.parse(row.inputs_json) as unknown);
    });
  }

  /** A signed-in page on the Playbooks page, and the start form of `playbook`. */
  async function startForm(playbook: string) {
    const page = await t.signedIn();
    await page.p.goto(`${t.daemon.url}/#/playbooks`);
    return { ...page, form: page.p.getByRole('form', { name: `Start ${playbook}` }) };
  }

  /** The start form of PLAYBOOK, and its secret field. */
  async function tokenField() {
    const page = await startForm(PLAYBOOK);
    return { ...page, field: page.form.getByLabel('webhookToken', { exact: true }) };
  }
  it("serves a secret input's default masked, and a run started without it still gets it", async () => {
    const { playbooks, mask } = JSON.parse(await text('/console/api/playbooks')) as {
      playbooks: { name: string; inputs: Record<string, { default?: unknown }> }[];
      mask?: string;
    };
    // What stands for a secret, for the form to know a masked default edited (it holds no copy of its own).
    expect(mask, 'the mask the playbooks API serves').to.equal(MASK);
    const inputs = playbooks.find((pb) => pb.name === PLAYBOOK)?.inputs ?? {};
    expect(
      Object.fromEntries(Object.entries(inputs).map(([k, v]) => [k, v.default])),
      'the defaults the console serves',
    ).to.deep.equal({
      account: '0000123456-00001',
      webhookToken: '***',
      settings: { url: 'https://hooks.example/a', apiKey: '***' },
    });
    for (const secret of [DEFAULT_TOKEN, DEFAULT_KEY])
      expect(await text('/console/api/playbooks'), 'GET /console/api/playbooks').to.not.include(secret);

    // Started with no inputs, as the form starts it with the secret fields left as they are.
    const runId = await startConsoleRun(t.daemon, PLAYBOOK, TOKEN);
    expect(storedInputs(runId), 'the inputs the run executes with').to.deep.equal(DEFAULTS);
  });

  it("masks a run's secret inputs in the daemon's run history, as the console does", async () => {
    const given = {
      webhookToken: TYPED_SECRET,
      settings: { url: 'https://hooks.example/c', apiKey: DEFAULT_KEY },
    };
    const runId = await startConsoleRun(t.daemon, PLAYBOOK, TOKEN, given);
    expect(storedInputs(runId), 'the inputs the run executes with').to.deep.equal({
      account: '0000123456-00001',
      ...given,
    });
    const masked = {
      account: '0000123456-00001',
      webhookToken: '***',
      settings: { url: 'https://hooks.example/c', apiKey: '***' },
    };
    const detail = JSON.parse(await text(`/console/api/runs/${runId}`)) as { run: { inputs: unknown } };
    expect(detail.run.inputs, 'the console run').to.deep.equal(masked);
    const listed = JSON.parse(await text(`/runs?playbook=${PLAYBOOK}`)) as { id: string; inputs: unknown }[];
    expect(listed.find((r) => r.id === runId)?.inputs, 'the run in GET /runs').to.deep.equal(masked);
    for (const path of ['/runs', `/runs/${runId}`, '/console/api/runs', `/console/api/runs/${runId}`])
      for (const secret of [TYPED_SECRET, DEFAULT_KEY])
        expect(await text(path), `GET ${path}`).to.not.include(secret);
  });

  it('takes whole words for secrets, and a checkbox for none, in the form and in run history alike', async () => {
    const { playbooks } = JSON.parse(await text('/console/api/playbooks')) as {
      playbooks: { name: string; inputs: Record<string, Record<string, unknown>> }[];
    };
    const inputs = playbooks.find((pb) => pb.name === 'secret-names')?.inputs ?? {};
    expect(inputs, 'the inputs the console serves').to.deep.equal({
      passengerCount: { type: 'integer', default: 3 },
      bypassCache: { type: 'string', default: 'no' },
      apiKey: { type: 'string', default: '***', secret: true, masked: true },
      requirePassword: { type: 'boolean', default: true },
    });

    const { p, close, form } = await startForm('secret-names');
    let id: string;
    try {
      const field = (name: string) => form.getByLabel(name, { exact: true });
      await field('apiKey').waitFor();
      const shown: Record<string, unknown> = {};
      for (const name of ['passengerCount', 'bypassCache', 'apiKey', 'requirePassword']) {
        const type = await field(name).getAttribute('type');
        shown[name] = [
          type,
          type === 'checkbox' ? await field(name).isChecked() : await field(name).inputValue(),
        ];
      }
      expect(shown, 'the form').to.deep.equal({
        passengerCount: ['number', '3'],
        bypassCache: ['text', 'no'],
        apiKey: ['password', ''],
        requirePassword: ['checkbox', true],
      });
      await field('bypassCache').fill('yes');
      await field('apiKey').fill('typed-api-key-2468');
      await field('requirePassword').uncheck();
      await form.getByRole('button', { name: 'Start run' }).click();
      id = await shownRun(p);
      expect(t.pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    } finally {
      await close();
    }
    expect(storedInputs(id), 'the inputs the run executes with').to.deep.equal({
      passengerCount: 3,
      bypassCache: 'yes',
      apiKey: 'typed-api-key-2468',
      requirePassword: false,
    });
    // The run's inputs as every history shows them: the console, the daemon's GET /runs, the CLI's JSON.
    const masked = { passengerCount: 3, bypassCache: 'yes', apiKey: '***', requirePassword: false };
    const cli = await fleetbook(['runs', 'list', '--json', '--playbook', 'secret-names'], {
      FLEETBOOK_STATE: t.state,
    });
    expect(cli.code, cli.stderr).to.equal(0);
    const histories = {
      console: (JSON.parse(await text(`/console/api/runs/${id}`)) as { run: { inputs: unknown } }).run.inputs,
      'GET /runs': (
        JSON.parse(await text('/runs?playbook=secret-names')) as { id: string; inputs: unknown }[]
      ).find((r) => r.id === id)?.inputs,
      'runs list --json': (JSON.parse(cli.stdout) as { id: string; inputs: unknown }[]).find(
        (r) => r.id === id,
      )?.inputs,
    };
    expect(histories).to.deep.equal({ console: masked, 'GET /runs': masked, 'runs list --json': masked });
  });

  it('shows a secret field as a password field, empty, and starts the run with its default', async () => {
    const before = await runIds();
    const { p, close, form, field } = await tokenField();
    try {
      await field.waitFor();
      expect(
        {
          type: await field.getAttribute('type'),
          autocomplete: await field.getAttribute('autocomplete'),
          value: await field.inputValue(),
          help: (await form.locator(`#${await field.getAttribute('aria-describedby')}`).innerText()).trim(),
        },
        'the secret field',
      ).to.deep.equal({
        type: 'password',
        autocomplete: 'new-password',
        value: '',
        help: 'string · The token the webhook is called with. · It has a default, not shown: leave the field empty to use it.',
      });
      expect(await form.getByLabel('settings', { exact: true }).inputValue()).to.equal(
        JSON.stringify({ url: 'https://hooks.example/a', apiKey: '***' }, null, 2),
      );
      const shown = await p.content();
      for (const secret of [DEFAULT_TOKEN, DEFAULT_KEY]) expect(shown, 'the page').to.not.include(secret);
      console.log(`    screenshot: ${await screenshot(p, 'start-run-secret-field')}`);
      await checkAccessibility(p, 'the run form with a secret field');

      await form.getByRole('button', { name: 'Start run' }).click();
      const id = await shownRun(p);
      expect(await runIds()).to.deep.equal([id, ...before]);
      expect(storedInputs(id), 'the inputs the run executes with').to.deep.equal(DEFAULTS);
      expect(t.pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    } finally {
      await close();
    }
  });

  it('shows what is typed in a secret field on demand, and starts the run with it', async () => {
    const before = await runIds();
    const { p, close, form, field } = await tokenField();
    try {
      await field.fill(TYPED_SECRET);
      const show = form.getByRole('button', { name: 'Show webhookToken', exact: true });
      expect([await field.getAttribute('type'), await show.getAttribute('aria-pressed')]).to.deep.equal([
        'password',
        'false',
      ]);
      await show.click();
      expect([await field.getAttribute('type'), await show.getAttribute('aria-pressed')]).to.deep.equal([
        'text',
        'true',
      ]);
      expect(await field.inputValue()).to.equal(TYPED_SECRET);
      await checkAccessibility(p, 'the run form showing a secret field');
      await show.click();
      expect(await field.getAttribute('type')).to.equal('password');

      // An edited default that still holds the mask would start the run with `***` for a secret.
      const settings = form.getByLabel('settings', { exact: true });
      await settings.fill('{"url": "https://hooks.example/b", "apiKey": "***"}');
      await form.getByRole('button', { name: 'Start run' }).click();
      expect((await form.getByRole('alert').innerText()).trim()).to.equal(
        'Input settings: *** stands for a secret of its default, not shown. Type the whole value, or put the default back to use it.',
      );
      expect(await runIds(), 'the runs after the refusal').to.deep.equal(before);

      await settings.fill('{"url": "https://hooks.example/b", "apiKey": "typed-settings-key-9090"}');
      await form.getByRole('button', { name: 'Start run' }).click();
      const id = await shownRun(p);
      expect(await runIds()).to.deep.equal([id, ...before]);
      expect(storedInputs(id), 'the inputs the run executes with').to.deep.equal({
        account: '0000123456-00001',
        webhookToken: TYPED_SECRET,
        settings: { url: 'https://hooks.example/b', apiKey: 'typed-settings-key-9090' },
      });
      expect(t.pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    } finally {
      await close();
    }
  });

  it('shows an object named like a secret as JSON in a textarea, its text hidden until shown', async () => {
    const { p, close, form } = await startForm('sign-webhooks');
    const typed = '{\n  "current": "typed-signing-key-1357",\n  "previous": "typed-signing-key-2468"\n}';
    try {
      const field = form.getByLabel('signingSecrets', { exact: true });
      const show = form.getByRole('button', { name: 'Show signingSecrets', exact: true });
      /** The field as the operator sees it: its element, its lines, whether its text is hidden, its Show button. */
      const seen = async () => ({
        ...(await field.evaluate((el) => {
          const e = el as unknown as { tagName: string; rows?: number; value: string };
          const style = (
            globalThis as unknown as { getComputedStyle(el: unknown): Record<string, string> }
          ).getComputedStyle(el);
          return { tag: e.tagName.toLowerCase(), rows: e.rows, hidden: style.webkitTextSecurity === 'disc' };
        })),
        pressed: await show.getAttribute('aria-pressed'),
      });
      await field.waitFor();
      expect(await seen(), 'the field').to.deep.equal({
        tag: 'textarea',
        rows: 3,
        hidden: true,
        pressed: 'false',
      });
      expect(await field.inputValue()).to.equal('');
      expect(
        (await form.locator(`#${await field.getAttribute('aria-describedby')}`).innerText()).trim(),
      ).to.equal('object, as JSON · The keys the webhooks are signed with, by name.');
      await field.fill(typed);
      expect(await field.inputValue(), 'what is typed, its lines kept').to.equal(typed);
      console.log(`    screenshot: ${await screenshot(p, 'start-run-secret-object')}`);
      await show.click();
      expect(await seen(), 'shown').to.deep.equal({
        tag: 'textarea',
        rows: 3,
        hidden: false,
        pressed: 'true',
      });
      expect(await field.inputValue()).to.equal(typed);
      await checkAccessibility(p, 'the run form showing a secret object');
      await show.click();
      expect(await seen(), 'hidden again').to.deep.equal({
        tag: 'textarea',
        rows: 3,
        hidden: true,
        pressed: 'false',
      });
      await checkAccessibility(p, 'the run form with a secret object');

      await form.getByRole('button', { name: 'Start run' }).click();
      const id = await shownRun(p);
      expect(storedInputs(id), 'the inputs the run executes with').to.deep.equal({
        signingSecrets: { current: 'typed-signing-key-1357', previous: 'typed-signing-key-2468' },
      });
      expect(t.pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    } finally {
      await close();
    }
  });
});
