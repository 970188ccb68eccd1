/**
 * What a step says of itself, on the console: the run API (`GET /console/api/runs/{id}`) gives a skipped step's
 * `reason` (a device step and a forEach given no devices: before, both read `succeeded`, and nothing said that no
 * request was sent) and a report step's `note` (the file it wrote and its rows), and the run page shows each in
 * the step's row (backticked names as code), as `fleetbook run` and `runs show` do. Real runs on an emulator over loopback into a real
 * SQLite store; the console's routes on a Fastify app of their own, read with `app.inject()` and in a headless
 * Chromium (test/helpers/browser.ts). The timeline of a run under a second labels its end `+41ms` after its start:
 * before, both labels read the same time, to the second.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import type { AddressInfo } from 'node:net';
import type { BrowserContext } from 'playwright-core';
import { engineSettings } from '../../src/actions/settings.js';
import { runPlaybook } from '../../src/runner/runner.js';
import type { StepSummary } from '../../src/store/store.js';
import { screenshot, sharedBrowser } from '../helpers/browser.js';
import { consoleApp, runStepRows } from '../helpers/console.js';
import { onEmulator, playbook } from '../runner/helpers.js';
import { tempDir } from '../helpers/temp.js';

const TOKEN = 'step-notes-console-token';
const SUSPEND = 'no devices: `devices` is an empty list, nothing was sent';
const EACH = 'no items: `forEach.items` is an empty list, no iteration ran';
const fixture = (...path: string[]) =>
  readFileSync(join(import.meta.dirname, '..', 'fixtures', ...path), 'utf8');

describe('console: a step skipped says why, a report step where it wrote', function () {
  this.timeout(60_000);
  const t = onEmulator();
  let tmp: string;
  /** The run of the CLI test's playbook: a listing that finds no device, then steps given none. */
  let skippedRun: string;
  let reportRun: string;
  let nestedRun: string;
  let note: string;
  let console_: Awaited<ReturnType<typeof consoleApp>>;

  before(async () => {
    tmp = tempDir('fleetbook-step-notes-');
    const run = async (yaml: string, inputs = {}) => {
      const s = await runPlaybook(playbook(yaml), {
        client: t.client,
        store: t.store,
        inputs,
        engine: engineSettings({ reportsDir: tmp }),
      });
      expect(s.status, s.error).to.equal('succeeded');
      return s.runId;
    };
    skippedRun = await run(fixture('empty-device-list', 'suspend-over-usage.yaml'), { account: t.account });
    reportRun = await run(fixture('report-note', 'write-a-report.yaml'));
    nestedRun = await run(fixture('nested-steps', 'nested.yaml'));
    // The temporary directory is not below the working directory: the file is named whole.
    note = `wrote ${join(tmp, 'sites.csv')}, 2 rows`;
    console_ = await consoleApp(t.store, TOKEN);
    // The browser tests read the console on a port of its own.
    await console_.app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(async () => {
    await console_.close();
  });

  it('the run API gives each skipped step its reason, and the report step its note', async () => {
    const steps = async (id: string) => {
      const res = await console_.app.inject({ method: 'GET', url: `/console/api/runs/${id}` });
      expect(res.statusCode, res.body).to.equal(200);
      return (res.json() as { run: { steps: StepSummary[] } }).run.steps;
    };
    const skipped = await steps(skippedRun);
    expect(skipped.find((s) => s.id === 'suspend')).to.include({ status: 'skipped', reason: SUSPEND });
    expect(skipped.find((s) => s.id === 'each')).to.include({ status: 'skipped', reason: EACH });
    expect((await steps(reportRun)).find((s) => s.id === 'save')).to.include({ status: 'succeeded', note });
  });

  it("the run page shows the reason and the note in the step's row", async () => {
    const { port } = console_.app.server.address() as AddressInfo;
    let context: BrowserContext | undefined;
    try {
      context = await (await sharedBrowser()).newContext();
      const p = await context.newPage();
      const row = await runStepRows(p, port, skippedRun, 'suspend');
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
      const report = await runStepRows(p, port, reportRun, 'save');
      expect(await report('save').innerText()).to.contain(note);
      console.log(`    screenshot: ${await screenshot(p, '20-report-note')}`);
    } finally {
      await context?.close();
    }
  });

  it('the timeline of a run under a second labels its end by the time since its start, to the ms', async () => {
    // The nested run's steps only log: it takes a few milliseconds, its start and end the same second.
    const res = await console_.app.inject({ method: 'GET', url: `/console/api/runs/${nestedRun}` });
    const { run } = res.json() as { run: { startedAt: string; endedAt: string; steps: StepSummary[] } };
    const starts = [run.startedAt, ...run.steps.flatMap((s) => s.startedAt ?? [])].map(Date.parse);
    const ends = [run.endedAt, ...run.steps.flatMap((s) => s.endedAt ?? [])].map(Date.parse);
    const [start, end] = [Math.min(...starts), Math.max(...ends)];
    expect(end - start, JSON.stringify(run)).to.be.below(1000);
    const { port } = console_.app.server.address() as AddressInfo;
    let context: BrowserContext | undefined;
    try {
      context = await (await sharedBrowser()).newContext();
      const p = await context.newPage();
      await runStepRows(p, port, nestedRun, 'each');
      const axis = p.locator('.timeline-axis time');
      expect(await axis.count()).to.equal(2);
      // The start as a time of day; the end as how long after it, its own time in its title.
      expect(await axis.nth(0).getAttribute('datetime')).to.equal(new Date(start).toISOString());
      expect([await axis.nth(1).innerText(), await axis.nth(1).getAttribute('datetime')]).to.deep.equal([
        `+${end - start}ms`,
        new Date(end).toISOString(),
      ]);
      expect(await axis.nth(0).innerText()).to.not.equal(await axis.nth(1).innerText());
      console.log(`    screenshot: ${await screenshot(p, '20-short-run-timeline')}`);
    } finally {
      await context?.close();
    }
  });

  it('the run page indents the steps of a forEach or a parallel under the step they ran in', async () => {
    const { port } = console_.app.server.address() as AddressInfo;
    let context: BrowserContext | undefined;
    try {
      context = await (await sharedBrowser()).newContext();
      const p = await context.newPage();
      const row = await runStepRows(p, port, nestedRun, 'each');
      const shape: Record<string, [number, string | null]> = {};
      for (const id of ['each', 'inner', 'both', 'left', 'right', 'after', 'bye']) {
        const th = row(id).getByRole('rowheader');
        const left = await th.evaluate((e) =>
          parseFloat(
            (
              globalThis as unknown as { getComputedStyle(el: unknown): Record<string, string> }
            ).getComputedStyle(e).paddingLeft as string,
          ),
        );
        shape[id] = [left, await th.getAttribute('title')];
      }
      const top = shape.each![0];
      const step = shape.inner![0] - top;
      expect(step, 'an inner step is indented').to.be.greaterThan(4);
      expect(shape).to.deep.equal({
        each: [top, null],
        inner: [top + step, 'within each'],
        both: [top + step, 'within each'],
        left: [top + 2 * step, 'within both'],
        right: [top + 2 * step, 'within both'],
        after: [top, null],
        bye: [top, null],
      });
      // The timeline's labels sit the same way.
      const labels = await p
        .locator('.timeline-label')
        .evaluateAll((es) =>
          es.map((e) => [
            (e as unknown as { textContent: string }).textContent.trim(),
            parseFloat(
              (
                globalThis as unknown as { getComputedStyle(el: unknown): Record<string, string> }
              ).getComputedStyle(e).paddingLeft as string,
            ),
          ]),
        );
      const unit = (labels[1]?.[1] as number) - (labels[0]?.[1] as number);
      expect(unit, 'an inner label is indented').to.be.greaterThan(4);
      expect(
        labels.map(([id, left]) => [id, Math.round(((left as number) - (labels[0]?.[1] as number)) / unit)]),
      ).to.deep.equal([
        ['each', 0],
        ['inner', 1],
        ['both', 1],
        ['left', 2],
        ['right', 2],
        ['after', 0],
        ['bye', 0],
      ]);
      console.log(`    screenshot: ${await screenshot(p, '20-nested-steps')}`);
    } finally {
      await context?.close();
    }
  });
});
