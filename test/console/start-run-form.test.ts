/**
 * The console's run form (console/pages/start-run.js) against a real `fleetbook serve` on loopback, in a headless
 * Chromium (test/helpers/browser.ts). Two bugs of it:
 * - a list input given text that is no JSON list (`a,b`, `x`) was refused in the words of the command line
 *   (`pass it as JSON, e.g. --input 'tags=["a","b"]'`), or of JSON.parse, which mean nothing in a form: it is now
 *   said of the field, what is typed in it and how a list is written; the daemon's HTTP API says it of a JSON body;
 *   so is a required field left empty, which said only that the input was required;
 * - on loopback, where reading needs no sign-in but starting a run does, "Start run" without a session showed the
 *   sign-in form without a word of why, and once signed in the form was back on its defaults, what was typed
 *   lost: the sign-in form now says why, and after it the form is back as it was filled, for one click to start
 *   (not started by itself: the operator may no longer want it).
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { checkAccessibility, screenshot, until } from '../helpers/browser.js';
import { consoleSuite, shownRun } from '../helpers/console-suite.js';

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
  const t = consoleSuite({ name: 'run-form', playbooks: FIXTURES, token: TOKEN, daemonToken: DAEMON_TOKEN });

  /** The runs of the playbook, newest first, with their inputs. */
  async function runs(): Promise<RunRow[]> {
    const headers = { authorization: `Bearer ${TOKEN}` };
    const { runs: rows } = (await (
      await fetch(`${t.daemon.url}/console/api/runs?playbook=${PLAYBOOK}`, { headers })
    ).json()) as { runs: RunRow[] };
    return Promise.all(
      rows.map(async (r) => {
        const res = await fetch(`${t.daemon.url}/console/api/runs/${r.id}`, { headers });
        return ((await res.json()) as { run: RunRow }).run;
      }),
    );
  }

  it('refuses a list field that is no JSON list in the words of the form, not of --input', async () => {
    const { p, close } = await t.freshPage();
    try {
      await p.goto(`${t.daemon.url}/#token=${TOKEN}`);
      await p.getByRole('heading', { name: 'Runs', exact: true }).waitFor();
      await p.goto(`${t.daemon.url}/#/playbooks`);
      const form = p.getByRole('form', { name: `Start ${PLAYBOOK}` });
      const tags = form.getByLabel('tags', { exact: true });
      const said: Record<string, string> = {};
      for (const typed of ['', 'a,b', 'x', '"x"', '{"a": 1}']) {
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
        // Left empty, a required input is missing: said of its field, not of --input or a JSON body.
        '': 'input tags (array) is required: The tags to give. Fill in its field.',
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
      expect(t.pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    } finally {
      await close();
    }

    // The daemon's own HTTP API takes a JSON body, each input as its JSON type: it says so, and not --input either.
    const res = await fetch(`${t.daemon.url}/playbooks/${PLAYBOOK}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${DAEMON_TOKEN}` },
      body: JSON.stringify({ inputs: { tags: 'a,b' } }),
    });
    expect([res.status, await res.json()]).to.deep.equal([
      400,
      {
        error: 'input `tags` is an array: give it as a JSON array, e.g. ["a","b"], not in quotes (got "a,b")',
      },
    ]);
  });

  it('says why starting a run asks to sign in, and gives the form back as filled once signed in', async () => {
    const before = (await runs()).map((r) => r.id);
    const { p, close } = await t.freshPage();
    try {
      // On loopback, the playbooks read without a session.
      await p.goto(`${t.daemon.url}/#/playbooks`);
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
      expect(t.pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    } finally {
      await close();
    }
  });
});
