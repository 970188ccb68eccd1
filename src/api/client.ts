/**
 * The API client: one typed method per action of the catalog, every request validated before it is sent,
 * both tokens managed, every call through its area's rate budget, retries decided by error class and by the
 * operation's retry safety, pages streamed, location reports batched. See src/api/ARCHITECTURE.md.
 */
import { systemClock, type Clock } from '../clock.js';
import {
  ApiError,
  ConfigError,
  FleetbookError,
  InputError,
  type LoginError,
  NetworkError,
  UnknownActionError,
} from '../errors.js';
import { registerSecret, silentLogger, type Logger } from '../log.js';
import { AreaBudget, type AreaOptions } from '../rate/area.js';
import { backoffDelay } from '../retry.js';
import {
  ACTIONS,
  AREAS,
  CATALOG,
  isAction,
  pathParams,
  resolvePath,
  type ActionInput,
  type ActionName,
  type ActionOutput,
  type Area,
  type Method,
  type Operation,
} from './catalog.js';
import type { CallOptions, ClientOptions, ClientStats, RetryOptions } from './client-options.js';
import { Credentials, loginOutcome, type AuthRefusal } from './credentials.js';
import { MemoryLoginCounts, serviceKey } from './login-count.js';
import {
  apiError,
  send,
  servicePool,
  successBody,
  written,
  type Written,
  type RawResponse,
  type Timeouts,
} from './http.js';
import { MAX_REPORT_DEVICES } from './limits.js';
import { gone, mayHaveActed, mayRetry, removesOf, type Repeatable } from './repeats.js';
import { DEFAULT_SESSION_HEADER, HEADER_NAME_PATTERN } from './session-header.js';
import { collect, largestDeviceId, nextToken, pageItems, withoutRepeated } from './pages.js';
import { checkInput, warmInputChecks } from './validate.js';
import { closest } from '../util/closest.js';

type Json = Record<string, unknown>;

/** What a request needs beyond its path and body. */
interface Call extends Repeatable {
  area: Area;
  method: Method;
  mutating?: boolean;
  /** Which tokens to send: none, the bearer only (login), or both. */
  auth: 'bearer' | 'both' | 'basic';
  contentType?: string;
  /** The `Basic` credential of the token request (auth `basic`). */
  basic?: string;
  /** Attempts in all, when fewer than the client's `retry.maxAttempts` (the login's). */
  maxAttempts?: number;
  /** A login's user: each attempt is counted towards the lockout, and not sent when it could reach it. */
  loginAs?: string;
  onRequest?: (() => void) | undefined;
  repeat?: boolean | undefined;
  onGone?: CallOptions['onGone'];
}

/**
 * Attempts in all of one login whose answer never came (a network error once it was sent, a 5xx, a timeout):
 * a refusal (401 and every other 4xx) is never sent again. Fewer than the five failed logins that lock the user
 * (spec/public-api-facts.md), so that even a wrong password whose every refusal was lost cannot lock it; across
 * logins, LOGINS_IN_DOUBT bounds them (credentials.ts).
 */
export const LOGIN_ATTEMPTS = 3;

export const DEFAULT_AREA: AreaOptions = { requestsPerSecond: 20, concurrency: 10 };

/** Budgets for every area from per-area options over a default. */
export function createAreas(
  rates: Partial<Record<Area, AreaOptions>> = {},
  clock: Clock = systemClock,
  fallback: AreaOptions = DEFAULT_AREA,
): Record<Area, AreaBudget> {
  return Object.fromEntries(AREAS.map((a) => [a, new AreaBudget(a, rates[a] ?? fallback, clock)])) as Record<
    Area,
    AreaBudget
  >;
}

export class ApiClient {
  readonly stats: ClientStats = { requests: {}, logins: 0, tokenRequests: 0, retries: 0, sessionRenewals: 0 };
  readonly areas: Record<Area, AreaBudget>;
  private readonly o: ClientOptions;
  private readonly origin: string;
  private readonly basePath: string;
  private readonly dispatcher: Written;
  private readonly ownsDispatcher: boolean;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly retry: RetryOptions;
  private readonly timeouts: Timeouts;
  /** The session header's name in lower case, as undici sends header names given that way. */
  private readonly sessionHeader: string;

