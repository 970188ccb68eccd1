/**
 * The client's two tokens: the OAuth bearer token (fetched with the client credentials, refreshed before it
 * expires, or given as it is) and the session token (one login, renewed once when the service says it expired).
 * Each is fetched once for every request waiting on it; a refusal is kept and thrown again, never retried: five
 * failed logins lock the user. A login whose answer was lost (sent, then a network error, a 5xx) is no refusal:
 * the client sends it again, at most LOGIN_ATTEMPTS times in all. Each call that needs a session may start a new
 * login, so the logins in doubt are also counted across logins, until one succeeds: no more than LOGINS_IN_DOUBT
 * are sent. A login refused for its bearer token (the answer's challenge says so) never reached the user's password:
 * it is not counted, and the token is fetched again once, or, given as it is, refused for good (bearerRefusal). A
 * fetched token refused, and the one fetched again refused too, is kept refused for a back-off
 * (FETCHED_TOKEN_BACKOFF_MS), until a token fetched after it is taken. The requests themselves go through the client
 * (`TokenRequests`), with its rate budgets and retries.
 */
import { randomUUID } from 'node:crypto';
import { isoTime, type Clock } from '../clock.js';
import {
  ApiError,
  AuthError,
  ConfigError,
  INVALID_ACCESS_MESSAGE,
  LoginError,
  NetworkError,
  type FleetbookError,
} from '../errors.js';
import { registerSecret, type Logger } from '../log.js';
import type { CountedLogin, LoginCounts, LoginSettlement, LoginUser } from './login-count.js';

/**
 * How long every call fails at once, sending nothing, once a fetched bearer token was refused and the one fetched
 * again was refused too: then the next call fetches another. Each wait is twice the one before while the tokens
 * fetched after it are refused, up to FETCHED_TOKEN_BACKOFF_MAX_MS; a token taken starts again from this one.
 */
export const FETCHED_TOKEN_BACKOFF_MS = 60_000;
/** The longest wait of FETCHED_TOKEN_BACKOFF_MS doubled. */
export const FETCHED_TOKEN_BACKOFF_MAX_MS = 15 * 60_000;

/**
 * Logins of one user sent in a row, across logins and across the processes on the store, while none of them
 * succeeded: each whose answer was lost (a network error once sent, a 5xx, a timeout) or that was refused may be a
 * failed login, and five consecutive failed logins lock the user (spec/public-api-facts.md, which names no time
 * after which the count starts again: it does when a login succeeds). One fewer, so that none sends the fifth.
 */
export const LOGINS_IN_DOUBT = 4;

/** How the client sends the two token requests: each gives the answer's JSON body. */
export interface TokenRequests {
  /** `POST /ts/v1/oauth2/token` with the `Basic` credential `basic`. */
  token(basic: string): Promise<unknown>;
  /** `POST /m2m/v1/session/login`. */
  login(username: string, password: string): Promise<unknown>;
}

export interface CredentialOptions {
  accessToken?: string | undefined;
  clientId?: string | undefined;
  clientSecret?: string | undefined;
  username?: string | undefined;
  password?: string | undefined;
  /** Refresh the bearer token this long before it expires, in ms. @default 60000 */
  tokenSkewMs?: number | undefined;
  /**
   * Told of each change of `authRefused`: `refused` as it is refused (`was` the refusal before, if any), undefined
   * (and `was`) as it clears.
   */
  onAuthRefused?: ((refused: AuthRefusal | undefined, was: AuthRefusal | undefined) => void) | undefined;
}

/** The counters of ClientStats these requests move. */
interface TokenStats {
  logins: number;
  tokenRequests: number;
  sessionRenewals: number;
}

/**
 * The client's credentials refused: every request fails with `error`, sending nothing, until the process restarts
 * (a token given, the token request) or, for a `fetched token`, until `nextAttempt`.
 */
