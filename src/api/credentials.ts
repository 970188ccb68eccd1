/**
 * The client's two tokens: the OAuth bearer token (fetched with the client credentials, refreshed before it
 * expires, or given as it is) and the session token (one login, renewed once when the service says it expired).
 * Each is fetched once for every request waiting on it; a refusal is kept and thrown again, never retried: five
 * failed logins lock the user. A login whose answer was lost (sent, then a network error, a 5xx) is no refusal:
 * the client sends it again, at most LOGIN_ATTEMPTS times in all. Each call that needs a session may start a new
 * login, so the logins in doubt are also counted across logins, until one succeeds: no more than LOGINS_IN_DOUBT
 * are sent. The requests themselves go through the client (`TokenRequests`), with its rate budgets and retries.
 */
import type { Clock } from '../clock.js';
import { ApiError, AuthError, ConfigError, LoginError, type FleetbookError } from '../errors.js';
import { registerSecret, type Logger } from '../log.js';

/**
 * Logins of one user the client sends in a row, across logins, while none of them succeeded: each whose answer was
 * lost (a network error once sent, a 5xx, a timeout) or that was refused may be a failed login, and five
 * consecutive failed logins lock the user (spec/public-api-facts.md, which names no time after which the count
 * starts again: it does when a login succeeds). One fewer, so that the client never sends the fifth.
 */
export const LOGINS_IN_DOUBT = 4;

/** What a login request came to, as far as the lockout goes. */
export type LoginOutcome = 'succeeded' | 'not-acted' | 'in-doubt';

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
}

/** The counters of ClientStats these requests move. */
interface TokenStats {
  logins: number;
  tokenRequests: number;
  sessionRenewals: number;
}

export class Credentials {
  private bearer?: { token: string; refreshAt: number };
  private bearerInFlight?: Promise<string>;
  private authFailure?: FleetbookError;
  private sessionToken?: string;
  private loginInFlight?: Promise<string>;
  private loginFailure?: FleetbookError;
  /** Per user, the logins sent since the last that succeeded, but those the service did not act on. */
  private readonly inDoubt = new Map<string, number>();

  constructor(
    private readonly o: CredentialOptions,
    private readonly send: TokenRequests,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly stats: TokenStats,
  ) {}

  /** Whether the bearer token is fetched here, and can be fetched again (not one given as it is). */
  get fetchesBearer(): boolean {
    return !this.o.accessToken;
  }

  // ── OAuth bearer token ────────────────────────────────────────────────────────────────────────

  async accessToken(): Promise<string> {
    if (this.o.accessToken) return this.o.accessToken;
    if (this.authFailure) throw this.authFailure;
    if (this.bearer && this.clock.now() < this.bearer.refreshAt) return this.bearer.token;
    this.bearerInFlight ??= this.fetchToken().finally(() => (this.bearerInFlight = undefined));
    return this.bearerInFlight;
  }

  /** The service refused the cached bearer token: the next request fetches another. */
  forgetBearer(): void {
    this.bearer = undefined;
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
        this.authFailure = new AuthError(
          `the OAuth token request for client ${clientId} was refused: HTTP ${e.status} ${e.apiCode}: ${e.apiMessage}${where}`,
          { cause: e },
        );
        throw this.authFailure;
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
   * counted, unless LOGINS_IN_DOUBT are already, when it is not sent but fails with a LoginError.
   */
  loginSending(username: string): void {
    const n = this.inDoubt.get(username) ?? 0;
    if (n >= LOGINS_IN_DOUBT) {
      throw new LoginError(
        `not sending another session login as ${username}: ${n} logins since the last one that succeeded lost ` +
          'their answers (a network error, a 5xx, a timeout) or were refused, and each may have failed: ' +
          'five consecutive failed logins lock the user. Check the network and the credentials, then start again.',
      );
    }
    this.inDoubt.set(username, n + 1);
  }

  /** What the login request counted by `loginSending` came to. */
  loginSettled(username: string, outcome: LoginOutcome): void {
    if (outcome === 'succeeded') this.inDoubt.delete(username);
    else if (outcome === 'not-acted')
      this.inDoubt.set(username, Math.max(0, (this.inDoubt.get(username) ?? 1) - 1));
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
            'It is not retried, because five failed logins lock the user; fix the credentials and start again.',
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