  private readonly credentials: Credentials;

  constructor(o: ClientOptions) {
    let url: URL;
    try {
      url = new URL(o.baseUrl);
    } catch {
      throw new ConfigError(
        `the API URL ${JSON.stringify(o.baseUrl)} is not a URL (e.g. http://127.0.0.1:8080/api)`,
      );
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new ConfigError(`the API URL must be http or https, got ${url.protocol}`);
    }
    const sessionHeader = o.sessionHeader ?? DEFAULT_SESSION_HEADER;
    if (!new RegExp(HEADER_NAME_PATTERN).test(sessionHeader))
      throw new ConfigError(`the session header ${JSON.stringify(sessionHeader)} is not an HTTP header name`);
    this.sessionHeader = sessionHeader.toLowerCase();
    this.o = o;
    this.origin = url.origin;
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.clock = o.clock ?? systemClock;
    this.log = o.logger ?? silentLogger;
    this.retry = {
      maxAttempts: 5,
      baseDelayMs: 200,
      maxDelayMs: 30_000,
      longestRetryAfterMs: 5 * 60_000,
      ...o.retry,
    };
    this.timeouts = { headersMs: 30_000, bodyMs: 30_000, ...o.timeouts };
    this.areas = o.areas ?? createAreas(o.rates, this.clock);
    this.ownsDispatcher = !o.dispatcher;
    const inFlight = Object.values(this.areas).reduce((n, a) => n + a.concurrency, 0);
    const pool = o.dispatcher ?? servicePool(this.origin, inFlight, this.timeouts);
    this.dispatcher = written(pool);
    for (const s of [o.accessToken, o.clientSecret, o.password]) registerSecret(s);
    this.credentials = new Credentials(
      o,
      {
        token: (basic) =>
          this.execute(
            {
              action: 'oauth.token',
              area: 'oauth',
              method: 'POST',
              retrySafe: true,
              auth: 'basic',
              basic,
              contentType: 'application/x-www-form-urlencoded',
            },
            '/ts/v1/oauth2/token',
            'grant_type=client_credentials',
          ),
        login: (username, password) => this.request(CATALOG['session.login'], { username, password }, {}),
      },
      this.clock,
      this.log,
      this.stats,
      {
        service: serviceKey(url),
        counts: o.logins ?? new MemoryLoginCounts(),
        onStop: o.onLoginStop,
      },
    );
  }

  /** Why the client sends no session login now, if it does not: a refusal, or the logins that may have failed. */
  get loginStopped(): LoginError | undefined {
    return this.credentials.loginStopped;
  }

  /**
   * Why the client sends no request now, if it does not: its credentials refused for good, until it restarts, or a
   * fetched token refused twice, until the back-off passes and one fetched then is taken.
   */
  get authRefused(): AuthRefusal | undefined {
    return this.credentials.authRefused;
  }

  /** Calls an action by name, validating `input` first. Paged actions return every page; reports are batched. */
  async call<A extends ActionName>(
    action: A,
    input: ActionInput<A>,
    opts: CallOptions = {},
  ): Promise<ActionOutput<A>> {
    const op: Operation = CATALOG[action];
    const prepared = this.prepare(op, input);
    return (await this.dispatch(op, prepared, opts)) as ActionOutput<A>;
  }

  /** `call` for a name and input known only at run time (the CLI, playbooks). */
  async callByName(name: string, input: unknown, opts: CallOptions = {}): Promise<unknown> {
    if (!isAction(name)) throw new UnknownActionError(name, closest(name, ACTIONS));
    const op: Operation = CATALOG[name];
    return this.dispatch(op, this.prepare(op, input), opts);
  }

  /** Validates `input` against the action's schema and applies its spelling normalisation. */
  prepare(op: Operation, input: unknown): Json {
    const problems = checkInput(op, input ?? {});
    if (problems.length) throw new InputError(op.action, problems);
    const json = (input ?? {}) as Json;
    return op.normalize ? op.normalize(json) : json;
  }

