/**
 * The HTTP server: every operation of the action catalog at `/api` + its path, the OAuth endpoints, a few
 * documented calls outside the catalog, and the control API. Routes are derived from the catalog, so an
 * operation added there is served (or fails loudly at start-up when it has no handler).
 *
 * Each API request goes through one pipeline: latency, rate limit, count, bearer and session, injected 5xx,
 * Content-Type, JSON, the handler, injected connection reset. Bodies are read as text and parsed here, so that bad JSON is
 * answered with the spec's "Invalid JSON" in the operation's own error shape.
 */
import Fastify, {
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type HTTPMethods,
} from 'fastify';
import { CATALOG, type ErrorShape, type Operation } from '../api/catalog.js';
import { DEFAULT_SESSION_HEADER, VENDOR_SESSION_HEADER } from '../api/session-header.js';
import {
  checkBearer,
  checkSession,
  login,
  logout,
  OAuthFailure,
  REALM,
  revokeRequest,
  tokenRequest,
} from './auth.js';
import { connectivityHandlers } from './connectivity.js';
import { deviceActionHandlers } from './device-actions.js';
import { validInput, type Answer, type Ctx, type Handler, type Json } from './context.js';
import { registerControl, type ResetFn } from './control.js';
import { E, Failure, renderError } from './errors.js';
import { groupHandlers } from './groups.js';
import { historyHandlers } from './history.js';
import { listenerHandlers } from './listeners.js';
import { locationHandlers } from './location.js';
import { planHandlers } from './plans.js';
import { quotaHandlers } from './quota.js';
import { sensorHandlers } from './sensors.js';
import { smsHistoryHandlers } from './sms-history.js';
import { subscriptionHandlers } from './subscriptions.js';
import type { Core } from './state.js';
import type { Faults } from './faults.js';
import { triggerHandlers } from './triggers.js';
import { usageReportHandlers } from './usage-reports.js';
import { NO_ROUTE_SCHEMAS } from '../util/no-route-schemas.js';

const sessionHandlers = {
  'session.login': (ctx: Ctx): Answer => {
    const input = validInput(ctx);
    return { body: login(ctx.st, String(input.username), String(input.password)) };
  },
  'session.logout': (ctx: Ctx): Answer => ({ body: logout(ctx.st, ctx.session) }),
};

const HANDLERS: Record<string, Handler> = {
  ...sessionHandlers,
  ...triggerHandlers,
  ...locationHandlers,
  ...subscriptionHandlers,
  ...listenerHandlers,
  ...sensorHandlers,
  ...connectivityHandlers,
  ...deviceActionHandlers,
  ...groupHandlers,
  ...planHandlers,
  ...historyHandlers,
  ...smsHistoryHandlers,
  ...usageReportHandlers,
  ...quotaHandlers,
};

/** Calls served beyond the catalog, with the area whose error shape they use. */
const EXTRA: { action: string; method: HTTPMethods; path: string; shape: ErrorShape }[] = [
  { action: 'triggers.list', method: 'GET', path: '/m2m/v2/triggers/accounts/{accountName}', shape: 'error' },
  { action: 'triggers.list', method: 'GET', path: '/m2m/v2/triggers/{triggerId}', shape: 'error' },
  {
    action: 'locationCallbacks.list',
    method: 'GET',
    path: '/loc/v1/callbacks/{accountName}',
    shape: 'errorCode',
  },
  { action: 'location.removeExclusions', method: 'DELETE', path: '/loc/v1/consents', shape: 'errorCode' },
  {
    action: 'usageTriggers.list',
    method: 'GET',
    path: '/subsc/v1/usage/accounts/{accountName}/triggers',
    shape: 'errorCode',
  },
  {
    action: 'usageTriggers.list',
    method: 'GET',
    path: '/subsc/v1/usage/accounts/{accountName}/triggers/{triggerId}',
    shape: 'errorCode',
  },
];

/** Operations the spec leaves POST-or-PATCH (spec 4.3): both are served. */
const ALSO_PATCH = new Set(['sensors.networkExperience', 'sensors.setConfiguration']);

interface Route {
  method: HTTPMethods;
  url: string;
  /** The action a request is for: one, or chosen by the body where two share a route. */
  resolve: (body: unknown) => string;
}

function fastifyPath(path: string): string {
  return `/api${path.replace(/\{(\w+)\}/g, ':$1')}`;
}

