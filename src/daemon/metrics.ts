/**
 * The daemon's Prometheus metrics (prom-client), on a registry of its own so that several daemons can live
 * in one process (tests). Values that other parts already count (the inbox backlog, the rate queues) are
 * read when scraped.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ApiClient } from '../api/client.js';

/**
 * Why a callback was refused. Refused before authenticating (each counts against the sender's failure budget):
 * `unauthenticated` (401), `malformed` (400, 415), `too_large` (413). Then `throttled` (429: the sender's
 * failure budget is spent), `overloaded` (503: the inbox backlog or the bytes read unauthenticated are at their
 * bound), `invalid` (400: authenticated, not a callback), `unstorable` (400: the store cannot take this
 * message), `store_failed` (503: the store failed, e.g. the disk is full).
 */
export type RejectReason =
  | 'unauthenticated'
  | 'malformed'
  | 'too_large'
  | 'throttled'
  | 'overloaded'
  | 'invalid'
  | 'unstorable'
  | 'store_failed'
  /** A post under /callbacks/ that no route takes: the sender's URL is wrong (a registration's). */
  | 'no_route';

export class DaemonMetrics {
  readonly registry = new Registry();
  readonly callbacksReceived: Counter<'service'>;
  readonly callbacksDuplicated: Counter<'service'>;
  readonly callbacksRejected: Counter<'reason'>;
  readonly runs: Counter<'playbook' | 'status'>;
  readonly runDuration: Histogram<'playbook' | 'status'>;
  readonly apiCalls: Counter<'action' | 'status'>;
  readonly expressionErrors: Counter<'playbook' | 'expression'>;
  readonly deviceOutcomes: Counter<'playbook' | 'outcome'>;
  readonly lateOutcomes: Counter<'outcome'>;
  readonly schedulesSkipped: Counter<'playbook'>;

  constructor(sources: {
    backlog: () => number;
    running: () => number;
    client: () => ApiClient | undefined;
    /** Callback registrations not in place (registrations.ts); none where the daemon registers none. */
    registrationsFailing?: () => number;
    /** Whether the last reload of the playbooks was refused, and no later one took the files (reload.ts). */
    reloadRefused?: () => boolean;
  }) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'fleetbook_' });
    this.deviceOutcomes = new Counter({
      name: 'fleetbook_device_outcomes_total',
      help: 'Devices of finished runs by outcome: accepted, succeeded, failed, skipped, unconfirmed (product.md 5a).',
      labelNames: ['playbook', 'outcome'],
      registers,
    });
    this.lateOutcomes = new Counter({
      name: 'fleetbook_late_device_outcomes_total',
      help: 'Devices left unconfirmed by their ended run, or settled by a read of their state, whose CarrierService callback came after their step, by the outcome it gave: succeeded, failed.',
      labelNames: ['outcome'],
      registers,
    });
    this.schedulesSkipped = new Counter({
      name: 'fleetbook_schedule_fires_skipped_total',
      help: 'Schedule fires that started no run because the previous scheduled run was unfinished (no overlap), counted once across replicas.',
      labelNames: ['playbook'],
      registers,
    });
    this.callbacksReceived = new Counter({
      name: 'fleetbook_callbacks_received_total',
      help: 'Callback messages stored in the inbox and acknowledged.',
      labelNames: ['service'],
      registers,
    });
    this.callbacksDuplicated = new Counter({
      name: 'fleetbook_callbacks_duplicated_total',
      help: 'Callback messages acknowledged as duplicates (same requestId and kind), not processed again.',
      labelNames: ['service'],
      registers,
    });
    this.callbacksRejected = new Counter({
      name: 'fleetbook_callbacks_rejected_total',
      help: 'Callback messages refused, by reason.',
      labelNames: ['reason'],
      registers,
    });
    new Gauge({
      name: 'fleetbook_inbox_backlog',
      help: 'Callback events stored and not yet processed.',
      registers,
      collect() {
        this.set(sources.backlog());
      },
    });
    new Gauge({
      name: 'fleetbook_runs_running',
      help: 'Runs executing now.',
      registers,
      collect() {
        this.set(sources.running());
      },
    });
    new Gauge({
      name: 'fleetbook_session_logins_stopped',
      help: 'Whether this daemon sends no session login now (1): a login refused, until a restart, or four that may have failed, until `fleetbook logins clear USER`; /status says why.',
      registers,
      collect() {
        this.set(sources.client()?.loginStopped ? 1 : 0);
      },
    });
    new Gauge({
      name: 'fleetbook_auth_refused',
      help: "Whether the service refuses this daemon's credentials (1): the FLEETBOOK_ACCESS_TOKEN given, or the OAuth token request, until the daemon is restarted with fresh credentials; or the tokens it fetches, until one is taken. Every call fails with FB_AUTH meanwhile. /status says why.",
      registers,
      collect() {
        this.set(sources.client()?.authRefused ? 1 : 0);
      },
    });
    new Gauge({
      name: 'fleetbook_callback_registrations_failing',
      help: 'Callback listener registrations (by account and service) not in place: each is tried again, 10 s after failing, then twice as long each time up to 10 minutes; /status says why.',
      registers,
      collect() {
        this.set(sources.registrationsFailing?.() ?? 0);
      },
    });
    new Gauge({
      name: 'fleetbook_playbooks_reload_refused',
      help: 'Whether the playbook files on disk are refused (1): a reload found an error, and the previous playbooks stay in force until a reload takes the files; the next start would refuse them. /status says why.',
      registers,
      collect() {
        this.set(sources.reloadRefused?.() ? 1 : 0);
      },
    });
    this.runs = new Counter({
      name: 'fleetbook_runs_total',
      help: 'Runs ended, by playbook and status.',
      labelNames: ['playbook', 'status'],
      registers,
    });
    this.runDuration = new Histogram({
      name: 'fleetbook_run_duration_seconds',
      help: 'Wall time of runs, by playbook and status.',
      labelNames: ['playbook', 'status'],
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 1800, 7200],
      registers,
    });
    this.apiCalls = new Counter({
      name: 'fleetbook_api_calls_total',
      help: 'API answers by action and HTTP status (or network).',
      labelNames: ['action', 'status'],
      registers,
    });
    this.expressionErrors = new Counter({
      name: 'fleetbook_event_expression_errors_total',
      help: 'Callback filters (on.callback.if) and concurrency keys that failed on an event, by playbook and expression (filter, concurrency.key).',
      labelNames: ['playbook', 'expression'],
      registers,
    });
    const areaCounter = (name: string, help: string, read: (s: AreaStats) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['area'],
        registers,
        collect() {
          const client = sources.client();
          if (!client) return;
          for (const [area, budget] of Object.entries(client.areas)) this.set({ area }, read(budget.stats));
        },
      });
    areaCounter(
      'fleetbook_rate_wait_seconds_total',
      'Time API calls waited in the rate queue of each area.',
      (s) => s.waitedMs / 1000,
    );
    areaCounter('fleetbook_rate_throttled_total', 'Answers 429 (rate limited) per area.', (s) => s.throttled);
  }
}

interface AreaStats {
  waitedMs: number;
  throttled: number;
}
