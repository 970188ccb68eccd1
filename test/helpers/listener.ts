/**
 * The daemon's HTTP routes on a Fastify app of their own, with the options `fleetbook serve` gives it, a real
 * SQLite store and a group commit, but no runs, matcher or scheduler: the callback listener alone, tested with
 * `app.inject()`.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/config.js';
import { GroupCommit } from '../../src/daemon/callbacks.js';
import { DaemonMetrics } from '../../src/daemon/metrics.js';
import type { RunPool } from '../../src/daemon/pool.js';
import { routes, type RouteContext } from '../../src/daemon/routes.js';
import { silentLogger } from '../../src/log.js';
import type { SqliteStore } from '../../src/store/sqlite.js';

export const LISTENER_USER = 'listener-user';
export const LISTENER_PASSWORD = 'listener-password-5rT8';
/** The owner the listener's messages are stored under, as a daemon stores them under its lease. */
export const LISTENER_OWNER = 'listener-test';

export interface Listener {
  app: FastifyInstance;
  metrics: DaemonMetrics;
  /** The value of `fleetbook_callbacks_rejected_total` for `reason`. */
  rejected(reason: string): Promise<number>;
}

/** The listener on `store`; `env` holds FLEETBOOK_* settings. */
export async function listener(store: SqliteStore, env: Record<string, string> = {}): Promise<Listener> {
  const app = Fastify({ bodyLimit: 1024 * 1024, logger: false });
  const metrics = new DaemonMetrics({
    backlog: () => store.inboxBacklog(),
    running: () => 0,
    client: () => undefined,
  });
  const context = {
    store,
    owner: LISTENER_OWNER,
    playbooks: new Map(),
    pool: {} as RunPool,
    commits: new GroupCommit(store, LISTENER_OWNER, () => undefined),
    creds: { username: LISTENER_USER, password: LISTENER_PASSWORD },
    metrics,
    config: loadConfig({ FLEETBOOK_STATE: ':memory:', ...env }),
    log: silentLogger,
    accepting: () => true,
    readiness: () => ({ status: 'ready' }),
    registrations: () => [],
    reloadRefused: () => undefined,
    scheduler: () => undefined,
    rates: () => undefined,
    authRefused: () => undefined,
    logins: async () => ({ counted: [] }),
  } as RouteContext;
  routes(app, context);
  await app.ready();
  return {
    app,
    metrics,
    rejected: async (reason) =>
      (await metrics.callbacksRejected.get()).values.find((v) => v.labels.reason === reason)?.value ?? 0,
  };
}

/** A CarrierService callback with the listener's credentials. */
export function carrierCallback(
  requestId: string,
  over: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    username: LISTENER_USER,
    password: LISTENER_PASSWORD,
    requestId,
    deviceIds: [{ id: '490154203237518', kind: 'imei' }],
    deviceResponse: { suspendResponse: { accountName: '0000123456-00001', succeeded: 1, failed: [] } },
    status: 'Success',
    callbackCount: 1,
    maxCallbackThreshold: 4,
    ...over,
  };
}

/** `{"a":{"a":…1…}}`, `depth` objects deep, as text. */
export const nestedText = (depth: number): string => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