export interface AuthRefusal {
  /**
   * What was refused: the `access token` given (FLEETBOOK_ACCESS_TOKEN), the token request of the `client
   * credentials` (FLEETBOOK_CLIENT_ID and FLEETBOOK_CLIENT_SECRET), or a `fetched token` and the one fetched again.
   */
  credential: 'access token' | 'client credentials' | 'fetched token';
  /** Since when, as an ISO time: the first refusal, while the tokens fetched after it are refused too. */
  since: string;
  /** The AuthError's message: what was refused, and what to do. */
  error: string;
  /** A fetched token's only: when the next call fetches another, as an ISO time. */
  nextAttempt?: string;
}

/**
 * The lines a process's log (the daemon's) has of its credentials (`onAuthRefused`): one at `error` as they are
 * refused, in `/status`'s words (`authRefused`, its `credential` as `what`: a field named so is masked as a
 * secret), and one at `info` as a fetched token is taken again. None for each call refused after.
 */
export function logAuthRefusal(log: Logger): NonNullable<CredentialOptions['onAuthRefused']> {
  return (refused, was) => {
    if (refused) {
      const { credential, ...rest } = refused;
      log.error('credentials refused', { what: credential, ...rest });
    } else if (was) log.info('credentials taken again', { what: was.credential, refusedSince: was.since });
  };
}

export class Credentials {
  private bearer?: { token: string; refreshAt: number };
  private bearerInFlight?: Promise<string>;
  private authFailure?: AuthError;
  private authRefusal?: AuthRefusal;
  /** A fetched token's refusal: when `authFailure` stops being thrown (ms), and the wait that ends then. */
  private retryAt?: number;
  private backoffMs = 0;
  private sessionToken?: string;
  private loginInFlight?: Promise<string>;
  private loginFailure?: FleetbookError;
  /** The last login refused here for the count (`LOGINS_IN_DOUBT`), until one is sent again. */
  private stopped?: LoginError;

  constructor(
    private readonly o: CredentialOptions,
    private readonly send: TokenRequests,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly stats: TokenStats,
    /** The service's base URL, and where its logins are counted. */
    private readonly logins: {
      service: string;
      counts: LoginCounts;
      onStop?: ((e: LoginError) => void) | undefined;
    },
  ) {}

  /** Why this client sends no session login now: a refusal (until it restarts), or the count of failed ones. */
  get loginStopped(): LoginError | undefined {
    return this.loginFailure ?? this.stopped;
  }

  /**
   * Why this client sends no request now, if it does not: its credentials refused for good (a token given as it
   * is, or the token request), until it restarts with others; or a fetched token and the one fetched again, until
   * one fetched after is taken.
   */
  get authRefused(): AuthRefusal | undefined {
    return this.authRefusal;
  }

  /**
   * Keeps `e`, thrown for every request from `now` (ms) on, or until `retryAt`; `credential` is what was refused.
   * Refused again as it was, it is so since the first time, and nobody is told again.
   */
  private refuseFor(
    credential: AuthRefusal['credential'],
    e: AuthError,
    now = this.clock.now(),
    retryAt?: number,
  ): AuthError {
    const was = this.authRefusal;
    const again = was?.credential === credential;
    this.authFailure = e;
    this.retryAt = retryAt;
    this.authRefusal = {
      credential,
      since: again ? was.since : isoTime(now),
      error: e.message,
      ...(retryAt !== undefined ? { nextAttempt: isoTime(retryAt) } : {}),
    };
    if (!again) this.o.onAuthRefused?.(this.authRefusal, was);
    return e;
  }

  /**
   * A request sent with `authorization` was answered 2xx: a fetched token refused before (`fetched token`) is
   * taken, when it is the one fetched since (those refused are forgotten), and the refusal clears.
   */
  bearerTaken(authorization: string | undefined): void {
    const was = this.authRefusal;
    if (was?.credential !== 'fetched token' || !this.bearer) return;
    if (authorization !== `Bearer ${this.bearer.token}`) return;
    this.authRefusal = undefined;
    this.authFailure = undefined;
    this.retryAt = undefined;
    this.backoffMs = 0;
    this.o.onAuthRefused?.(undefined, was);
  }

