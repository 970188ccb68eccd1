/**
 * A loopback recording server for client tests: a real node:http server on `listen(0)` that answers the two
 * auth steps by itself (OAuth client credentials and session login), lets each test script the answer to
 * any other request, and records every request it sees.
 *
 * ```ts
 * const rec = await Recorder.start({ username: 'u', password: 'p' });
 * rec.enqueue('POST /api/m2m/v1/devices/actions/suspend', { status: 500 }, { status: 200, body: {} });
 * const client = createClient({ baseUrl: rec.baseUrl, ...rec.credentials });
 * ...
 * expect(rec.requestsTo('/api/m2m/v1/devices/actions/suspend')).to.have.length(2);
 * await rec.close();
 * ```
 *
 * Scripted answers are consumed in order by the requests they match, before any persistent handler. A
 * request that nothing matches is answered 200 `{}`.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createClient, type Client } from '../../src/api/client.js';

export const TOKEN_PATH = '/api/ts/v1/oauth2/token';
export const LOGIN_PATH = '/api/m2m/v1/session/login';
export const SESSION_EXPIRED = {
  errorCode: 'INVALID_PARAMETER',
  errorMessage: 'UWS verification failure (The Session has expired.)',
} as const;

/** One request as the server saw it. */
export interface RecordedRequest {
  method: string;
  /** Path and query exactly as sent (still percent-encoded). */
  url: string;
  /** The path without the query, still percent-encoded. */
  path: string;
  query: URLSearchParams;
  /** Lower-case header names, as node:http gives them. */
  headers: IncomingHttpHeaders;
  rawBody: string;
  /** JSON bodies parsed, form bodies as an object, anything else the raw text; undefined when empty. */
  body: unknown;
  /** Milliseconds since the recorder started (real time), for ordering. */
  at: number;
}

/** What to answer. `body` objects are sent as JSON; strings as they are. */
export interface ScriptedResponse {
  status?: number;
  headers?: Record<string, string>;
  body?: unknown;
  /** Destroy the socket after the request was read, without answering (a connection reset). */
  destroy?: boolean;
  /** Answer after this many real milliseconds. */
  delayMs?: number;
}

export type Responder = (req: RecordedRequest) => ScriptedResponse | Promise<ScriptedResponse>;

/** `'POST /api/x'`, `'/api/x'` (any method), a RegExp on `METHOD path`, or a predicate. */
export type Route = string | RegExp | ((req: RecordedRequest) => boolean);

export interface RecorderOptions {
  /** OAuth client credentials the token endpoint accepts. @default fleet-client / fleet-client-secret-0001 */
  clientId?: string;
  clientSecret?: string;
  /** Session credentials the login endpoint accepts. @default fleet-user / fleet-password-0001 */
  username?: string;
  password?: string;
  /** `expires_in` of issued bearer tokens, in seconds. @default 3600 */
  expiresIn?: number;
  /**
   * Check `x-m2m-token` on every API call and answer the expired-session error (spec 7.1) for a token that
   * was never issued or was expired with `expireSessions()`. @default true
   */
  checkSession?: boolean;
  /** Status of a refused login. @default 401 */
  loginFailureStatus?: number;
  /** Port to listen on; 0 picks a free one. @default 0 */
  port?: number;
  /** Keep connections open between requests; false answers every request with `connection: close`. @default true */
  keepAlive?: boolean;
}

interface Script {
  route: Route;
  responses: ScriptedResponse[];
}

export class Recorder {
  readonly requests: RecordedRequest[] = [];
  /** Bearer tokens issued, in order: `bearer-1`, `bearer-2`, ... */
  readonly issuedTokens: string[] = [];
  /** Session tokens issued, in order: `session-1`, ... */
  readonly issuedSessions: string[] = [];
  readonly options: Required<RecorderOptions>;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly started = Date.now();
  private scripts: Script[] = [];
  private handlers: { route: Route; responder: Responder }[] = [];
  private validSessions = new Set<string>();
  private port = 0;

