/**
 * What the console's browser suites share: an emulator of this process, a real `fleetbook serve` (the built
 * binary, `npm run build` first) on it with its SQLite state in a temporary directory and a console token, and
 * the process's headless Chromium (test/helpers/browser.ts, `sharedBrowser`). A describe block calls
 * `consoleSuite` once; the members are there once the block's `before` hooks run, and all is closed after it:
 * the daemon, the emulator and every browser context the suite opened (the browser itself serves the process's
 * next suite). A test that fails is followed by a screenshot of the page it last opened, what that page reported
 * going wrong, and the daemon's last stderr lines.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import type { Emulator, EmulatorOptions } from '../../src/emulator/index.js';
import { emulator } from '../runner/helpers.js';
import { tempDir } from './temp.js';
import { screenshot, sharedBrowser, until } from './browser.js';
import { emulatorEnv } from './cli.js';
import { DaemonProcess } from './daemon.js';

export interface ConsoleSuiteOptions {
  /**
   * Names the daemon (`<name> daemon`, as its start and failures say) and its callback credentials (user
   * `<name>-listener`, password `<name>-listener-password`).
   */
  name: string;
  /** The daemon's playbooks folder. */
  playbooks: string;
  /** The console token (FLEETBOOK_CONSOLE_TOKEN). */
  token: string;
  /** The daemon's own bearer token for its HTTP API (FLEETBOOK_DAEMON_TOKEN). @default none */
  daemonToken?: string;
  /**
   * More of the daemon's environment, e.g. FLEETBOOK_LOG_LEVEL; or made of the suite's emulator once it is up
   * (a bearer token it issued, as FLEETBOOK_ACCESS_TOKEN).
   */
  env?: Record<string, string> | ((emu: Emulator) => Promise<Record<string, string>>);
  /** The address the daemon listens on: beyond loopback, reading needs the token too. @default 127.0.0.1 */
  host?: string;
  /** The emulator's options, over `emulator()`'s (test/runner/helpers.ts). @default 5 devices an account */
  emulator?: EmulatorOptions;
}

/** A page of a browser context of its own, with no session; `close` closes the context. */
export interface OpenPage {
  p: Page;
  context: BrowserContext;
  close(): Promise<void>;
}

export interface ConsoleSuite {
  emu: Emulator;
  /** The emulator's first account. */
  account: string;
  /** The temporary directory, and the daemon's SQLite state file in it. */
  dir: string;
  state: string;
  daemon: DaemonProcess;
  /** The callback credentials the daemon takes. */
  callback: { username: string; password: string };
  /** The process's shared browser: open contexts of it by `freshPage`, never close it. */
  browser: Browser;
  /** The page `freshPage` or `signedIn` last opened: the one screenshotted when a test fails. */
  page: Page | undefined;
  /** The uncaught errors of every page opened, as `pageerror: <message>`. */
  pageErrors: string[];
  /** With `watchConsole`: the answers of status 400 or more and the console.error messages of a page. */
  consoleErrors: string[];
  /**
   * A page of a context of its own (1280×900, 15 s default timeout), its uncaught errors kept in `pageErrors`;
   * with `watchConsole`, its failed answers and console errors in `consoleErrors` too.
   */
  freshPage(o?: { watchConsole?: boolean }): Promise<OpenPage>;
  /** A fresh page signed in by the address with the token, on the runs list. */
  signedIn(): Promise<OpenPage>;
  /**
   * Starts a run of `playbook` (no inputs) by the console's API, as its Start button does, and opens its page on
   * `p` once it shows the run `running`; its id.
   */
  openRunning(p: Page, playbook: string): Promise<string>;
}