  /** Every page of a paged action, one at a time, so that a million devices never sit in memory at once. */
  async *pages(
    action: 'location.getReport' | 'location.getExclusions' | 'devices.list',
    input: unknown,
    opts: CallOptions = {},
  ) {
    const op: Operation = CATALOG[action];
    yield* this.pagesOf(op, this.prepare(op, input), opts);
  }

  /** Every item of a paged action: report entries, excluded IMEIs or device records. */
  async *items(
    action: 'location.getReport' | 'location.getExclusions' | 'devices.list',
    input: unknown,
    opts: CallOptions = {},
  ) {
    for await (const page of this.pages(action, input, opts)) yield* pageItems(page);
  }

  /**
   * Prepares the request checks of `actions` ahead of their first calls, one action per turn of the event loop,
   * while the run's first requests are on the network: the first call of each then does not wait for its
   * check to load and compile (2 to 3 ms for a device action), in the middle of the run.
   */
  warm(actions: readonly string[]): void {
    warmInputChecks(actions);
  }

  /** Closes the connection pool this client opened. */
  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  // ── dispatch ──────────────────────────────────────────────────────────────────────────────────

  private async dispatch(op: Operation, input: Json, opts: CallOptions): Promise<unknown> {
    if (op.paging) return collect(op, input, this.pagesOf(op, input, opts));
    if (op.action === 'location.createReport') return this.createReportBatches(op, input, opts);
    return this.request(op, input, opts);
  }

  private async *pagesOf(op: Operation, input: Json, opts: CallOptions): AsyncGenerator<Json> {
    let cursor: Json = { ...input };
    if (op.paging === 'startIndex') cursor.startIndex ??= 0;
    /** The `?next=` token of the last answer's `Location` header. */
    const answer: { next?: string } = {};
    const read = (res: RawResponse) => {
      answer.next = nextToken(res.headers.location);
      return successBody(op.action, res, this.clock.now());
    };
    /** `earliest` paging: the previous page's last time, and how many of its items ended at that time. */
    let seen: { at: unknown; count: number } | undefined;
    for (;;) {
      delete answer.next;
      let page = (await this.request(op, cursor, opts, read)) as Json;
      if (seen) page = withoutRepeated(page, seen);
      const items = pageItems(page);
      yield page;
      if (page.hasMoreData !== true || items.length === 0) return;
      switch (op.paging) {
        case 'startIndex':
          cursor = { ...cursor, startIndex: (cursor.startIndex as number) + items.length };
          break;
        case 'next':
          if (answer.next === undefined) return;
          cursor = { ...cursor, next: answer.next };
          break;
        case 'earliest': {
          const at = (items[items.length - 1] as Json).occurredAt;
          let count = 0;
          while (count < items.length && (items[items.length - 1 - count] as Json).occurredAt === at) count++;
          seen = { at, count };
          cursor = { ...cursor, earliest: at };
          break;
        }
        default:
          cursor = { ...cursor, largestDeviceIdSeen: largestDeviceId(items as Json[]) };
      }
    }
  }

  /** More than 10,000 devices become several requests (spec section 8), sent concurrently through the budget. */
  private async createReportBatches(op: Operation, input: Json, opts: CallOptions) {
    const devices = input.deviceList as unknown[];
    const batches: unknown[][] = [];
    for (let i = 0; i < devices.length; i += MAX_REPORT_DEVICES)
      batches.push(devices.slice(i, i + MAX_REPORT_DEVICES));
    const settled = await Promise.allSettled(
      batches.map(async (deviceList) => {
        const res = (await this.request(op, { ...input, deviceList }, opts)) as Json;
        return { ...res, devices: deviceList.length };
      }),
    );
    const reports = settled.filter((s) => s.status === 'fulfilled').map((s) => s.value);
    const failed = settled.find((s) => s.status === 'rejected');
    if (failed) {
      // Reports already created are not lost: the error carries them.
      const err = failed.reason as FleetbookError;
      if (err instanceof FleetbookError) err.partial = { reports };
      throw err;
    }
    return { reports };
  }

