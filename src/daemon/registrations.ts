/**
 * The daemon's callback listeners, registered with the service for each account and each service its playbooks
 * need (spec 2.10, 2.12). A registration that fails (the service unreachable, an answer lost, a refusal) is tried
 * again in the background, `RETRY_FIRST_MS` after, then twice as long each time up to `RETRY_MAX_MS`, until it is
 * in place: a daemon started while the service was away gets its callbacks once it is back, without a restart.
 * `/status` lists each registration, a failing one with its error, its attempts and its next attempt; the gauge
 * `fleetbook_callback_registrations_failing` counts those not in place.
 */
import type { ApiClient } from '../api/client.js';
import type { Config } from '../config.js';
import type { Target } from '../connect.js';
import type { Logger } from '../log.js';
import { backoffDelay } from '../retry.js';
import type { ListenerCredentials } from './callbacks.js';

/** How long after a failed registration it is tried again the first time; then twice as long each time. */
export const RETRY_FIRST_MS = 10_000;
/** The longest wait between two attempts at one registration. */
export const RETRY_MAX_MS = 10 * 60_000;
const RETRY_BACKOFF = { baseDelayMs: RETRY_FIRST_MS, maxDelayMs: RETRY_MAX_MS, jitter: 'none' } as const;

export interface Registration {
  accountName: string;
  service: string;
  url: string;
  ok: boolean;
  /** While not in place: why the last attempt failed, how many were made, and when the next one is. */
  error?: string;
  attempts?: number;
  nextAttempt?: string;
}

/** How far the registrations under way have got (`/readyz` while the daemon starts). */
export interface Progress {
  /** In place. */
  made: number;
  /** Failed, and tried again later (`/status` says why and when). */
  failed: number;
  /** In all. */
  of: number;
}

interface Options {
  client: ApiClient;
  target: Target;
  config: Config;
  /** The daemon's own address: where the embedded emulator posts, and the service when no callback URL is set. */
  url: string;
  creds: ListenerCredentials;
  log: Logger;
  /** The daemon stops before its start is over: no more attempts, and the one under way is given up. */
  stopping?: AbortSignal;
  /** A registration now in place (at its first attempt or a later one). */
  onRegistered: (r: Registration) => void;
}

export class Registrations {
  private readonly list: Registration[] = [];
  /** Those of `list` whose first attempt has not ended. */
  private readonly underWay = new Set<Registration>();
  private batch: Progress = { made: 0, failed: 0, of: 0 };
  /** The services registered (or tried) so far: a reload registers those its set newly needs. */
  private readonly services = new Set<string>();
  private readonly accounts: string[];
  private readonly base: string;
  private timer: NodeJS.Timeout | undefined;
  private retrying: Promise<void> | undefined;
  private stopped = false;
  /** Said once, as the first registrations are made: why the address registered cannot be reached. */
  private unreachable: string | undefined;
  /** Aborts an attempt under way when the daemon stops: a service that never answers does not hold the stop. */
  private readonly abort = new AbortController();

  constructor(private readonly o: Options) {
    const { target, config, url, log } = o;
    // The embedded emulator's accounts when none are named; named ones are registered, there as with the service.
    this.accounts = config.callbackAccounts ?? target.emulator?.accountNames() ?? [];
    // The embedded emulator posts to this process: FLEETBOOK_CALLBACK_URL is the service's way to reach it.
    if (target.emulator && config.callbackUrl)
      log.warn('FLEETBOOK_CALLBACK_URL is not used with the embedded emulator, which posts to this daemon', {
        callbackUrl: config.callbackUrl,
        url,
      });
    this.base = (target.emulator ? url : (config.callbackUrl ?? url)).replace(/\/$/, '');
    this.unreachable = unreachableReason(
      url,
      target.options.baseUrl,
      Boolean(target.emulator || config.callbackUrl),
    );
    o.stopping?.addEventListener('abort', () => void this.stop(), { once: true });
  }

  /** Each registration tried at least once, as `/status` gives it: one under way is not yet failing. */
  status(): Registration[] {
    return this.list.filter((r) => !this.underWay.has(r));
  }

  /** How many registrations are not in place. */
  failing(): number {
    return this.status().filter((r) => !r.ok).length;
  }

  /** The registrations of the `add` under way: made, failed (to be tried again) and in all. */
  progress(): Progress {
    return { ...this.batch };
  }

