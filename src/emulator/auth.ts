/**
 * Both tokens of spec section 5 and public-api-facts.md:
 * - the OAuth bearer token (client credentials, one hour, the same token when asked again within the hour);
 * - the session token (login with username and password, idle expiry on the simulated clock, five
 *   consecutive failed logins lock the user).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { DEFAULT_SESSION_HEADER, VENDOR_SESSION_HEADER } from '../api/session-header.js';
import { E, Failure } from './errors.js';
import type { Core, EmulatorState } from './state.js';
import type { OAuthClient, UserInfo } from './seed-tables.js';

export const TOKEN_LIFETIME_MS = 3_600_000;
export const MAX_FAILED_LOGINS = 5;

interface IssuedToken {
  token: string;
  clientId: string;
  scope: string;
  issuedAt: number;
}

/**
 * Bearer tokens, on the wall clock: a client caches its token by its own clock and treats a 401 as
 * permanent, so tokens that expired when the simulated clock jumps a day would break every client.
 */
export class TokenStore {
  private readonly byToken = new Map<string, IssuedToken>();
  private readonly byClient = new Map<string, IssuedToken>();
  private readonly wall: () => number;

  constructor(wall: () => number) {
    this.wall = wall;
  }

  /** The client's current token, or a new one when it has none or it is past its hour. */
  issue(client: OAuthClient, scope: string): { token: IssuedToken; expiresIn: number } {
    const now = this.wall();
    const current = this.byClient.get(client.clientId);
    if (current && now - current.issuedAt < TOKEN_LIFETIME_MS) {
      return { token: current, expiresIn: Math.floor((current.issuedAt + TOKEN_LIFETIME_MS - now) / 1000) };
    }
    if (current) this.byToken.delete(current.token);
    const token: IssuedToken = {
      token: randomBytes(24).toString('base64url'),
      clientId: client.clientId,
      scope,
      issuedAt: now,
    };
    this.byToken.set(token.token, token);
    this.byClient.set(client.clientId, token);
    return { token, expiresIn: TOKEN_LIFETIME_MS / 1000 };
  }

  valid(token: string): boolean {
    const t = this.byToken.get(token);
    return t !== undefined && this.wall() - t.issuedAt < TOKEN_LIFETIME_MS;
  }

  revoke(token: string): void {
    const t = this.byToken.get(token);
    if (!t) return;
    this.byToken.delete(token);
    if (this.byClient.get(t.clientId) === t) this.byClient.delete(t.clientId);
  }
}

