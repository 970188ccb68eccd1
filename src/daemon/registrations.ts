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
  /** The services registered (or tried) so far: a reload registers those its set newly needs. */
  private readonly services = new Set<string>();
  private readonly accounts: string[];
  private readonly base: string;
  private timer: NodeJS.Timeout | undefined;
  private retrying: Promise<void> | undefined;
  private stopped = false;
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
    o.stopping?.addEventListener('abort', () => void this.stop(), { once: true });
  }

  /** Each registration, as `/status` gives it. */
  status(): Registration[] {
    return this.list;
  }

  /** How many registrations are not in place. */
  failing(): number {
    return this.list.filter((r) => !r.ok).length;
  }

  /** Registers, for every account, the services of `needed` not registered (or tried) before. */
  async add(needed: Set<string>): Promise<void> {
    const fresh = [...needed].filter((s) => !this.services.has(s));
    for (const s of fresh) this.services.add(s);
    if (!fresh.length || !this.accounts.length) return;
    const made: Registration[] = [];
    for (const accountName of this.accounts)
      for (const service of fresh) {
        if (this.stopped) return;
        const r: Registration = { accountName, service, url: `${this.base}/callbacks/${service}`, ok: false };
        await this.attempt(r);
        // Listed once tried: `/status` never shows one under way as failing.
        made.push(r);
        this.list.push(r);
      }
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

  private async attempt(r: Registration): Promise<void> {
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
      if (this.stopped) return;
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
  }

  /** A timer for the earliest attempt due, if any registration is not in place. */
  private schedule(): void {
    clearTimeout(this.timer);
    if (this.stopped || this.retrying) return;
    const due = this.list.filter((r) => !r.ok).map((r) => Date.parse(r.nextAttempt as string));
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

  private async retryDue(): Promise<void> {
    for (const r of this.list) {
      if (this.stopped) return;
      if (!r.ok && Date.parse(r.nextAttempt as string) <= Date.now()) await this.attempt(r);
    }
  }
}
