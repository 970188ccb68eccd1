/**
 * A headless Chromium for the console's browser tests, driven by playwright-core: the machine's own Chromium
 * (`/usr/bin/chromium`, Debian's package, which `.ci/install-chromium` installs; or the binary
 * FLEETBOOK_TEST_CHROMIUM names), never a browser download. One per test process (`sharedBrowser`): a launch costs
 * seconds of CPU, and each suite keeps to contexts of its own. With it, an accessibility check of a page by
 * axe-core and full-page screenshots under test-output/console/.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { chromium, type Browser, type Page } from 'playwright-core';

/** The Chromium binary the tests drive. */
export const CHROMIUM = process.env.FLEETBOOK_TEST_CHROMIUM ?? '/usr/bin/chromium';

/** Where the screenshots go: test-output/console/ under the repository root (ignored by git). */
export const SCREENSHOTS = join(import.meta.dirname, '..', '..', 'test-output', 'console');

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
let axeSource: string | undefined;

/** Starts the headless Chromium; a missing binary fails with how to install it. */
async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `no Chromium at ${CHROMIUM}: run .ci/install-chromium (as root, it installs Debian's chromium), ` +
        'or set FLEETBOOK_TEST_CHROMIUM to a Chromium binary',
    );
  // Chromium keeps its process-singleton folder (org.chromium.Chromium.*) in its TMPDIR and leaves it behind when
  // it is killed, as it is at a worker's exit: a folder of this process's own, removed as the process exits.
  const own = mkdtempSync(join(tmpdir(), 'fleetbook-chromium-'));
  process.once('exit', () => rmSync(own, { recursive: true, force: true }));
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox'],
    env: { ...process.env, TMPDIR: own },
  });
}

let shared: Promise<Browser> | undefined;

/**
 * The process's one Chromium, launched on first use. A suite opens contexts of its own in it (`newContext`, or
 * `newPage`, which makes one) and closes those, never the browser. The browser closes when the process ends: in a
 * mocha run of one process, by a root `after` hook once every file has run, so that mocha without `--exit` ends
 * too; in each worker of a parallel run, and on `--exit` or any other exit, by playwright-core's exit handler,
 * which kills the browser's processes. A browser that went away (crashed, or closed) is launched anew next time.
 */
export function sharedBrowser(): Promise<Browser> {
  if (shared) return shared;
  // Forgotten only if it is still the one shared: a late event of an older browser leaves a newer one be.
  const forget = () => {
    if (shared === launched) shared = undefined;
  };
  const launched: Promise<Browser> = launchBrowser().then(
    (b) => {
      b.once('disconnected', forget);
      return b;
    },
    (e: unknown) => {
      forget();
      throw e;
    },
  );
  shared = launched;
  return launched;
}

/** Closes the shared browser, if one was launched. */
export async function closeSharedBrowser(): Promise<void> {
  const b = shared;
  shared = undefined;
  await (await b?.catch(() => undefined))?.close();
}

// A parallel run's workers (MOCHA_WORKER_ID set) each run many files: there a root hook would run after the first.
if (process.env.MOCHA_WORKER_ID === undefined && typeof after === 'function') after(closeSharedBrowser);

interface AxeViolation {
  id: string;
  impact?: string | null;
  help: string;
  helpUrl: string;
  nodes: { target: unknown[]; failureSummary?: string }[];
}

/**
 * Runs axe-core in the page (WCAG 2 A and AA, and axe's best practices) and fails listing every violation of
 * impact serious or critical: its rule, what it asks, and the first elements it found. `context` names the page
 * in the failure.
 */
export async function checkAccessibility(page: Page, context: string): Promise<void> {
  // Evaluated rather than added as a <script> (page.addScriptTag): the console's Content-Security-Policy allows
  // no inline script, and the test keeps that policy in force rather than bypass it.
  axeSource ??= await readFile(AXE, 'utf8');
  await page.evaluate(axeSource);
  // The function runs in the page, where `axe` and `document` are globals (this project's types have no DOM).
  const violations = await page.evaluate(async () => {
    const g = globalThis as unknown as {
      document: unknown;
      axe: {
        run(
          context: unknown,
          options: { runOnly: string[] },
        ): Promise<{
          violations: {
            id: string;
            impact?: string | null;
            help: string;
            helpUrl: string;
            nodes: { target: unknown[]; failureSummary?: string }[];
          }[];
        }>;
      };
    };
    const result = await g.axe.run(g.document, { runOnly: ['wcag2a', 'wcag2aa', 'best-practice'] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact ?? null,
      help: v.help,
      helpUrl: v.helpUrl,
      nodes: v.nodes.map((n) => ({
        target: n.target,
        ...(n.failureSummary !== undefined ? { failureSummary: n.failureSummary } : {}),
      })),
    }));
  });
  const serious = (violations as AxeViolation[]).filter(
    (v) => v.impact === 'serious' || v.impact === 'critical',
  );
  const text = serious.map(
    (v) =>
      `${v.id} (${v.impact}): ${v.help}; ${v.nodes.length} element(s), first ${v.nodes
        .slice(0, 3)
        .map((n) => JSON.stringify(n.target))
        .join(
          ', ',
        )}${v.nodes[0]?.failureSummary ? `\n    ${v.nodes[0].failureSummary.replaceAll('\n', '\n    ')}` : ''}`,
  );
  expect(
    serious.length,
    `serious or critical accessibility violations on ${context} (axe-core):\n  ${text.join('\n  ')}\n`,
  ).to.equal(0);
}

/** A full-page PNG of the page, as test-output/console/<name>.png; its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, `${name}.png`);
  // From the top: a page scrolled down draws its sticky parts (the nav, table headers) where the scroll left them.
  await page.evaluate(() =>
    (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0),
  );
  await page.screenshot({ path, fullPage: true });
  return path;
}

/**
 * Calls `check` until it answers something other than undefined, every `every` ms; past `ms`, fails naming
 * `what` and the last thing `check` saw (what it passed to `seen`).
 */
export async function until<T>(
  what: string,
  check: (seen: (s: string) => void) => Promise<T | undefined>,
  ms = 30_000,
  every = 200,
): Promise<T> {
  let last = '';
  const deadline = Date.now() + ms;
  for (;;) {
    const found = await check((s) => (last = s));
    if (found !== undefined) return found;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${ms} ms waiting for ${what}${last ? `; last seen: ${last}` : ''}`);
    await new Promise((r) => setTimeout(r, every));
  }
}
