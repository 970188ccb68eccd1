/**
 * The console's routes on a Fastify app of their own, over a real store, with no daemon around them: its JSON
 * reads, tested with `app.inject()`. `close` stops the app and the console's own timers.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import type { Locator, Page } from 'playwright-core';
import { ConsoleAccess } from '../../src/console/access.js';
import { registerConsole, type ConsoleSources } from '../../src/console/routes.js';
import { silentLogger } from '../../src/log.js';
import type { Store } from '../../src/store/store.js';
import { until } from './browser.js';

export async function consoleApp(
  store: Store,
  token: string,
): Promise<{ app: FastifyInstance; close(): Promise<void> }> {
  const app = Fastify({ logger: false });
  const { close } = registerConsole(app, {
    store,
    access: ConsoleAccess.of(token, '127.0.0.1').access,
    log: silentLogger,
    version: 'test',
    playbooks: new Map(),
    nextFires: () => [],
    runs: () => ({ running: 0, queued: 0 }),
  } as unknown as ConsoleSources);
  await app.ready();
  return {
    app,
    close: async () => {
      close();
      await app.close();
    },
  };
}

/**
 * The run page of `runId` from the console on `port`, opened in `p` and read once its steps table shows the
 * step `first`: the row of a step, by its id.
 */
export async function runStepRows(
  p: Page,
  port: number,
  runId: string,
  first: string,
): Promise<(id: string) => Locator> {
  await p.goto(`http://127.0.0.1:${port}/#/runs/${runId}`);
  const table = p.locator('table', { has: p.locator('caption', { hasText: /^\s*Steps\s*$/ }) });
  const row = (id: string) =>
    table.locator(':scope > tbody > tr', { has: p.getByRole('rowheader', { name: id, exact: true }) });
  await until('the steps table', async (seen) => {
    const text = await row(first)
      .innerText()
      .catch(() => '');
    seen(text);
    return text ? true : undefined;
  });
  return row;
}
