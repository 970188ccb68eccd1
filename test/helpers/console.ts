/**
 * The console's routes on a Fastify app of their own, over a real store, with no daemon around them: its JSON
 * reads, tested with `app.inject()`. `close` stops the app and the console's own timers.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { ConsoleAccess } from '../../src/console/access.js';
import { registerConsole, type ConsoleSources } from '../../src/console/routes.js';
import { silentLogger } from '../../src/log.js';
import type { Store } from '../../src/store/store.js';

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
