/**
 * A `report.write` step on the console: the run API gives the step's `note` (the file it wrote and its rows),
 * and the run page shows it in the step's row, as `fleetbook run` and `runs show` do. A real run into a real
 * SQLite store; the console's routes on a Fastify app of their own, read with `app.inject()` and in a headless
 * Chromium (test/helpers/browser.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { engineSettings } from '../../src/actions/settings.js';
import { runPlaybook } from '../../src/runner/runner.js';
import type { StepSummary } from '../../src/store/store.js';
import { launchBrowser, screenshot } from '../helpers/browser.js';
import { consoleApp, runStepRows } from '../helpers/console.js';
import { onEmulator, playbook, tempDir } from '../runner/helpers.js';

const TOKEN = 'report-note-console-token';
const PLAYBOOK = readFileSync(
  join(import.meta.dirname, '..', 'fixtures', 'report-note', 'write-a-report.yaml'),
  'utf8',
);

describe('console: where a report step wrote its file', function () {
  this.timeout(60_000);
  const t = onEmulator();
  let tmp: { dir: string; close(): Promise<void> };
  let runId: string;
  let note: string;
  let console_: Awaited<ReturnType<typeof consoleApp>>;

  before(async () => {
    tmp = await tempDir();
    const s = await runPlaybook(playbook(PLAYBOOK), {
      client: t.client,
      store: t.store,
      engine: engineSettings({ reportsDir: tmp.dir }),
    });
    expect(s.status, s.error).to.equal('succeeded');
    runId = s.runId;
    // The temporary directory is not below the working directory: the file is named whole.
    note = `wrote ${join(tmp.dir, 'sites.csv')}, 2 rows`;
    console_ = await consoleApp(t.store, TOKEN);
  });
  after(async () => {
    await console_.close();
    await tmp.close();
  });

  it('the run API gives the step its note', async () => {
    const res = await console_.app.inject({ method: 'GET', url: `/console/api/runs/${runId}` });
    expect(res.statusCode, res.body).to.equal(200);
    const steps = (res.json() as { run: { steps: StepSummary[] } }).run.steps;
    expect(steps.find((s) => s.id === 'save')).to.include({ status: 'succeeded', note });
  });

  it("the run page shows the note in the step's row", async () => {
    await console_.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = console_.app.server.address() as AddressInfo;
    let browser: Browser | undefined;
    try {
      browser = await launchBrowser();
      const p = await browser.newPage();
      const row = await runStepRows(p, port, runId, 'save');
      expect(await row('save').innerText()).to.contain(note);
      console.log(`    screenshot: ${await screenshot(p, '20-report-note')}`);
    } finally {
      await browser?.close();
    }
  });
});