  /** Whether the bearer token is fetched here, and can be fetched again (not one given as it is). */
  get fetchesBearer(): boolean {
    return !this.o.accessToken;
  }

  // ── OAuth bearer token ────────────────────────────────────────────────────────────────────────

  async accessToken(): Promise<string> {
    if (this.authFailure) {
      if (this.retryAt === undefined || this.clock.now() < this.retryAt) throw this.authFailure;
      // A fetched token's back-off is over: this call fetches another. The refusal stands until one is taken.
      this.authFailure = undefined;
      this.retryAt = undefined;
    }
    if (this.o.accessToken) return this.o.accessToken;
    if (this.bearer && this.clock.now() < this.bearer.refreshAt) return this.bearer.token;
    this.bearerInFlight ??= this.fetchToken().finally(() => (this.bearerInFlight = undefined));
    return this.bearerInFlight;
  }

  /**
   * The service refused the bearer token `sent`: the next request fetches another, unless the one cached is
   * another already (fetched again for a request answered before this one).
   */
  forgetBearer(sent?: string): void {
    if (sent === undefined || this.bearer?.token === sent) this.bearer = undefined;
  }

  /**
   * What a request sent with the bearer token `sent` and answered `e` does about it: `replay` once with a token
   * fetched again, throw the AuthError given, or neither (undefined). The token's refusal is told by its challenge
   * (ApiError.bearerRefused, http.ts refusesBearer).
   * A request with a session (`withSession`) also takes any other 401 but account access for its token's (revoked,
   * or forgotten by the service): fetching another costs no login. A login never does: its 401 may be the
   * password's, and a login sent again may count another failure of the user. A token given as it is cannot be
   * fetched again: its refusal is kept and thrown again, and no login is sent with it. A fetched one refused, and
   * the one fetched again too, is kept so for a back-off (FETCHED_TOKEN_BACKOFF_MS, doubled each time again).
   */
  bearerRefusal(
    e: unknown,
    sent: string | undefined,
    withSession: boolean,
    replayed: boolean,
  ): 'replay' | AuthError | undefined {
    if (!(e instanceof ApiError) || e.status !== 401) return undefined;
    const accessPolicy = e.apiCode === 'INVALID_ACCESS' || e.apiMessage === INVALID_ACCESS_MESSAGE;
    if (!e.bearerRefused && !(withSession && !accessPolicy)) return undefined;
    const answer = `HTTP 401 ${e.apiCode}: ${e.apiMessage}`;
    if (this.fetchesBearer) {
      if (replayed && !e.bearerRefused) return undefined;
      this.forgetBearer(sent);
      if (!replayed) return 'replay';
      // Kept already by another call, in its back-off: this one does not lengthen it.
      if (this.authFailure) return this.authFailure;
      this.backoffMs = Math.min(
        this.backoffMs ? this.backoffMs * 2 : FETCHED_TOKEN_BACKOFF_MS,
        FETCHED_TOKEN_BACKOFF_MAX_MS,
      );
      const now = this.clock.now();
      const retryAt = now + this.backoffMs;
      return this.refuseFor(
        'fetched token',
        new AuthError(
          `the bearer token fetched for client ${this.o.clientId ?? ''} was refused, and so was the one fetched again: ${answer}. ` +
            "It never reached the user's password: no failed login of the user was counted for it. Every call " +
            `fails at once until ${isoTime(retryAt)}, when fleetbook fetches another (the wait doubles, up to ` +
            `${FETCHED_TOKEN_BACKOFF_MAX_MS / 60_000} minutes, while those are refused too). Check that the OAuth ` +
            'client (FLEETBOOK_CLIENT_ID) may use this API.',
          { cause: e },
        ),
        now,
        retryAt,
      );
    }
    if (!e.bearerRefused) return undefined;
    if (this.authFailure) return this.authFailure;
    return this.refuseFor(
      'access token',
      new AuthError(
        `the access token (FLEETBOOK_ACCESS_TOKEN) was refused: ${answer}. It is given as it is, so fleetbook cannot ` +
          'fetch another: set a fresh FLEETBOOK_ACCESS_TOKEN, or unset it and set FLEETBOOK_CLIENT_ID and ' +
          'FLEETBOOK_CLIENT_SECRET to have fleetbook fetch and refresh the token, then start again. ' +
          "It never reached the user's password: no failed login of the user was counted for it.",
        { cause: e },
      ),
    );
  }

