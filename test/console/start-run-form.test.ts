/**
 * The console's run form (console/pages/start-run.js) against a real `fleetbook serve` on loopback, in a headless
 * Chromium (test/helpers/browser.ts). Two bugs of it:
 * - a list input given text that is no JSON list (`a,b`, `x`) was refused in the words of the command line
 *   (`pass it as JSON, e.g. --input 'tags=["a","b"]'`), or of JSON.parse, which mean nothing in a form: it is now
 *   said of the field, what is typed in it and how a list is written; the daemon's HTTP API says it of a JSON body;
 * - on loopback, where reading needs no sign-in but starting a run does, "Start run" without a session showed the
 *   sign-in form without a word of why, and once signed in the form was back on its defaults, what was typed
 *   lost: the sign-in form now says why, and after it the form is back as it was filled, for one click to start
 *   (not started by itself: the operator may no longer want it).
 */
import { join } from 'node:path';
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import type { Emulator } from '../../src/emulator/index.js';
import { checkAccessibility, launchBrowser, screenshot, until } from '../helpers/browser.js';
import { emulatorEnv } from '../helpers/cli.js';
import { DaemonProcess } from '../helpers/daemon.js';
import { emulator, tempDir } from '../runner/helpers.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'console-start');
const PLAYBOOK = 'tag-devices';
/** The console token, and the daemon's own bearer token (its HTTP API): 32 characters each. */
const TOKEN = 'start-run-form-console-token-012';
const DAEMON_TOKEN = 'start-run-form-daemon-token-0123';

interface RunRow {
  id: string;
  inputs?: Record<string, unknown>;
}

