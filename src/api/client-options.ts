/**
 * What the API client is made with (ClientOptions) and what each call takes (CallOptions); the counters it keeps
 * (ClientStats). The client itself is client.ts.
 */
import type { Dispatcher } from 'undici';
import type { Clock } from '../clock.js';
import type { LoginError } from '../errors.js';
import type { Logger } from '../log.js';
import type { AreaBudget, AreaOptions } from '../rate/area.js';
import type { BackoffOptions } from '../retry.js';
import type { Area } from './catalog.js';
import type { CredentialOptions } from './credentials.js';
import type { Timeouts } from './http.js';
import type { LoginCounts } from './login-count.js';

export type RetryOptions = BackoffOptions & { maxAttempts: number; longestRetryAfterMs: number };

export interface ClientOptions {
  /** The spec's `{base_url}`, e.g. `http://127.0.0.1:8080/api`. Every operation path is appended to it. */
  baseUrl: string;
  /** A bearer token managed elsewhere, used instead of client credentials. */
  accessToken?: string;
  /** OAuth client credentials for `{base_url}/ts/v1/oauth2/token`. */
  clientId?: string;
  clientSecret?: string;
  /** Session login credentials. */
  username?: string;
  password?: string;
  /**
   * The header that carries the session token. The spec names it `X-M2M-Token`; the real service's SDKs send
   * `VZ-M2M-Token` (docs/spec-decisions.md). @default 'X-M2M-Token'
   */
  sessionHeader?: string;
  /** The undici dispatcher; tests inject a MockAgent. @default a keep-alive Pool for the origin */
  dispatcher?: Dispatcher;
  /** Rate budgets per area. Pass the same object to several clients to share the budgets. */
  areas?: Record<Area, AreaBudget>;
  /** Budget of each area when `areas` is not given. @default 20 requests/s and 10 in flight per area */
  rates?: Partial<Record<Area, AreaOptions>>;
  /**
   * Retries of retryable errors. A 429 or 503 whose Retry-After asks for longer than `longestRetryAfterMs` is not
   * waited for: the call fails at once, and the area pauses no longer than that.
   * @default 5 attempts in all, 200 ms base, 30 s cap, longestRetryAfterMs 300000 (5 minutes)
   */
  retry?: Partial<RetryOptions>;
  timeouts?: Partial<Timeouts>;
  /** Refresh the bearer token this long before it expires, for clock skew, in ms. @default 60000 */
  tokenSkewMs?: number;
  clock?: Clock;
  /** Source of jitter. @default Math.random */
  random?: () => number;
  logger?: Logger;
  /** Told of every answer (its HTTP status) and every network failure: the daemon's metrics. */
  onResponse?: (action: string, status: number | 'network') => void;
  /** Called as a mutating request leaves, its rate slot held; throwing stops it (a lease lost, see Lease.check). */
  beforeMutation?: (action: string) => void;
  /**
   * Where the session logins that may have failed are counted: the store's, shared by every process on it (a
   * daemon, `fleetbook run`, `fleetbook call`), so that together they never lock the user. @default this process's memory
   */
  logins?: LoginCounts;
  /** Told once as the client stops sending session logins, until one is sent again: the daemon's log. */
  onLoginStop?: (e: LoginError) => void;
  /**
   * Told once as the client's credentials are refused (`authRefused`: `refused`, and `was` the refusal before it
   * if another), and once as a fetched token is taken again (undefined, `was`): the daemon's log (logAuthRefusal).
   */
  onAuthRefused?: CredentialOptions['onAuthRefused'];
}

export interface CallOptions {
  signal?: AbortSignal;
  /** Called as each request of the call leaves its rate slot to be sent: one a page, one a batch, not a retry. */
  onRequest?: () => void;
  /** An earlier call of the same request may have reached the service: a step's retry, a run resumed. */
  repeat?: boolean;
  /** Told, instead of the client's log, that a repeat found what the call removes gone (Operation.removes). */
  onGone?: (message: string, meta: Record<string, unknown>) => void;
}

/** Counters that tests and metrics read. */
export interface ClientStats {
  requests: Record<string, number>;
  logins: number;
  tokenRequests: number;
  retries: number;
  sessionRenewals: number;
}