export function consoleSuite(o: ConsoleSuiteOptions): ConsoleSuite {
  const contexts = new Set<BrowserContext>();
  const t = {
    page: undefined,
    pageErrors: [],
    consoleErrors: [],
    callback: { username: `${o.name}-listener`, password: `${o.name}-listener-password` },
    async freshPage({ watchConsole = false } = {}) {
      const context = await t.browser.newContext({ viewport: { width: 1280, height: 900 } });
      contexts.add(context);
      context.once('close', () => contexts.delete(context));
      const p = (t.page = await context.newPage());
      p.setDefaultTimeout(15_000);
      p.on('pageerror', (e) => t.pageErrors.push(`pageerror: ${e.message}`));
      if (watchConsole) {
        p.on('response', (r) => {
          if (r.status() >= 400) t.consoleErrors.push(`${r.status()} ${r.request().method()} ${r.url()}`);
        });
        p.on('console', (m) => {
          if (m.type() === 'error') t.consoleErrors.push(`console.error: ${m.text()}`);
        });
      }
      return { p, context, close: () => context.close() };
    },
    async signedIn() {
      const open = await t.freshPage();
      await open.p.goto(`${t.daemon.url}/#token=${o.token}`);
      await open.p.getByRole('heading', { name: 'Runs', exact: true }).waitFor();
      return open;
    },
    async openRunning(p, playbook) {
      const runId = await startConsoleRun(t.daemon, playbook, o.token);
      await p.goto(`${t.daemon.url}/#/runs/${runId}`);
      expect(await shownRun(p)).to.equal(runId);
      await until('the run shown running', async (seen) => runStatusIs(p, 'running', seen));
      return runId;
    },
  } as Partial<ConsoleSuite> as ConsoleSuite;

  before(async () => {
    t.emu = await emulator({ devicesPerAccount: 5, ...o.emulator });
    t.account = t.emu.defaults.accounts[0]!;
    t.dir = tempDir('fleetbook-console-suite-');
    t.state = join(t.dir, 'state.db');
    t.daemon = await DaemonProcess.start(`${o.name} daemon`, {
      playbooks: o.playbooks,
      state: t.state,
      ...(o.host !== undefined ? { host: o.host } : {}),
      env: {
        ...emulatorEnv(t.emu),
        FLEETBOOK_CALLBACK_USERNAME: t.callback.username,
        FLEETBOOK_CALLBACK_PASSWORD: t.callback.password,
        FLEETBOOK_CONSOLE_TOKEN: o.token,
        ...(o.daemonToken !== undefined ? { FLEETBOOK_DAEMON_TOKEN: o.daemonToken } : {}),
        ...(typeof o.env === 'function' ? await o.env(t.emu) : o.env),
      },
    });
    t.browser = await sharedBrowser();
  });

  afterEach(async function () {
    if (this.currentTest?.state !== 'failed') return;
    const { page } = t;
    if (page && !page.isClosed()) {
      const path = await screenshot(page, 'failure').catch(() => undefined);
      if (path) console.log(`    the page when it failed: ${path} (${page.url()})`);
    }
    const errors = [...t.pageErrors, ...t.consoleErrors];
    if (errors.length) console.log(`    the page's errors:\n      ${errors.join('\n      ')}`);
    console.log(`    the daemon's stderr, last lines:\n${t.daemon?.stderr.slice(-3000)}`);
  });

  after(async () => {
    await Promise.all([...contexts].map((c) => c.close()));
    await t.daemon?.kill();
    await t.emu?.close();
  });

  return t;
}

/**
 * Starts a run of `playbook` by the console's API (`POST /console/api/playbooks/NAME/runs`, the Start button's
 * request), as a script does, with `token` as a bearer: its id. Throws with the answer on anything but 202. The
 * daemon's own API has DaemonProcess.startRun.
 */
export async function startConsoleRun(
  daemon: Pick<DaemonProcess, 'url'>,
  playbook: string,
  token: string,
  inputs: Record<string, unknown> = {},
  o: { dryRun?: boolean } = {},
): Promise<string> {
  const path = `/console/api/playbooks/${playbook}/runs`;
  const res = await fetch(`${daemon.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ inputs, ...(o.dryRun !== undefined ? { dryRun: o.dryRun } : {}) }),
  });
  const text = await res.text();
  if (res.status !== 202) throw new Error(`POST ${path}: ${res.status} ${text.slice(0, 500)}`);
  return (JSON.parse(text) as { runId: string }).runId;
}

/** The id of the run a console page went to (`#/runs/<id>`), once it shows the run. */
export async function shownRun(p: Page): Promise<string> {
  await p.getByRole('heading', { name: /^Run / }).waitFor();
  return until('the run id in the address', async (seen) => {
    seen(p.url());
    return /#\/runs\/([0-9a-f-]{36})/.exec(p.url())?.[1];
  });
}

/** The header texts of a table, in order. */
export async function columns(table: Locator): Promise<string[]> {
  return (await table.locator('thead th').allInnerTexts()).map((s) => s.trim());
}

/** The index of the column headed `name` (case ignored); fails listing the headers there are. */
export function column(cols: string[], name: string): number {
  const i = cols.findIndex((c) => c.toLowerCase() === name.toLowerCase());
  expect(i, `a column "${name}" among ${JSON.stringify(cols)}`).to.be.at.least(0);
  return i;
}

/** A row's cells (td or th), not those of a table nested in it. */
export const cells = (row: Locator) => row.locator(':scope > td, :scope > th');

/**
 * The texts of every body row of a table, cell by cell; a cell of several lines (a device's id and its kind
 * beneath) as one, its lines joined by a space.
 */
export async function bodyRows(table: Locator): Promise<string[][]> {
  const rows = await table.locator(':scope > tbody > tr').all();
  return Promise.all(
    rows.map(async (r) => (await cells(r).allInnerTexts()).map((s) => s.replace(/\s+/g, ' ').trim())),
  );
}

/** The table whose caption says `caption`, exactly (a chart's table, "Runs over time", is not the runs table). */
export const tableCaptioned = (page: Page, caption: string) =>
  page.locator('table', {
    has: page.locator('caption', { hasText: new RegExp(`^\\s*${caption}\\s*$`) }),
  });

/** What the run page's fact named `name` says, or `(no <name> shown)`. */
export async function factOf(page: Page, name: string): Promise<string> {
  const fact = page
    .locator('main dl > div')
    .filter({ has: page.locator('dt', { hasText: new RegExp(`^\\s*${name}\\s*$`) }) })
    .locator('dd');
  return (await fact.count()) ? (await fact.first().innerText()).trim() : `(no ${name} shown)`;
}

/** Whether the run page's status (the Status of its facts) says `status`; what it says goes to `seen`. */
export async function runStatusIs(
  page: Page,
  status: string,
  seen: (s: string) => void,
): Promise<true | undefined> {
  const text = await factOf(page, 'Status');
  seen(`status "${text}"`);
  return text.toLowerCase() === status ? true : undefined;
}