  /**
   * Registers, for every account, the services of `needed` not registered (or tried) before. All at once: the
   * client's queue of the API area bounds how many are in flight and how fast they start (its slots and its rate
   * budget, shared with the other processes on the store): a start takes one round trip per slot's worth of
   * registrations, as the budget allows, not one per account and service.
   */
  async add(needed: Set<string>): Promise<void> {
    const fresh = [...needed].filter((s) => !this.services.has(s));
    for (const s of fresh) this.services.add(s);
    if (!fresh.length || this.stopped) return;
    // A service (not the embedded emulator) and no account named: nothing to register for. Information, not a
    // warning: a listener registered by hand is a setup of its own; but never silent.
    if (!this.accounts.length) {
      this.o.log.info(
        'no callback listener is registered: FLEETBOOK_CALLBACK_ACCOUNTS names no account; the playbooks take callbacks of these services, which arrive only if the listener is registered by hand',
        { services: fresh },
      );
      return;
    }
    if (this.unreachable) {
      this.o.log.warn(this.unreachable, { url: this.base });
      this.unreachable = undefined;
    }
    const made = this.accounts.flatMap((accountName) =>
      fresh.map((service): Registration => ({
        accountName,
        service,
        url: `${this.base}/callbacks/${service}`,
        ok: false,
      })),
    );
    // Listed in order, shown once tried: `/status` never shows one under way as failing.
    for (const r of made) {
      this.list.push(r);
      this.underWay.add(r);
    }
    this.batch.of += made.length;
    await Promise.all(
      made.map(async (r) => {
        if (!(await this.attempt(r))) return;
        this.underWay.delete(r);
        if (r.ok) this.batch.made++;
        else this.batch.failed++;
      }),
    );
    if (this.stopped) return;
    if (!this.underWay.size) this.batch = { made: 0, failed: 0, of: 0 };
    this.o.log.info('callback listener registered', {
      accounts: this.accounts.length,
      services: fresh,
      failed: made.filter((r) => !r.ok).length,
    });
    this.schedule();
  }

  /** No more attempts; resolves once the one under way has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.abort.abort();
    await this.retrying;
  }

  /** One attempt at `r`: false when it was given up, the daemon stopping. */
  private async attempt(r: Registration): Promise<boolean> {
    const { client, creds, log } = this.o;
    const { accountName, service, url } = r;
    const opts = { signal: this.abort.signal };
    try {
      if (service === 'Location')
        await client.callByName('locationCallbacks.register', { accountName, name: 'Location', url }, opts);
      else
        await client.callByName(
          'callbacks.register',
          { accountName, name: service, url, username: creds.username, password: creds.password },
          opts,
        );
      const again = r.attempts !== undefined;
      r.ok = true;
      delete r.error;
      delete r.attempts;
      delete r.nextAttempt;
      if (again) log.info('callback listener registered after failing', { accountName, service });
      this.o.onRegistered(r);
    } catch (e) {
      if (this.stopped) return false;
      const attempts = (r.attempts ?? 0) + 1;
      const waitMs = backoffDelay(attempts, RETRY_BACKOFF);
      r.error = (e as Error).message;
      r.attempts = attempts;
      r.nextAttempt = new Date(Date.now() + waitMs).toISOString();
      log.error('callback registration failed; trying again later', {
        accountName,
        service,
        error: r.error,
        attempts,
        nextAttempt: r.nextAttempt,
      });
    }
    return true;
  }

  /** A timer for the earliest attempt due, if any registration is not in place. */
  private schedule(): void {
    clearTimeout(this.timer);
    if (this.stopped || this.retrying) return;
    const due = this.status()
      .filter((r) => !r.ok)
      .map((r) => Date.parse(r.nextAttempt as string));
    if (!due.length) return;
    this.timer = setTimeout(
      () => {
        this.retrying = this.retryDue().finally(() => {
          this.retrying = undefined;
          this.schedule();
        });
      },
      Math.max(0, Math.min(...due) - Date.now()),
    );
    this.timer.unref();
  }

  /** The registrations due, at once, as `add` makes them. */
  private async retryDue(): Promise<void> {
    const due = this.status().filter((r) => !r.ok && Date.parse(r.nextAttempt as string) <= Date.now());
    await Promise.all(due.map((r) => (this.stopped ? undefined : this.attempt(r))));
  }
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

/**
 * Why the daemon's own listen address `url`, registered when FLEETBOOK_CALLBACK_URL is unset (`addressGiven`
 * false), cannot be reached by the service at `serviceUrl`; undefined when it can, as far as the two addresses
 * tell. A wildcard address (0.0.0.0, ::) is one to listen on, not one to be reached at; a loopback one reaches
 * only a service on the same machine (a standalone emulator), which a loopback service address says.
 */
export function unreachableReason(
  url: string,
  serviceUrl: string,
  addressGiven: boolean,
): string | undefined {
  if (addressGiven) return undefined;
  const host = new URL(url).hostname;
  const fix =
    "set FLEETBOOK_CALLBACK_URL to the address the service reaches the daemon at (a load balancer's, an ingress's), or its callbacks never arrive";
  if (host === '0.0.0.0' || host === '[::]')
    return `FLEETBOOK_CALLBACK_URL is not set and the daemon listens on ${host}, which a service on another machine cannot reach: ${fix}`;
  const service = new URL(serviceUrl).hostname;
  if (LOOPBACK.test(host) && !LOOPBACK.test(service))
    return `FLEETBOOK_CALLBACK_URL is not set and the daemon listens on ${host}, a loopback address, which the service at ${service} cannot reach unless it runs on this machine: ${fix}`;
  return undefined;
}