  private constructor(o: RecorderOptions) {
    this.options = {
      clientId: 'fleet-client',
      clientSecret: 'fleet-client-secret-0001',
      username: 'fleet-user',
      password: 'fleet-password-0001',
      expiresIn: 3600,
      checkSession: true,
      loginFailureStatus: 401,
      port: 0,
      keepAlive: true,
      ...o,
    };
    this.server = createServer((req, res) => {
      void this.receive(req).then(
        (answer) => {
          if (answer.destroy) {
            req.socket.destroy();
            return;
          }
          const status = answer.status ?? 200;
          const headers: Record<string, string> = { ...answer.headers };
          if (!this.options.keepAlive) headers.connection = 'close';
          let payload = '';
          if (answer.body !== undefined) {
            if (typeof answer.body === 'string') payload = answer.body;
            else {
              payload = JSON.stringify(answer.body);
              headers['content-type'] ??= 'application/json';
            }
          }
          res.writeHead(status, headers);
          res.end(payload);
        },
        (e: unknown) => {
          res.writeHead(500, { 'content-type': 'text/plain' });
          res.end(`recorder failure: ${String(e)}`);
        },
      );
    });
    this.server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
  }

  /** Starts a recorder on a free loopback port. */
  static async start(o: RecorderOptions = {}): Promise<Recorder> {
    const r = new Recorder(o);
    await new Promise<void>((resolve, reject) => {
      r.server.once('error', reject);
      r.server.listen(r.options.port, '127.0.0.1', resolve);
    });
    r.port = (r.server.address() as AddressInfo).port;
    return r;
  }

  get listeningPort(): number {
    return this.port;
  }

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The spec's `{base_url}`. */
  get baseUrl(): string {
    return `${this.origin}/api`;
  }

  /** The client options that authenticate against this recorder. */
  get credentials(): { clientId: string; clientSecret: string; username: string; password: string } {
    const { clientId, clientSecret, username, password } = this.options;
    return { clientId, clientSecret, username, password };
  }