  private async fetchToken(): Promise<string> {
    const { clientId, clientSecret } = this.o;
    if (!clientId || !clientSecret) {
      throw new ConfigError(
        'no bearer token: set FLEETBOOK_ACCESS_TOKEN, or FLEETBOOK_CLIENT_ID and FLEETBOOK_CLIENT_SECRET',
      );
    }
    this.stats.tokenRequests++;
    const basic = Buffer.from(`${clientId}:${clientSecret}`).toString('base64');
    registerSecret(basic);
    let res: unknown;
    try {
      res = await this.send.token(basic);
    } catch (e) {
      if (e instanceof ApiError && e.retryClass === 'permanent') {
        // No token endpoint there: the URL is not the service's {base_url} (its `/api` left out, most often),
        // which new credentials would not mend.
        const where =
          e.status === 404 || e.status === 405
            ? ". No OAuth token endpoint is at {base_url}/ts/v1/oauth2/token: is the API URL (FLEETBOOK_API_URL) the service's {base_url}, e.g. https://<host>/api?"
            : '';
        throw this.refuseFor(
          'client credentials',
          new AuthError(
            `the OAuth token request for client ${clientId} was refused: HTTP ${e.status} ${e.apiCode}: ${e.apiMessage}${where}`,
            { cause: e },
          ),
        );
      }
      throw e;
    }
    const r = (res ?? {}) as { access_token?: unknown; expires_in?: unknown };
    if (typeof r.access_token !== 'string' || r.access_token === '')
      throw new AuthError('the OAuth token response has no access_token');
    registerSecret(r.access_token);
    // A lifetime that is not a positive number (`"3600s"`, null) is taken as the hour the service's tokens last:
    // read as NaN, it made every request fetch another token.
    const ttl = Number(r.expires_in ?? 3600);
    const ttlMs = (Number.isFinite(ttl) && ttl > 0 ? ttl : 3600) * 1000;
    const skew = Math.min(this.o.tokenSkewMs ?? 60_000, ttlMs / 2);
    this.bearer = { token: r.access_token, refreshAt: this.clock.now() + ttlMs - skew };
    return r.access_token;
  }

  // ── session token ─────────────────────────────────────────────────────────────────────────────

  async session(): Promise<string> {
    if (this.loginFailure) throw this.loginFailure;
    if (this.sessionToken) return this.sessionToken;
    this.loginInFlight ??= this.login().finally(() => (this.loginInFlight = undefined));
    return this.loginInFlight;
  }

  /** A request met the expired-session error with `stale`: log in again once, whoever asks. */
  async renewSession(stale: string): Promise<string> {
    if (this.sessionToken === stale) {
      this.sessionToken = undefined;
      this.stats.sessionRenewals++;
      this.log.info('session expired; logging in again', { username: this.o.username });
    }
    return this.session();
  }

  /**
   * A login request as `username` is about to be sent (every attempt, and a `session.login` called by name): it is
   * counted, unless LOGINS_IN_DOUBT are already (by any process on the store), when it is not sent but fails with
   * a LoginError saying why and how to go on. Resolves with the id its outcome is settled by.
   */
  async loginSending(username: string): Promise<string> {
    const user: LoginUser = { service: this.logins.service, username };
    const id = randomUUID();
    const counted = await this.logins.counts.claim(user, id, this.clock.now(), LOGINS_IN_DOUBT);
    if (!counted) {
      this.stopped = undefined;
      return id;
    }
    const e = new LoginError(refusedHere(user, counted, this.logins.counts.shared));
    // Said once as it stops, not at every call refused after.
    if (!this.stopped) this.logins.onStop?.(e);
    this.stopped = e;
    throw e;
  }