function routes(): Route[] {
  const byKey = new Map<string, { method: HTTPMethods; url: string; actions: string[] }>();
  const add = (action: string, method: HTTPMethods, path: string) => {
    const url = fastifyPath(path);
    const key = `${method} ${url}`;
    const r = byKey.get(key) ?? { method, url, actions: [] };
    r.actions.push(action);
    byKey.set(key, r);
  };
  for (const op of Object.values(CATALOG) as Operation[]) {
    if (!HANDLERS[op.action]) throw new Error(`emulator: no handler for ${op.action}`);
    add(op.action, op.method, op.path);
    if (ALSO_PATCH.has(op.action)) add(op.action, 'PATCH', op.path);
  }
  for (const x of EXTRA) {
    if (!HANDLERS[x.action]) throw new Error(`emulator: no handler for ${x.action}`);
    add(x.action, x.method, x.path);
  }
  return [...byKey.values()].map(({ method, url, actions }) => {
    if (actions.length === 1) return { method, url, resolve: () => actions[0] as string };
    // POST /m2m/v1/devices/actions/list is the 5G attribute lookup when the body names a `deviceId` and no
    // account (a listing may name one device too, but always its account).
    if (actions.includes('devices.attributes') && actions.includes('devices.list'))
      return {
        method,
        url,
        resolve: (body: unknown) =>
          body !== null && typeof body === 'object' && 'deviceId' in body && !('accountName' in body)
            ? 'devices.attributes'
            : 'devices.list',
      };
    throw new Error(`emulator: ${method} ${url} is claimed by ${actions.join(', ')}`);
  });
}

function shapeOf(action: string): ErrorShape {
  const op = (CATALOG as Record<string, Operation>)[action];
  return op?.errorShape ?? EXTRA.find((x) => x.action === action)?.shape ?? 'errorCode';
}

const JSON_TYPE = 'application/json; charset=utf-8';

function sendJson(reply: FastifyReply, status: number, body: unknown): FastifyReply {
  if (body === undefined) return reply.code(status).send();
  return reply.code(status).header('content-type', JSON_TYPE).send(JSON.stringify(body));
}

function sendFailure(reply: FastifyReply, shape: ErrorShape, f: Failure): FastifyReply {
  if (f.headers) reply.headers(f.headers);
  return sendJson(reply, f.status, renderError(shape, f));
}

/** Whether `resetNext` resets this request of `action`: counted down when it does. */
function resetNow(faults: Faults, action: string): boolean {
  const left = faults.resetNext[action];
  if (!left) return false;
  if (left > 1) faults.resetNext[action] = left - 1;
  else delete faults.resetNext[action];
  return true;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The session token, under the spec's header name or the real service's (api/session-header.ts). */
function sessionToken(req: FastifyRequest): string | undefined {
  return (
    header(req, DEFAULT_SESSION_HEADER.toLowerCase()) ?? header(req, VENDOR_SESSION_HEADER.toLowerCase())
  );
}

/** `application/json`, in any case and with any parameters (`; charset=utf-8`). */
function isJson(contentType: string | undefined): boolean {
  return contentType?.split(';')[0]?.trim().toLowerCase() === 'application/json';
}

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

async function serveApi(
  core: Core,
  route: Route,
  req: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const text = typeof req.body === 'string' ? req.body : undefined;
  let raw: unknown;
  let badJson = false;
  if (text !== undefined && text.trim() !== '') {
    try {
      raw = JSON.parse(text);
    } catch {
      badJson = true;
    }
  }
  const action = route.resolve(raw);
  const shape = shapeOf(action);
  const st = core.state;
  const faults = st.faults;
  if (faults.latencyMs > 0) await sleep(faults.latencyMs);
  if (core.holds.any) await core.holds.wait(action);
  st.count(action);
  try {
    if (st.gate) {
      const wait = st.gate.take(core.options.wallClock());
      if (wait > 0) throw E.tooManyRequests(wait);
    }
    checkBearer(core, header(req, 'authorization'));
    const needsSession = action !== 'session.login';
    const session = needsSession ? checkSession(st, sessionToken(req)) : undefined;
    if (faults.errorRate > 0 && st.faultRng.next() < faults.errorRate)
      throw action === 'location.locate' || action === 'location.createReport'
        ? E.failedToGetLocation(500)
        : E.internal();
    // Spec 5 requires `Content-Type: application/json` on every operation (the OAuth requests, form-encoded,
    // are not operations and are served below). Spec 7 has no row for it: 400 INVALID_PARAMETER, the status
    // and code of every invalid request in 7.1, in the operation's own body shape.
    const type = header(req, 'content-type');
    if (!isJson(type))
      throw E.invalid(
        type === undefined
          ? 'Content-Type: application/json is required'
          : `Content-Type must be application/json, not ${type}`,
        'Content-Type',
      );
    if (badJson) throw E.invalidJson();
    const ctx: Ctx = {
      core,
      st,
      action,
      op: (CATALOG as Record<string, Operation>)[action],
      user: session?.user ?? { username: '', password: '', accounts: [], primary: false },
      session: session?.token ?? '',
      body: raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Json) : {},
      raw,
      params: (req.params ?? {}) as Record<string, string>,
      query: (req.query ?? {}) as Record<string, string | string[] | undefined>,
      now: st.now(),
    };
    // The handler's refusal is an answer too: a refused login counted a failure towards the lockout.
    let answer: Answer | Failure;
    try {
      answer = await (HANDLERS[action] as Handler)(ctx);
    } catch (e) {
      if (!(e instanceof Failure)) throw e;
      answer = e;
    }
    const refused = answer instanceof Failure;
    // `resetNext` loses whatever the service answered; `resetRate` only what it did, as it always has (its draws,
    // and so the seeded faults, stay the same).
    if (
      resetNow(faults, action) ||
      (!refused && faults.resetRate > 0 && st.faultRng.next() < faults.resetRate)
    ) {
      // The service acted; the answer is lost. The worst case for a client, and the one to test.
      reply.hijack();
      req.raw.socket.destroy();
      return reply;
    }
    if (answer instanceof Failure) throw answer;
    if (answer.headers) reply.headers(answer.headers);
    return sendJson(reply, answer.status ?? 200, answer.body);
  } catch (e) {
    if (e instanceof Failure) return sendFailure(reply, shape, e);
    core.log.error('emulator: handler failed', { action, error: (e as Error).stack ?? String(e) });
    return sendFailure(reply, shape, E.internal());
  }
}