  /** One operation request: the path from the template, the body from the rest of the input. */
  private async request(
    op: Operation,
    input: Json,
    opts: CallOptions,
    read?: (res: RawResponse) => unknown,
  ): Promise<unknown> {
    const path = resolvePath(op, input);
    let body: string | undefined;
    if (op.method !== 'GET' && op.method !== 'DELETE') {
      const rest = { ...input };
      for (const p of pathParams(op)) delete rest[p];
      for (const q of op.query ?? []) delete rest[q];
      body = JSON.stringify(rest);
    }
    const login = op.action === 'session.login';
    const out = await this.execute(
      {
        action: op.action,
        area: op.area,
        method: op.method,
        // A login whose answer was lost is sent again: one that succeeded only left a session to idle out, and one
        // refused was answered (a 4xx, never retried). Bounded below the lockout (LOGIN_ATTEMPTS).
        retrySafe: op.retrySafe || login,
        mutating: op.mutating,
        auth: login ? 'bearer' : 'both',
        onRequest: opts.onRequest,
        removes: removesOf(op, input),
        repeat: opts.repeat,
        onGone: opts.onGone,
        ...(login ? { maxAttempts: LOGIN_ATTEMPTS, loginAs: String(input.username) } : {}),
      },
      path,
      body,
      opts.signal,
      read,
    );
    return out === null && op.whenEmpty ? op.whenEmpty() : out;
  }

  /**
   * Sends with retries. Rules, by error:
   * - the expired-session message: one new login shared by every waiting request, then one replay;
   * - the rest as repeats.ts says: sent again (mayRetry; a login at most LOGIN_ATTEMPTS times in all) or thrown,
   *   but a repeat's refusal that finds what the call removes gone (`gone`) is the call's success.
   */
  private async execute(
    c: Call,
    path: string,
    body: string | undefined,
    signal?: AbortSignal,
    /** What a 2xx answer gives: its JSON body, unless the caller reads more of it (a paging header). */
    read: (res: RawResponse) => unknown = (res) => successBody(c.action, res, this.clock.now()),
  ): Promise<unknown> {
    let attempt = 0;
    // Told once, as the first attempt leaves its rate slot: a retry or a replay is the same request.
    let onRequest = c.onRequest;
    let replayedSession = false;
    let replayedBearer = false;
    // Whether an earlier attempt of this request may have reached the service (Operation.removes).
    let repeat = c.repeat === true;
    for (;;) {
      signal?.throwIfAborted();
      const { headers, session } = await this.headers(c);
      // Set once this attempt of a login is counted towards the lockout, and so sent.
      let login: { as: string; id: string } | undefined;
      try {
        this.stats.requests[c.action] = (this.stats.requests[c.action] ?? 0) + 1;
        const began = this.clock.now();
        const res = await this.areas[c.area].run(async () => {
          // Checked now, and again as the request is written: a process stopped in between must not send it.
          const check =
            c.mutating && this.o.beforeMutation ? () => this.o.beforeMutation?.(c.action) : undefined;
          check?.();
          if (c.loginAs !== undefined)
            login = { as: c.loginAs, id: await this.credentials.loginSending(c.loginAs) };
          onRequest?.();
          onRequest = undefined;
          return send(
            this.dispatcher,
            this.origin,
            {
              action: c.action,
              method: c.method,
              path: this.basePath + path,
              headers,
              ...(body !== undefined ? { body } : {}),
            },
            this.timeouts,
            signal,
            check,
          );
        }, signal);
        this.log.debug('api call', {
          action: c.action,
          method: c.method,
          path,
          status: res.status,
          ms: this.clock.now() - began,
        });
        this.o.onResponse?.(c.action, res.status);
        const ok = res.status >= 200 && res.status < 300;
        if (ok && login) await this.credentials.loginSettled(login.as, login.id, 'succeeded');
        // A fetched token refused before, taken now: the refusal clears.
        if (ok && c.auth !== 'basic' && this.credentials.authRefused)
          this.credentials.bearerTaken(headers.authorization);
        if (ok) return read(res);
        throw apiError(c.action, res, this.clock.now());
      } catch (e) {
        if (e instanceof NetworkError) this.o.onResponse?.(c.action, 'network');
        if (login)
          await this.credentials.loginSettled(login.as, login.id, loginOutcome(e), (e as Error).message);
        const removed = gone(c, e, repeat);
        if (removed !== undefined) {
          const meta = { action: c.action, error: (e as ApiError).apiMessage };
          (c.onGone ?? ((m, x) => this.log.info(m, x)))(removed, meta);
          return c.removes?.answer();
        }
        repeat ||= mayHaveActed(e);
        if (
          e instanceof ApiError &&
          e.retryClass === 'session' &&
          c.auth === 'both' &&
          session !== undefined &&
          !replayedSession
        ) {
          replayedSession = true;
          await this.credentials.renewSession(session);
          continue;
        }
        // The bearer token refused: fetched, it is fetched again once and the request replayed (a login too, when
        // the challenge says so); given, the call fails saying so. Not the token request itself (`basic`).
        const sent = headers.authorization?.replace(/^Bearer /, '');
        const bearer =
          c.auth === 'basic'
            ? undefined
            : this.credentials.bearerRefusal(e, sent, c.auth === 'both', replayedBearer);
        if (bearer === 'replay') {
          replayedBearer = true;
          continue;
        }
        if (bearer) throw bearer;
        // A Retry-After of hours (a maintenance window, a quota spent for the day) would hold the call, and
        // every request of its area behind the pause, as long: the call fails at once instead, with its error.
        const retryAfter = e instanceof ApiError ? (e.retryAfterMs ?? 0) : 0;
        const tooLong = retryAfter > this.retry.longestRetryAfterMs;
        if (e instanceof ApiError && e.status === 429)
          this.areas[c.area].throttled(tooLong ? this.retry.longestRetryAfterMs : e.retryAfterMs);
        attempt++;
        if (!mayRetry(c, e) || attempt >= Math.min(this.retry.maxAttempts, c.maxAttempts ?? Infinity))
          throw e;
        if (tooLong) {
          this.log.warn('not retrying API call: the service asks to wait longer than fleetbook waits', {
            action: c.action,
            retryAfterMs: retryAfter,
            longestRetryAfterMs: this.retry.longestRetryAfterMs,
          });
          throw e;
        }
        const delay = Math.max(retryAfter, backoffDelay(attempt, this.retry, this.o.random));
        this.stats.retries++;
        this.log.warn('retrying API call', {
          action: c.action,
          attempt,
          delayMs: delay,
          error: (e as Error).message,
        });
        await this.clock.sleep(delay, signal);
      }
    }
  }