/** The OAuth client of a `Basic` header or of form fields, or undefined when the credentials are wrong. */
export function clientFrom(
  clients: readonly OAuthClient[],
  authorization: string | undefined,
  form: URLSearchParams,
): OAuthClient | undefined {
  let id = form.get('client_id') ?? undefined;
  let secret = form.get('client_secret') ?? undefined;
  const m = /^Basic\s+(.+)$/i.exec(authorization ?? '');
  if (m) {
    const decoded = Buffer.from(m[1] as string, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return undefined;
    id = decodeURIComponent(decoded.slice(0, colon));
    secret = decodeURIComponent(decoded.slice(colon + 1));
  }
  return clients.find((c) => c.clientId === id && c.clientSecret === secret);
}

export class OAuthFailure extends Error {
  readonly status: number;
  readonly error: string;
  constructor(status: number, error: string, description: string) {
    super(description);
    this.status = status;
    this.error = error;
  }
}

/** `POST /ts/v1/oauth2/token`: RFC 6749 client credentials grant. */
export function tokenRequest(
  core: Core,
  authorization: string | undefined,
  body: string,
): Record<string, unknown> {
  const form = new URLSearchParams(body);
  const client = clientFrom(core.state.world.clients, authorization, form);
  if (!client) throw new OAuthFailure(401, 'invalid_client', 'Client authentication failed');
  const grant = form.get('grant_type');
  if (!grant) throw new OAuthFailure(400, 'invalid_request', 'grant_type is required');
  if (grant !== 'client_credentials')
    throw new OAuthFailure(400, 'unsupported_grant_type', `grant_type ${grant} is not supported`);
  const { token, expiresIn } = core.tokens.issue(client, form.get('scope') ?? client.scope);
  return { access_token: token.token, token_type: 'Bearer', expires_in: expiresIn, scope: token.scope };
}

/** `POST /ts/v1/oauth2/revoke` (RFC 7009): the token stops working; a new one is issued when asked. */
export function revokeRequest(core: Core, authorization: string | undefined, body: string): void {
  const form = new URLSearchParams(body);
  const client = clientFrom(core.state.world.clients, authorization, form);
  if (!client) throw new OAuthFailure(401, 'invalid_client', 'Client authentication failed');
  const token = form.get('token');
  if (!token) throw new OAuthFailure(400, 'invalid_request', 'token is required');
  core.tokens.revoke(token);
}

/** The realm of the emulator's challenges. */
export const REALM = 'fleetbook-emulator';

/**
 * Checks the bearer token of an API request. A refusal carries the challenge of RFC 6750 section 3, the bearer
 * scheme of the OAuth 2 tokens the service issues: `error="invalid_token"` when a token was sent and is unknown,
 * revoked or expired, no error code when none was sent. That challenge is what tells a client that its token, not
 * the user's password, was refused at a login: the login never reached the password check, nor the user's count.
 */
export function checkBearer(core: Core, authorization: string | undefined): void {
  const m = /^Bearer\s+(\S+)$/i.exec(authorization ?? '');
  if (!m) throw bearerRefusal('An Authorization: Bearer access token is required');
  if (!core.tokens.valid(m[1] as string))
    throw bearerRefusal('The access token is invalid or has expired', 'invalid_token');
}

function bearerRefusal(message: string, error?: string): Failure {
  const challenge = `Bearer realm="${REALM}"${error ? `, error="${error}", error_description="${message}"` : ''}`;
  return new Failure(401, 'UNAUTHORIZED', message, undefined, { 'www-authenticate': challenge });
}

/** The user of a request's session token; touching it restarts its idle time. */
export function checkSession(
  st: EmulatorState,
  token: string | undefined,
): { user: UserInfo; token: string } {
  if (!token)
    throw E.unauthorized(
      `An ${DEFAULT_SESSION_HEADER} or ${VENDOR_SESSION_HEADER} session token is required`,
    );
  const s = st.sessions.get(token);
  const now = st.now();
  // A token we never issued, one logged out, and one idle too long all read as expired: the service
  // cannot tell them apart once a session is gone, and the remedy is the same, a new login.
  if (!s) throw E.sessionExpired();
  if (now - s.lastUsed > st.faults.sessionTtlSeconds * 1000) {
    st.sessions.delete(token);
    throw E.sessionExpired();
  }
  s.lastUsed = Math.max(s.lastUsed, now);
  const user = st.world.user(s.username);
  if (!user) throw E.sessionExpired();
  return { user, token };
}

/** `POST /m2m/v1/session/login`. */
export function login(st: EmulatorState, username: string, password: string): { sessionToken: string } {
  const user = st.world.user(username);
  if (st.locked.has(username))
    throw new Failure(
      403,
      'USER_LOCKED',
      `The user ${username} is locked after ${MAX_FAILED_LOGINS} consecutive failed logins`,
    );
  if (!user || user.password !== password) {
    if (user) {
      const failures = (st.failedLogins.get(username) ?? 0) + 1;
      st.failedLogins.set(username, failures);
      if (failures >= MAX_FAILED_LOGINS) st.locked.add(username);
    }
    throw new Failure(401, 'UNAUTHORIZED', 'Invalid username or password');
  }
  st.failedLogins.delete(username);
  const token = randomUUID();
  st.sessions.set(token, { token, username, lastUsed: st.now() });
  return { sessionToken: token };
}

export function logout(st: EmulatorState, token: string): { success: boolean } {
  st.sessions.delete(token);
  return { success: true };
}