export interface ServerOptions {
  core: Core;
  reset: ResetFn;
}

export function buildServer({ core, reset }: ServerOptions): FastifyInstance {
  const app = Fastify({
    schemaController: NO_ROUTE_SCHEMAS,
    logger: false,
    // A 10,000-device report request is about 600 KB.
    bodyLimit: 16 * 1024 * 1024,
    forceCloseConnections: true,
    keepAliveTimeout: 10_000,
    return503OnClosing: false,
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));

  for (const route of routes()) {
    app.route({
      method: route.method,
      url: route.url,
      handler: async (req, reply) => {
        core.inFlight++;
        try {
          return await serveApi(core, route, req, reply);
        } finally {
          core.inFlight--;
        }
      },
    });
  }

  const oauth =
    (fn: (auth: string | undefined, body: string) => unknown) =>
    async (req: FastifyRequest, reply: FastifyReply) => {
      core.state.count(req.url.endsWith('/revoke') ? 'oauth.revoke' : 'oauth.token');
      try {
        const body = fn(header(req, 'authorization'), typeof req.body === 'string' ? req.body : '');
        reply.header('cache-control', 'no-store');
        return sendJson(reply, 200, body ?? undefined);
      } catch (e) {
        if (!(e instanceof OAuthFailure)) throw e;
        if (e.status === 401) reply.header('www-authenticate', `Basic realm="${REALM}"`);
        return sendJson(reply, e.status, { error: e.error, error_description: e.message });
      }
    };
  app.post(
    '/api/ts/v1/oauth2/token',
    oauth((auth, body) => tokenRequest(core, auth, body)),
  );
  app.post(
    '/api/ts/v1/oauth2/revoke',
    oauth((auth, body) => revokeRequest(core, auth, body)),
  );

  registerControl(app, core, reset);

  app.setNotFoundHandler((req, reply) => {
    if (req.url.startsWith('/_emulator'))
      return sendJson(reply, 404, { error: `No control call ${req.method} ${req.url}` });
    return sendJson(reply, 404, {
      errorCode: 'NOT_FOUND',
      errorMessage: `No operation at ${req.method} ${req.url}`,
    });
  });
  app.setErrorHandler((err: { statusCode?: number; code?: string; message: string }, req, reply) => {
    const status = err.statusCode && err.statusCode >= 400 ? err.statusCode : 500;
    if (status >= 500) core.log.error('emulator: request failed', { url: req.url, error: err.message });
    if (req.url.startsWith('/_emulator')) return sendJson(reply, status, { error: err.message });
    const code =
      status === 413 ? 'PAYLOAD_TOO_LARGE' : status >= 500 ? 'INTERNAL_ERROR' : 'INVALID_PARAMETER';
    return sendJson(reply, status, {
      errorCode: code,
      errorMessage: status >= 500 ? 'Internal system error' : err.message,
    });
  });
  return app;
}