  /** The Basic header value of the configured OAuth client. */
  get basicHeader(): string {
    const { clientId, clientSecret } = this.options;
    return `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
  }

  /** Answers the next requests matching `route` with `responses`, one each, in order. */
  enqueue(route: Route, ...responses: ScriptedResponse[]): this {
    this.scripts.push({ route, responses: [...responses] });
    return this;
  }

  /** Answers every request matching `route` (after the scripted answers are used up). Later handlers win. */
  handle(route: Route, responder: Responder | ScriptedResponse): this {
    this.handlers.unshift({
      route,
      responder: typeof responder === 'function' ? responder : () => responder,
    });
    return this;
  }

  /** Makes every session issued so far expired: the next call with one gets the expired-session error. */
  expireSessions(): void {
    this.validSessions.clear();
  }

  /** Requests to `path` (exact, query excluded), optionally of one method. */
  requestsTo(path: string, method?: string): RecordedRequest[] {
    return this.requests.filter((r) => r.path === path && (method === undefined || r.method === method));
  }

  /** Requests other than the token and login requests. */
  apiRequests(): RecordedRequest[] {
    return this.requests.filter((r) => r.path !== TOKEN_PATH && r.path !== LOGIN_PATH);
  }

  get tokenRequests(): RecordedRequest[] {
    return this.requestsTo(TOKEN_PATH);
  }

  get loginRequests(): RecordedRequest[] {
    return this.requestsTo(LOGIN_PATH);
  }

  /** Forgets the recorded requests, scripts and handlers (issued tokens stay valid). */
  reset(): void {
    this.requests.length = 0;
    this.scripts = [];
    this.handlers = [];
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  // ── answering ─────────────────────────────────────────────────────────────────────────────────

  private async receive(req: IncomingMessage): Promise<ScriptedResponse> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const rawBody = Buffer.concat(chunks).toString('utf8');
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const rec: RecordedRequest = {
      method: req.method ?? 'GET',
      url,
      path: q < 0 ? url : url.slice(0, q),
      query: new URLSearchParams(q < 0 ? '' : url.slice(q + 1)),
      headers: req.headers,
      rawBody,
      body: parseRequestBody(rawBody, req.headers['content-type']),
      at: Date.now() - this.started,
    };
    this.requests.push(rec);

    const answer = await this.scripted(rec);
    if (answer.delayMs) await new Promise((r) => setTimeout(r, answer.delayMs));
    return answer;
  }

  private async scripted(rec: RecordedRequest): Promise<ScriptedResponse> {
    for (const s of this.scripts) {
      if (s.responses.length && matches(s.route, rec)) return s.responses.shift() as ScriptedResponse;
    }
    for (const h of this.handlers) if (matches(h.route, rec)) return h.responder(rec);
    if (rec.path === TOKEN_PATH) return this.token(rec);
    if (rec.path === LOGIN_PATH) return this.login(rec);
    if (this.options.checkSession && rec.path.startsWith('/api/')) {
      const session = rec.headers['x-m2m-token'];
      if (typeof session !== 'string' || !this.validSessions.has(session))
        return { status: 400, body: SESSION_EXPIRED };
    }
    return { status: 200, body: {} };
  }

  private token(rec: RecordedRequest): ScriptedResponse {
    if (rec.headers.authorization !== this.basicHeader) {
      return {
        status: 401,
        body: { error: 'invalid_client', error_description: 'Client authentication failed' },
      };
    }
    const token = `bearer-${this.issuedTokens.length + 1}`;
    this.issuedTokens.push(token);
    return {
      status: 200,
      body: {
        access_token: token,
        token_type: 'Bearer',
        expires_in: this.options.expiresIn,
        scope: 'default',
      },
    };
  }

  private login(rec: RecordedRequest): ScriptedResponse {
    const b = (rec.body ?? {}) as { username?: unknown; password?: unknown };
    if (b.username !== this.options.username || b.password !== this.options.password) {
      return {
        status: this.options.loginFailureStatus,
        body: { errorCode: 'INVALID_ACCESS', errorMessage: 'Invalid username or password' },
      };
    }
    const session = `session-${this.issuedSessions.length + 1}`;
    this.issuedSessions.push(session);
    this.validSessions.add(session);
    return { status: 200, body: { sessionToken: session } };
  }
}

function matches(route: Route, rec: RecordedRequest): boolean {
  if (typeof route === 'function') return route(rec);
  if (route instanceof RegExp) return route.test(`${rec.method} ${rec.path}`);
  const space = route.indexOf(' ');
  if (space < 0) return rec.path === route;
  return rec.method === route.slice(0, space) && rec.path === route.slice(space + 1);
}

function parseRequestBody(raw: string, contentType: string | undefined): unknown {
  if (raw === '') return undefined;
  if (contentType?.includes('application/x-www-form-urlencoded'))
    return Object.fromEntries(new URLSearchParams(raw));
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

/** What `onRecorder` gives the tests of a describe block. */
export interface OnRecorder {
  rec: Recorder;
  /** A client of `rec`: its credentials, FAST_RATES. */
  client: Client;
}

/**
 * A Recorder and a client of it for the tests of the describe block that calls this: made before them and closed
 * after them, or with `each`, made afresh before each test and closed after it. The members are there once the
 * block's `before` (`beforeEach`) hooks run.
 */
export function onRecorder(o: { each?: boolean } = {}): OnRecorder {
  const t = {} as OnRecorder;
  (o.each ? beforeEach : before)(async () => {
    t.rec = await Recorder.start();
    t.client = createClient({ baseUrl: t.rec.baseUrl, ...t.rec.credentials, rates: FAST_RATES });
  });
  (o.each ? afterEach : after)(async () => {
    await t.client.close();
    await t.rec.close();
  });
  return t;
}

/** The error the call `p` failed with; fails the test when it succeeded. */
export async function failure(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected the call to fail');
}

/**
 * Rate budgets high enough that a test not about rate never waits on them (pass as the client's `rates`).
 */
export const FAST_RATES = Object.fromEntries(
  ['m2m', 'loc', 'subsc', 'dm', 'oauth'].map((a) => [a, { requestsPerSecond: 100_000, concurrency: 256 }]),
) as Record<'m2m' | 'loc' | 'subsc' | 'dm' | 'oauth', { requestsPerSecond: number; concurrency: number }>;