  /** What the login request counted by `loginSending` (`id`) came to, and with what it failed. */
  async loginSettled(username: string, id: string, outcome: LoginSettlement, error?: string): Promise<void> {
    const user: LoginUser = { service: this.logins.service, username };
    // Unsettled, the login stays counted as one that may have failed: never fewer than the service counts.
    await this.logins.counts.settle(user, id, outcome, this.clock.now(), error).catch((e: unknown) =>
      this.log.warn('counting a session login failed; it stays counted as one that may have failed', {
        username,
        error: (e as Error).message,
      }),
    );
  }

  private async login(): Promise<string> {
    const { username, password } = this.o;
    if (!username || !password)
      throw new ConfigError('no session credentials: set FLEETBOOK_USERNAME and FLEETBOOK_PASSWORD');
    this.stats.logins++;
    let res: unknown;
    try {
      res = await this.send.login(username, password);
    } catch (e) {
      // A refused login is never tried again: five consecutive failures lock the user.
      if (e instanceof ApiError && e.retryClass === 'permanent') {
        this.loginFailure = new LoginError(
          `session login as ${username} was refused: HTTP ${e.status} ${e.apiCode}: ${e.apiMessage}. ` +
            'It is not retried, because five failed logins lock the user; fix the credentials and start again.' +
            (this.logins.counts.shared
              ? ' It counts towards those five for every process on the store: `fleetbook logins` shows the count.'
              : ''),
          { cause: e },
        );
        throw this.loginFailure;
      }
      throw e;
    }
    const token = (res as { sessionToken?: unknown } | null)?.sessionToken;
    if (typeof token !== 'string' || token === '')
      throw new LoginError('the session login response has no sessionToken');
    registerSecret(token);
    this.sessionToken = token;
    return token;
  }
}

/** Why a login as `user` is not sent: the `counted` logins that may have failed, and how to go on. */
function refusedHere(user: LoginUser, counted: CountedLogin[], shared: boolean): string {
  const last = counted[counted.length - 1];
  const lastText = last
    ? ` (the last sent ${new Date(last.sentAt).toISOString()}, ${last.state === 'sending' ? 'its answer not yet come' : last.state === 'refused' ? `refused: ${last.error ?? ''}` : `its answer lost: ${last.error ?? ''}`})`
    : '';
  const who = shared ? 'by the processes on this store' : 'by this process';
  const goOn = shared
    ? `Fix the password (FLEETBOOK_PASSWORD) or the network, check that it is right (a login elsewhere that succeeds also starts the service's count again), then clear the count: fleetbook logins clear ${user.username}`
    : 'Check the network and the credentials, then start again.';
  return (
    `not sending another session login as ${user.username}: ${counted.length} logins since the last one that succeeded ` +
    `were refused or lost their answers (a network error, a 5xx, a timeout)${lastText}, counted ${who} for ${user.service}, ` +
    `and each may have failed: five consecutive failed logins lock the user. ${goOn}`
  );
}

/**
 * What a login that failed with `e` came to: 429, 503 and a 401 for its bearer token say the service did not act
 * on the user's credentials, as an unsent request; any other 4xx is a refusal (a 401 without the bearer's challenge
 * too: it may be a wrong password, which the service counts); anything else (a network error once sent, a 5xx, a
 * timeout) lost its answer.
 */
export function loginOutcome(e: unknown): LoginSettlement {
  if (e instanceof NetworkError && !e.sent) return 'not-acted';
  // Refused for its bearer token (its challenge says so): the user's password was never checked.
  if (e instanceof ApiError && e.bearerRefused) return 'not-acted';
  if (e instanceof ApiError && (e.status === 429 || e.status === 503)) return 'not-acted';
  if (e instanceof ApiError && e.retryClass === 'permanent') return 'refused';
  return 'lost';
}