  private async headers(c: Call): Promise<{ headers: Record<string, string>; session?: string }> {
    const headers: Record<string, string> = {
      accept: 'application/json',
      'content-type': c.contentType ?? 'application/json',
    };
    if (c.auth === 'basic') {
      if (c.basic) headers.authorization = `Basic ${c.basic}`;
      return { headers };
    }
    headers.authorization = `Bearer ${await this.credentials.accessToken()}`;
    if (c.auth === 'bearer') return { headers };
    const session = await this.credentials.session();
    headers[this.sessionHeader] = session;
    return { headers, session };
  }
}

// ── typed methods: client.devices.suspend(input) ────────────────────────────────────────────────
type GroupOf<A> = A extends `${infer G}.${string}` ? G : never;
type VerbOf<A, G extends string> = A extends `${G}.${infer V}` ? V : never;
type ActionMethod<A extends ActionName> = (
  input: ActionInput<A>,
  opts?: CallOptions,
) => Promise<ActionOutput<A>>;
export type ActionMethods = {
  [G in GroupOf<ActionName>]: {
    [A in Extract<ActionName, `${G}.${string}`> as VerbOf<A, G>]: ActionMethod<A>;
  };
};

export type Client = ApiClient & ActionMethods;

/** A client with a typed method per action: `client.location.createReport({...})`. */
export function createClient(o: ClientOptions): Client {
  const client = new ApiClient(o);
  const groups: Record<string, Record<string, unknown>> = {};
  for (const action of ACTIONS) {
    const [group, verb] = action.split('.') as [string, string];
    if (group in client) throw new Error(`action group \`${group}\` collides with a client member`);
    (groups[group] ??= {})[verb] = (input: unknown, opts?: CallOptions) =>
      client.callByName(action, input, opts);
  }
  return Object.assign(client, groups) as unknown as Client;
}
