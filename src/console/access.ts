/**
 * Who may read and act in the console. Reading needs the console token unless the daemon listens on loopback
 * only; acting (a run started, a run cancelled) always needs it. A browser sends the token once and then holds a
 * session cookie, which is a hash of the token (the token itself is never set in a cookie); a script sends the
 * token as a bearer. A request authenticated by the cookie acts only with the header `X-Fleetbook-Console: 1`,
 * which a page of another site cannot send without the daemon's consent (no CORS is answered).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

export const SESSION_COOKIE = 'fleetbook_console';
export const ACTION_HEADER = 'x-fleetbook-console';

/** The addresses that only this machine reaches. */
export function loopbackOnly(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

const digest = (s: string) => createHash('sha256').update(s).digest();

function equal(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

export type Refusal = { status: 401 | 403; error: string };

export class ConsoleAccess {
  /** The session cookie's value: the token's hash, so that the cookie never holds the token. */
  private readonly session: string;

  constructor(
    /** The console token: configured, or made up at start when the daemon listens on loopback only. */
    readonly token: string | undefined,
    /** The daemon listens on loopback only: reading needs no token. */
    readonly readOpen: boolean,
  ) {
    this.session = token
      ? createHash('sha256').update(`fleetbook console session\0${token}`).digest('hex')
      : '';
  }

  /**
   * The console's settings: the configured token; else, on loopback only, one made up now (`madeUp`, which the
   * daemon logs with the console's address); else none, and the console refuses every request.
   */
  static of(configured: string | undefined, listenHost: string): { access: ConsoleAccess; madeUp: boolean } {
    const readOpen = loopbackOnly(listenHost);
    if (configured) return { access: new ConsoleAccess(configured, readOpen), madeUp: false };
    if (readOpen)
      return { access: new ConsoleAccess(randomBytes(18).toString('base64url'), true), madeUp: true };
    return { access: new ConsoleAccess(undefined, false), madeUp: false };
  }

  /** Whether `given` is the token. */
  matches(given: string): boolean {
    return this.token !== undefined && equal(given, this.token);
  }

  /** Sets the session cookie of a browser that gave the token. */
  startSession(reply: FastifyReply): void {
    reply.header('set-cookie', `${SESSION_COOKIE}=${this.session}; Path=/; HttpOnly; SameSite=Strict`);
  }

  /** How the request proves it holds the token: by bearer, by the session cookie, or not at all. */
  private proof(req: FastifyRequest): 'bearer' | 'cookie' | undefined {
    if (!this.token) return undefined;
    const auth = req.headers.authorization;
    if (auth?.startsWith('Bearer ') && this.matches(auth.slice(7))) return 'bearer';
    const cookie = cookieOf(req.headers.cookie, SESSION_COOKIE);
    if (cookie && equal(cookie, this.session)) return 'cookie';
    return undefined;
  }

  authenticated(req: FastifyRequest): boolean {
    return this.proof(req) !== undefined;
  }

  /**
   * Why the console's page and its files may not be served, or undefined when they may. They hold no data: they
   * are served to anyone, to ask for the token, but not when the console is off (answered as its API is).
   */
  pageRefusal(): Refusal | undefined {
    return this.token ? undefined : unconfigured;
  }

  /** Why the request may not read, or undefined when it may. */
  readRefusal(req: FastifyRequest): Refusal | undefined {
    if (!this.token) return unconfigured;
    if (this.readOpen || this.proof(req)) return undefined;
    return { status: 401, error: 'the console token is needed: sign in, or send it as a bearer token' };
  }

  /** Why the request may not act, or undefined when it may. */
  actRefusal(req: FastifyRequest): Refusal | undefined {
    if (!this.token) return unconfigured;
    const proof = this.proof(req);
    if (!proof)
      return { status: 401, error: 'acting needs the console token: sign in, or send it as a bearer token' };
    if (proof === 'cookie' && req.headers[ACTION_HEADER] !== '1')
      return {
        status: 403,
        error: 'an action from the console page needs the header X-Fleetbook-Console: 1',
      };
    return undefined;
  }
}

const unconfigured: Refusal = {
  status: 403,
  error: 'the console is off: the daemon listens beyond loopback and FLEETBOOK_CONSOLE_TOKEN is not set',
};

/** The value of cookie `name` in a Cookie header. */
function cookieOf(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}
