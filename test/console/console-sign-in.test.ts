/**
 * The console's access rules and forms (docs/console.md) against a real `fleetbook serve` on loopback and a
 * headless Chromium (test/helpers/console-suite.ts): the JSON API reads without credentials and acts only with
 * the token (and the header, with the cookie), and refuses a parameter it does not take; the sign-in form, asked
 * for by a wrong token in the address or by Cancel run; the run form refusing a number field that is no number.
 */
import { expect } from 'chai';
import { checkAccessibility, screenshot, until } from '../helpers/browser.js';
import {
  LONG_PLAYBOOK,
  REPORT_PLAYBOOK,
  TOKEN,
  operatorSuite,
  type Json,
  type RunRow,
} from '../helpers/console-operator.js';
import { runStatusIs, startConsoleRun } from '../helpers/console-suite.js';

describe('console: signing in, access and forms', function () {
  this.timeout(180_000);
  const { t, apiGet, runDetail } = operatorSuite('console-sign-in');

  it('refuses a query parameter a read does not take, or one given twice, naming those it takes', async () => {
    const answers: Record<string, string> = {};
    for (const path of [
      '/runs?stat=failed',
      '/runs?status=failed&status=succeeded',
      '/runs/x/devices?outcom=failed',
      '/runs/x/devices.csv?limit=5',
      '/charts/runs?days=2',
      '/rates?area=m2m',
      '/runs/stream?playbook=nightly',
    ]) {
      const res = await fetch(`${t.daemon.url}/console/api${path}`);
      answers[path] = `${res.status} ${((await res.json()) as { error: string }).error}`;
    }
    expect(answers).to.deep.equal({
      '/runs?stat=failed':
        '400 unknown query parameter "stat": this path takes playbook, status, trigger, from, to, before, limit',
      '/runs?status=failed&status=succeeded': '400 status is given 2 times: give it once',
      '/runs/x/devices?outcom=failed':
        '400 unknown query parameter "outcom": this path takes step, outcome, errorType, device, after, limit',
      '/runs/x/devices.csv?limit=5':
        '400 unknown query parameter "limit": this path takes step, outcome, errorType, device',
      '/charts/runs?days=2': '400 unknown query parameter "days": this path takes hours',
      '/rates?area=m2m': '400 unknown query parameter "area": this path takes none',
      '/runs/stream?playbook=nightly': '400 unknown query parameter "playbook": this path takes none',
    });
  });

  it('reads without credentials on loopback, and acts only with the token (and the header, with the cookie)', async () => {
    const url = `${t.daemon.url}/console/api`;
    const open = await fetch(`${url}/runs`);
    expect(open.status, 'GET /console/api/runs without credentials, on loopback').to.equal(200);
    expect(await open.json())
      .to.have.property('runs')
      .that.is.an('array');

    const overview = (await (await fetch(`${url}/overview`)).json()) as Json;
    expect(overview, 'the overview without credentials').to.include({
      readNeedsToken: false,
      authenticated: false,
      store: 'sqlite',
    });

    // Each start names a bad input: one that gets past the access rules is answered 400, and starts nothing.
    const start = async (headers: Record<string, string>) => {
      const res = await fetch(`${url}/playbooks/${REPORT_PLAYBOOK}/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ inputs: { batch: 'not a number' } }),
      });
      return `${res.status} ${await res.text()}`;
    };
    const session = await fetch(`${url}/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-fleetbook-console': '1' },
      body: JSON.stringify({ token: TOKEN }),
    });
    expect(session.status, 'POST /console/api/session with the token').to.equal(204);
    const cookie = (session.headers.get('set-cookie') ?? '').split(';')[0]!;
    expect(cookie, 'the session cookie').to.match(/^[^=]+=.+/);
    expect(session.headers.get('set-cookie'), 'the session cookie')
      .to.match(/HttpOnly/i)
      .and.match(/SameSite=Strict/i);
    expect(cookie, 'the session cookie does not hold the token').to.not.include(TOKEN);

    const bearer = `Bearer ${TOKEN}`;
    const header = { 'x-fleetbook-console': '1' };
    const cases: [string, Record<string, string>][] = [
      ['no credentials, with the header', header],
      ['no credentials, no header', {}],
      ['a wrong bearer, with the header', { ...header, authorization: `Bearer ${'x'.repeat(32)}` }],
      ['the bearer, no header', { authorization: bearer }],
      ['the session cookie, no header', { cookie }],
      ['the bearer and the header', { ...header, authorization: bearer }],
      ['the session cookie and the header', { ...header, cookie }],
    ];
    const expected: Record<string, number> = {
      // docs/console.md: acting always needs the token...
      'no credentials, with the header': 401,
      'no credentials, no header': 401,
      'a wrong bearer, with the header': 401,
      // ...and "an action (POST) made with the cookie also needs the header X-Fleetbook-Console: 1", which a
      // page of another site cannot send; a script's bearer, which such a page cannot send either, does not.
      'the bearer, no header': 400,
      'the session cookie, no header': 403,
      'the bearer and the header': 400,
      'the session cookie and the header': 400,
    };
    const answers: Record<string, string> = {};
    for (const [name, headers] of cases) answers[name] = await start(headers);
    expect(
      Object.fromEntries(Object.entries(answers).map(([k, v]) => [k, Number(v.slice(0, 3))])),
      `POST /console/api/playbooks/${REPORT_PLAYBOOK}/runs, answered:\n${JSON.stringify(answers, null, 2)}\n`,
    ).to.deep.equal(expected);
    expect(answers['the bearer and the header'], 'the 400 names the bad input').to.match(/batch/);
    // A body that says anything but `inputs` is refused, not started on the playbook's defaults.
    const misnamed = await fetch(`${url}/playbooks/${REPORT_PLAYBOOK}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...header, authorization: bearer },
      body: JSON.stringify({ input: { batch: 5 } }),
    });
    expect([misnamed.status, await misnamed.json()]).to.deep.equal([
      400,
      { error: 'unknown field "input" in the body: it takes "inputs" and "dryRun"' },
    ]);

    const runs = await apiGet<{ runs: RunRow[] }>(`/runs?playbook=${REPORT_PLAYBOOK}`);
    expect(runs.runs, 'runs the refused starts started').to.deep.equal([]);
  });

  it('says why Cancel run asks to sign in, and brings the run page back, the run not cancelled', async () => {
    const runId = await startConsoleRun(t.daemon, LONG_PLAYBOOK, TOKEN);
    const { p, context } = await t.freshPage();
    try {
      // On loopback, the run page reads without a session; cancelling needs one.
      await p.goto(`${t.daemon.url}/#/runs/${runId}`);
      await until('the run shown running', async (seen) => runStatusIs(p, 'running', seen));
      await p.getByRole('button', { name: 'Cancel run' }).click();
      await p.getByRole('button', { name: 'Confirm cancel' }).click();

      await p.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
      const why = p.getByRole('status');
      expect(await why.count(), 'a status on the sign-in form that says why').to.equal(1);
      expect(await why.innerText()).to.match(/^Cancelling a run needs signing in\./);
      console.log(`    screenshot: ${await screenshot(p, '15-cancel-sign-in')}`);
      await checkAccessibility(p, 'the sign-in form asked for by Cancel run');
      const refused = await runDetail(runId);
      expect([refused.run.status, refused.run.cancelRequested], 'the run, before signing in').to.deep.equal([
        'running',
        undefined,
      ]);

      await p.getByLabel('Console token', { exact: true }).fill(TOKEN);
      await p.getByRole('button', { name: 'Sign in', exact: true }).click();
      await p.getByRole('heading', { name: /^Run / }).waitFor();
      expect(p.url(), 'the page once signed in').to.match(new RegExp(`#/runs/${runId}$`));
      await until('the run shown running', async (seen) => runStatusIs(p, 'running', seen));
      const cancel = p.getByRole('button', { name: 'Cancel run' });
      await cancel.waitFor();
      expect((await p.getByRole('status').innerText()).trim(), 'the note once signed in').to.equal(
        'Signed in. The run is not cancelled: cancel it again if you still want to.',
      );
      // Focus goes to the button, where the operator left off, not to the top of the page.
      await until('the focus on Cancel run', async (seen) => {
        const focused = await p.evaluate(() => {
          const el = (
            globalThis as unknown as { document: { activeElement: { textContent: string } | null } }
          ).document.activeElement;
          return el?.textContent?.trim() ?? '';
        });
        seen(focused);
        return focused === 'Cancel run' ? true : undefined;
      });
      console.log(`    screenshot: ${await screenshot(p, '16-cancel-signed-in')}`);
      await checkAccessibility(p, 'the run page given back after signing in');
      const signed = await runDetail(runId);
      expect([signed.run.status, signed.run.cancelRequested], 'the run, signed in').to.deep.equal([
        'running',
        undefined,
      ]);

      await cancel.click();
      await p.getByRole('button', { name: 'Confirm cancel' }).click();
      await until('the run shown cancelled', async (seen) => runStatusIs(p, 'cancelled', seen), 30_000, 500);
      expect((await runDetail(runId)).run.error).to.equal('cancelled from the console');
      expect(t.pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    } finally {
      await context.close();
      // Whatever happened above, the run does not wait its ten minutes.
      await fetch(`${t.daemon.url}/console/api/runs/${runId}/cancel`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}` },
      });
    }
  });

  it('asks for the token when the one in the address is wrong, and signs in with it', async () => {
    const { p, context } = await t.freshPage();
    try {
      const wrong = 'w'.repeat(32);
      await p.goto(`${t.daemon.url}/#token=${wrong}`);
      await p.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
      expect(p.url(), 'the address, the wrong token taken out').to.not.include(wrong);
      expect(await p.getByRole('alert').innerText(), 'why the address did not sign in').to.match(/token/i);
      console.log(`    screenshot: ${await screenshot(p, '12-sign-in')}`);
      await checkAccessibility(p, 'the sign-in form');
      await p.getByLabel('Console token', { exact: true }).fill(TOKEN);
      await p.getByRole('button', { name: 'Sign in', exact: true }).click();
      await p.getByRole('heading', { name: 'Runs', exact: true }).waitFor();
      const cookies = await context.cookies(t.daemon.url);
      expect(cookies, 'the session cookie').to.have.length(1);
      expect(cookies[0]).to.include({ httpOnly: true, sameSite: 'Strict' });
      expect(cookies[0]!.value, 'the session cookie does not hold the token').to.not.include(TOKEN);
      expect(t.pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    } finally {
      await context.close();
    }
  });

  it('refuses a number field whose text is no number, naming it, and starts nothing', async () => {
    const { p, close } = await t.signedIn();
    try {
      const before = (await apiGet<{ runs: RunRow[] }>(`/runs?playbook=${REPORT_PLAYBOOK}`)).runs;
      await p.goto(`${t.daemon.url}/#/playbooks`);
      const form = p.getByRole('form', { name: `Start ${REPORT_PLAYBOOK}` });
      const batch = form.getByLabel('batch', { exact: true });
      // Keys a number field takes, typed as an operator types them: `1e` is no number.
      await batch.fill('');
      await batch.pressSequentially('1e');
      await form.getByRole('button', { name: 'Start run' }).click();
      const said = await until('why the form did not start', async (seen) => {
        seen(p.url());
        const alert = form.getByRole('alert');
        return (await alert.count()) ? alert.innerText() : undefined;
      });
      expect(said).to.equal('Input batch: what is typed is not a number.');
      expect(p.url(), 'the page').to.match(/#\/playbooks$/);
      const after = (await apiGet<{ runs: RunRow[] }>(`/runs?playbook=${REPORT_PLAYBOOK}`)).runs;
      expect(
        after.map((r) => r.id),
        'the runs of the playbook',
      ).to.deep.equal(before.map((r) => r.id));
      expect(t.pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    } finally {
      await close();
    }
  });
});