describe('console: the run form', function () {
  this.timeout(120_000);
  let emu: Emulator;
  let dir: { dir: string; close(): Promise<void> };
  let daemon: DaemonProcess;
  let browser: Browser;
  let page: Page | undefined;
  const pageErrors: string[] = [];

  before(async () => {
    emu = await emulator({ devicesPerAccount: 5 });
    dir = await tempDir();
    daemon = await DaemonProcess.start('run-form daemon', {
      playbooks: FIXTURES,
      state: join(dir.dir, 'state.db'),
      env: {
        ...emulatorEnv(emu),
        FLEETBOOK_CALLBACK_USERNAME: 'run-form-listener',
        FLEETBOOK_CALLBACK_PASSWORD: 'run-form-listener-password',
        FLEETBOOK_CONSOLE_TOKEN: TOKEN,
        FLEETBOOK_DAEMON_TOKEN: DAEMON_TOKEN,
      },
    });
    browser = await launchBrowser();
  });

  afterEach(async function () {
    if (this.currentTest?.state !== 'failed') return;
    if (page && !page.isClosed()) {
      const path = await screenshot(page, 'failure').catch(() => undefined);
      if (path) console.log(`    the page when it failed: ${path} (${page.url()})`);
    }
    if (pageErrors.length) console.log(`    the page's errors:\n      ${pageErrors.join('\n      ')}`);
    console.log(`    the daemon's stderr, last lines:\n${daemon?.stderr.slice(-3000)}`);
  });

  after(async () => {
    await browser?.close();
    await daemon?.kill();
    await emu?.close();
    await dir?.close();
  });

  /** The runs of the playbook, newest first, with their inputs. */
  async function runs(): Promise<RunRow[]> {
    const headers = { authorization: `Bearer ${TOKEN}` };
    const { runs: rows } = (await (
      await fetch(`${daemon.url}/console/api/runs?playbook=${PLAYBOOK}`, { headers })
    ).json()) as { runs: RunRow[] };
    return Promise.all(
      rows.map(async (r) => {
        const res = await fetch(`${daemon.url}/console/api/runs/${r.id}`, { headers });
        return ((await res.json()) as { run: RunRow }).run;
      }),
    );
  }

  /** A page of a browser context of its own, with no session; `close` closes the context. */
  async function freshPage(): Promise<{ p: Page; close(): Promise<void> }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const p = (page = await context.newPage());
    p.setDefaultTimeout(15_000);
    p.on('pageerror', (e) => pageErrors.push(`pageerror: ${e.message}`));
    return { p, close: () => context.close() };
  }

  /** The run id the page went to, once it shows the run. */
  async function shownRun(p: Page): Promise<string> {
    await p.getByRole('heading', { name: /^Run / }).waitFor();
    return until('the run id in the address', async (seen) => {
      seen(p.url());
      return /#\/runs\/([0-9a-f-]{36})/.exec(p.url())?.[1];
    });
  }

  it('refuses a list field that is no JSON list in the words of the form, not of --input', async () => {
    const { p, close } = await freshPage();
    try {
      await p.goto(`${daemon.url}/#token=${TOKEN}`);
      await p.getByRole('heading', { name: 'Runs', exact: true }).waitFor();
      await p.goto(`${daemon.url}/#/playbooks`);
      const form = p.getByRole('form', { name: `Start ${PLAYBOOK}` });
      const tags = form.getByLabel('tags', { exact: true });
      const said: Record<string, string> = {};
      for (const typed of ['a,b', 'x', '"x"', '{"a": 1}']) {
        await tags.fill(typed);
        await form.getByRole('button', { name: 'Start run' }).click();
        said[typed] = await until(`why ${typed} did not start a run`, async (seen) => {
          const alert = form.getByRole('alert');
          const text = (await alert.count()) ? (await alert.innerText()).trim() : '';
          seen(text);
          // The alert of the text before stays until this one is answered.
          return text && !Object.values(said).includes(text) ? text : undefined;
        });
      }
      expect(said).to.deep.equal({
        'a,b': 'Input tags: a,b is not a JSON list. Write it like ["a","b"].',
        x: 'Input tags: x is not a JSON list. Write it like ["a","b"].',
        '"x"': 'Input tags: "x" is not a JSON list. Write it like ["a","b"].',
        '{"a": 1}': 'Input tags: {"a":1} is not a JSON list. Write it like ["a","b"].',
      });
      expect(await runs(), 'the runs the refused forms started').to.deep.equal([]);
      await checkAccessibility(p, 'the run form refusing a field');

      await tags.fill('["a", "b"]');
      await form.getByRole('button', { name: 'Start run' }).click();
      const id = await shownRun(p);
      expect((await runs()).map((r) => [r.id, r.inputs])).to.deep.equal([
        [id, { account: '0000123456-00001', tags: ['a', 'b'] }],
      ]);
      expect(pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    } finally {
      await close();
    }

    // The daemon's own HTTP API takes a JSON body: it says so, and not --input either.
    const res = await fetch(`${daemon.url}/playbooks/${PLAYBOOK}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${DAEMON_TOKEN}` },
      body: JSON.stringify({ inputs: { tags: 'a,b' } }),
    });
    expect([res.status, await res.json()]).to.deep.equal([
      400,
      { error: 'input `tags` is an array: give it as a JSON array, e.g. ["a","b"] (got "a,b")' },
    ]);
  });

  it('says why starting a run asks to sign in, and gives the form back as filled once signed in', async () => {
    const before = (await runs()).map((r) => r.id);
    const { p, close } = await freshPage();
    try {
      // On loopback, the playbooks read without a session.
      await p.goto(`${daemon.url}/#/playbooks`);
      const form = p.getByRole('form', { name: `Start ${PLAYBOOK}` });
      await form.getByLabel('account', { exact: true }).fill('0000123456-00002');
      await form.getByLabel('tags', { exact: true }).fill('["x", "y"]');
      await form.getByRole('button', { name: 'Start run' }).click();

      await p.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
      const why = p.getByRole('status');
      expect(await why.count(), 'a status on the sign-in form that says why').to.equal(1);
      expect(await why.innerText()).to.match(/^Starting a run needs signing in\./);
      console.log(`    screenshot: ${await screenshot(p, 'start-run-sign-in')}`);
      await checkAccessibility(p, 'the sign-in form asked for by Start run');
      expect(
        (await runs()).map((r) => r.id),
        'the runs, before signing in',
      ).to.deep.equal(before);

      await p.getByLabel('Console token', { exact: true }).fill(TOKEN);
      await p.getByRole('button', { name: 'Sign in', exact: true }).click();
      await p.getByRole('heading', { name: 'Playbooks', exact: true }).waitFor();
      await form.waitFor();
      expect(
        {
          account: await form.getByLabel('account', { exact: true }).inputValue(),
          tags: await form.getByLabel('tags', { exact: true }).inputValue(),
        },
        'the form once signed in',
      ).to.deep.equal({ account: '0000123456-00002', tags: '["x", "y"]' });
      expect((await form.getByRole('status').innerText()).trim()).to.equal(
        'Signed in. The run is not started yet: check its inputs, then start it.',
      );
      // Focus goes to the form, where the operator left off, not to the top of the page.
      await until('the focus in the form', async (seen) => {
        const focused = await p.evaluate(() => {
          type Element = { tagName: string; closest(s: string): { className: string } | null };
          const el = (globalThis as unknown as { document: { activeElement: Element | null } }).document
            .activeElement;
          return el ? `${el.tagName} ${el.closest('form')?.className ?? ''}` : '';
        });
        seen(focused);
        return focused.endsWith('start-run') ? true : undefined;
      });
      console.log(`    screenshot: ${await screenshot(p, 'start-run-signed-in')}`);
      await checkAccessibility(p, 'the playbooks page with the form given back');
      expect(
        (await runs()).map((r) => r.id),
        'the runs, signed in, before Start run',
      ).to.deep.equal(before);

      await form.getByRole('button', { name: 'Start run' }).click();
      const id = await shownRun(p);
      const after = await runs();
      expect(after.map((r) => r.id)).to.deep.equal([id, ...before]);
      expect(after[0]!.inputs).to.deep.equal({ account: '0000123456-00002', tags: ['x', 'y'] });
      expect(pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    } finally {
      await close();
    }
  });
});
