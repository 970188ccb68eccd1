/**
 * A run whose device step and forEach were given no devices, on the console: the run API (`GET
 * /console/api/runs/{id}`) gives each step `skipped` with its `reason`, and the run page shows the reason beside
 * the step, its backticked names as code. Before, both steps read `succeeded`, and nothing said that no request was sent. A real run on an
 * emulator over loopback into a real SQLite store; the console's routes on a Fastify app of their own, read with
 * `app.inject()` and in a headless Chromium (test/helpers/browser.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { runPlaybook } from '../../src/runner/runner.js';
import type { StepSummary } from '../../src/store/store.js';
import { launchBrowser } from '../helpers/browser.js';
import { consoleApp, runStepRows } from '../helpers/console.js';
import { onEmulator, playbook } from '../runner/helpers.js';

const TOKEN = 'skipped-step-reason-console-token';
const SUSPEND = 'no devices: `devices` is an empty list, nothing was sent';
const EACH = 'no items: `forEach.items` is an empty list, no iteration ran';

/** The CLI test's playbook (test/fixtures/empty-device-list): a listing that finds no device, then steps given none. */
const PLAYBOOK = readFileSync(
  join(import.meta.dirname, '..', 'fixtures', 'empty-device-list', 'suspend-over-usage.yaml'),
  'utf8',
);

describe('console: a step given no devices is shown skipped, with why', function () {
  this.timeout(60_000);
  const t = onEmulator();
  let runId: string;
  let console_: Awaited<ReturnType<typeof consoleApp>>;

  before(async () => {
    const s = await runPlaybook(playbook(PLAYBOOK), {
      client: t.client,
      store: t.store,
      inputs: { account: t.account },
    });
    expect(s.status, s.error).to.equal('succeeded');
    runId = s.runId;
    console_ = await consoleApp(t.store, TOKEN);
  });
  after(() => console_.close());

  it('the run API gives each step skipped and its reason', async () => {
    const res = await console_.app.inject({ method: 'GET', url: `/console/api/runs/${runId}` });
    expect(res.statusCode, res.body).to.equal(200);
    const steps = (res.json() as { run: { steps: StepSummary[] } }).run.steps;
    expect(steps.find((s) => s.id === 'suspend')).to.include({ status: 'skipped', reason: SUSPEND });
    expect(steps.find((s) => s.id === 'each')).to.include({ status: 'skipped', reason: EACH });
  });

  it("the run page shows the reason in the step's row", async () => {
    await console_.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = console_.app.server.address() as AddressInfo;
    let browser: Browser | undefined;
    try {
      browser = await launchBrowser();
      const p = await browser.newPage();
      const row = await runStepRows(p, port, runId, 'suspend');
      // The reason's backticked names read as code, not between backticks.
      const plain = (s: string) => s.replaceAll('`', '');
      expect(await row('suspend').innerText())
        .to.contain('skipped')
        .and.contain(plain(SUSPEND));
      expect(await row('each').innerText())
        .to.contain('skipped')
        .and.contain(plain(EACH));
      expect({
        suspend: await row('suspend').locator('code').allInnerTexts(),
        each: await row('each').locator('code').allInnerTexts(),
      }).to.deep.equal({ suspend: ['devices'], each: ['forEach.items'] });
    } finally {
      await browser?.close();
    }
  });
});
