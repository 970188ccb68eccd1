/** What the console shows of this daemon (ConsoleSources of console/routes.ts), made of the daemon's parts. */
import type { Counter } from 'prom-client';
import type { ApiClient } from '../api/client.js';
import type { ConsoleAccess } from '../console/access.js';
import { FORM_WORDING } from '../console/form-wording.js';
import type { ConsoleSources } from '../console/routes.js';
import type { Logger } from '../log.js';
import type { Diagnostic } from '../playbook/diagnostics.js';
import type { Playbook } from '../playbook/schema.js';
import type { Store } from '../store/store.js';
import { packageVersion } from '../util/version.js';
import { startManualRun } from './manual-run.js';
import type { DaemonMetrics } from './metrics.js';
import type { LoadedPlaybooks } from './playbook-set.js';
import type { RunPool } from './pool.js';
import type { Scheduler } from './scheduler.js';

export interface DaemonParts {
  store: Store;
  pool: RunPool;
  owner: string;
  /** The set loaded now, with each playbook's file: a reload swaps it. */
  playbooks: LoadedPlaybooks;
  access: ConsoleAccess;
  log: Logger;
  metrics: DaemonMetrics;
  client: ApiClient;
  accepting(): boolean;
  scheduler(): Scheduler | undefined;
}

/** A counter's values by its one label. */
async function byLabel<L extends string>(counter: Counter<L>, label: L): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const v of (await counter.get()).values) {
    const key = String((v.labels as Partial<Record<L, string | number>>)[label] ?? '');
    out[key] = (out[key] ?? 0) + v.value;
  }
  return out;
}

type PlaybookView = { playbook: Playbook; file: string; diagnostics: readonly Diagnostic[] };

export function consoleSources(d: DaemonParts): ConsoleSources {
  // Made again after each reload, once.
  let view: { generation: number; playbooks: ReadonlyMap<string, PlaybookView> } | undefined;
  return {
    store: d.store,
    access: d.access,
    log: d.log,
    version: packageVersion(),
    get playbooks() {
      if (view?.generation !== d.playbooks.generation) {
        const playbooks = new Map(
          [...d.playbooks].map(([name, playbook]) => {
            const s = d.playbooks.sources.get(name);
            return [name, { playbook, file: s?.file ?? '', diagnostics: s?.diagnostics ?? [] }];
          }),
        );
        view = { generation: d.playbooks.generation, playbooks };
      }
      return view.playbooks;
    },
    nextFires: () => d.scheduler()?.next() ?? [],
    runs: () => ({ running: d.pool.running, queued: d.pool.queued }),
    loginsStopped: () => d.client.loginStopped?.message,
    authRefused: () => d.client.authRefused,
    cancel: (runId) => d.pool.cancel(runId, 'cancelled from the console'),
    holds: (runId) => d.pool.holds(runId),
    startRun: async (name, body) => {
      const answer = startManualRun(d, name, body, 'console', FORM_WORDING);
      if ('runId' in answer) await d.store.durable();
      return answer;
    },
    callbackCounts: async () => ({
      received: await byLabel(d.metrics.callbacksReceived, 'service'),
      duplicated: await byLabel(d.metrics.callbacksDuplicated, 'service'),
      rejected: await byLabel(d.metrics.callbacksRejected, 'reason'),
    }),
    rates: () =>
      Object.entries(d.client.areas).map(([area, a]) => ({
        area,
        budget: a.budget,
        rate: Math.round(a.currentRate * 10) / 10,
        concurrency: a.concurrency,
        inFlight: a.inFlight,
        waiting: a.waiting,
        throttled: a.stats.throttled,
        waitedSeconds: Math.round(a.stats.waitedMs / 100) / 10,
        ...(a.pausedUntil > Date.now() ? { pausedUntil: new Date(a.pausedUntil).toISOString() } : {}),
      })),
  };
}
