/** The daemon's HTTP routes: the callback listener, health, status, metrics and the run history API. */
import { isoTime } from '../clock.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { parseDuration } from '../playbook/duration.js';
import type { Playbook } from '../playbook/schema.js';
import { RUN_STATUSES, type Store } from '../store/store.js';
import { runListEntry, shownRun } from '../store/run-views.js';
import {
  integer,
  onlyParameters,
  oneOf,
  refusingBadParameters,
  takesOnly,
  type Query,
} from '../util/query.js';
import { FailureBudget, PendingBytes, addressKey, charsetOf, isUtf8 } from './admission.js';
import {
  InboxRefusal,
  MAX_DEPTH,
  SIGNATURE_HEADER,
  authentic,
  callbackMessage,
  nestsDeeperThan,
  same,
  type GroupCommit,
  type Json,
  type ListenerCredentials,
} from './callbacks.js';
import { startManualRun } from './manual-run.js';
import type { DaemonMetrics, RejectReason } from './metrics.js';
import type { RunPool } from './pool.js';
import type { Progress, Registration } from './registrations.js';
import type { ReloadRefusal } from './reload.js';
import type { ShareStatus } from '../rate/shares.js';
import type { UserLogins } from '../api/login-count.js';
import type { AuthRefusal } from '../api/credentials.js';
import type { Scheduler } from './scheduler.js';

/**
 * The daemon's readiness: `starting` until its start is over (its runs resumed, its callback listener registered
 * for every account and service, each in place or failed and to be tried again, its schedules started), then
 * `ready`, until it stops.
 */
export type Readiness =
  | { status: 'starting'; waitingFor: string; registrations?: Progress }
  | {
      status: 'ready';
      /** Registrations not in place, tried again until they are (`/status`). */
      registrationsFailing?: number;
    }
  | { status: 'stopping' };

export interface RouteContext {
  store: Store;
  /** The daemon's lease: the owner of the runs it creates. */
  owner: string;
  playbooks: ReadonlyMap<string, Playbook>;
  pool: RunPool;
  commits: GroupCommit;
  creds: ListenerCredentials;
  metrics: DaemonMetrics;
  config: Config;
  log: Logger;
  accepting(): boolean;
  /** What `/readyz` answers: 200 when `status` is `ready`, else 503. */
  readiness(): Readiness;
  registrations(): Registration[];
  /** The last reload of the playbooks refused, while no later one has taken the files. */
  reloadRefused(): ReloadRefusal | undefined;
  scheduler(): Scheduler | undefined;
  /** This process's shares of the API areas' rate budgets, which the processes on the store share. */
  rates(): ShareStatus | undefined;
  /**
   * The daemon's credentials refused, until it restarts (a token given, the token request) or a token it fetches
   * is taken: meanwhile it sends no request to the service.
   */
  authRefused(): AuthRefusal | undefined;
  /** Whether this daemon sends session logins, and the logins that may have failed, counted on the store. */
  logins(): Promise<LoginStatus>;
}

/** What `/status` says of the session logins (`logins`). */
export interface LoginStatus {
  /** Why this daemon sends no session login now: a refusal (until it restarts), or the count at its limit. */
  stopped?: string;
  /** The logins that may have failed since the last that succeeded, by service and user (`fleetbook logins`). */
  counted: UserLogins[];
}

/** Refusals before authentication: each counts against the sender's failure budget. */
const BEFORE_AUTHENTICATION: ReadonlySet<RejectReason> = new Set([
  'unauthenticated',
  'malformed',
  'too_large',
]);

export function routes(app: FastifyInstance, c: RouteContext): void {
  const bodyLimit = app.initialConfig.bodyLimit ?? 1024 * 1024;
  const failures = new FailureBudget(
    c.config.callbackFailureLimit,
    parseDuration(c.config.callbackFailureWindow) ?? 60_000,
  );
  // Each address a quarter of the bound: one sender cannot take it all from the others.
  const pending = new PendingBytes(
    c.config.callbackPendingBytes,
    Math.max(bodyLimit, Math.floor(c.config.callbackPendingBytes / 4)),
  );
  /** Releases the body bytes a callback reserved, once it is authenticated (else when it is answered). */
  const releases = new WeakMap<FastifyRequest, () => void>();
  let storeFailureLoggedAt = 0;
  /**
   * The hook of a route that writes: its answer is sent only once what it wrote is committed (a run started).
   * Not on the callback routes, whose writes are the group commit's, acknowledged once synced.
   */
  const durable = async () => c.store.durable();

  const reject = (
    req: FastifyRequest,
    reply: FastifyReply,
    status: number,
    reason: RejectReason,
    message: string,
    retryAfter?: number,
  ) => {
    c.metrics.callbacksRejected.inc({ reason });
    if (BEFORE_AUTHENTICATION.has(reason)) failures.fail(addressKey(req.ip ?? ''));
    if (retryAfter !== undefined) reply.header('retry-after', String(retryAfter));
    return reply.code(status).send({ error: message });
  };
  const badRequest = (message: string) => Object.assign(new Error(message), { statusCode: 400 });
  // Every body the daemon takes is JSON: fastify's own text/plain parser would hand a callback a string, refused
  // as no JSON object (400, "malformed"), where any other type that is not JSON is answered 415.
  app.removeContentTypeParser('text/plain');
  // The raw body is kept: Location messages are signed over its exact bytes.
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => {
    const raw = body as Buffer;
    // Refused here, alone, rather than failing the commit it would join.
    if (nestsDeeperThan(raw, MAX_DEPTH)) {
      done(badRequest(`the body nests deeper than ${MAX_DEPTH} levels`), undefined);
      return;
    }
    try {
      done(null, { raw, json: JSON.parse(raw.toString('utf8')) as unknown });
    } catch {
      done(badRequest('the body is not valid JSON'), undefined);
    }
  });
  app.setErrorHandler((err: Error & { statusCode?: number; code?: string }, req, reply) => {
    const status = err.statusCode ?? 500;
    if (req.url.startsWith('/callbacks')) {
      if (status === 413) return reject(req, reply, 413, 'too_large', 'the body is larger than 1 MB');
      if (status === 400) return reject(req, reply, 400, 'malformed', err.message);
      if (status === 415) return reject(req, reply, 415, 'malformed', 'callbacks are application/json');
    }
    if (status >= 500) c.log.error('request failed', { url: req.url, error: err.message });
    return reply.code(status).send({ error: status >= 500 ? 'internal error' : err.message });
  });

  /**
   * Before a callback's body is read: an address past its failure budget gets 429, a charset other than UTF-8
   * 415, and a body that would pass the bound of bytes read unauthenticated 503. Each closes the connection
   * after answering, so that the body is not read at all (Node would read it to the end to reuse the connection).
   */
  const admit = (req: FastifyRequest, reply: FastifyReply, done: () => void) => {
    // A refusal sends the answer; `done` is then not called. A hook of this form costs no promise.
    const unread = (status: number, reason: RejectReason, message: string, retryAfter?: number) =>
      void reject(req, reply.header('connection', 'close'), status, reason, message, retryAfter);
    const address = addressKey(req.ip ?? '');
    const wait = failures.blockedFor(address);
    if (wait) return unread(429, 'throttled', 'too many refused callbacks from this address', wait);
    const charset = charsetOf(req.headers['content-type']);
    if (charset !== undefined && !isUtf8(charset))
      return unread(
        415,
        'malformed',
        `callbacks are JSON in UTF-8, not charset=${JSON.stringify(charset.slice(0, 40))}`,
      );
    const length = req.headers['content-length'];
    const bytes =
      length !== undefined
        ? Math.min(Number(length) || 0, bodyLimit)
        : req.headers['transfer-encoding']
          ? bodyLimit
          : 0;
    if (!pending.take(address, bytes))
      return unread(503, 'overloaded', 'too many callbacks being read; send again later', 1);
    let held = true;
    const release = () => {
      if (held) pending.give(address, bytes);
      held = false;
    };
    reply.raw.once('close', release);
    releases.set(req, release);
    done();
  };

  const callback = async (req: FastifyRequest, reply: FastifyReply, named: string | undefined) => {
    const body = req.body as { raw: Buffer; json: unknown } | undefined;
    if (!body || !body.json || typeof body.json !== 'object' || Array.isArray(body.json))
      return reject(req, reply, 400, 'malformed', 'a callback is a JSON object');
    const json = body.json as Json;
    const sig = req.headers[SIGNATURE_HEADER];
    if (!authentic(json, body.raw, typeof sig === 'string' ? sig : undefined, c.creds, named))
      return reject(req, reply, 401, 'unauthenticated', 'wrong callback credentials');
    releases.get(req)?.();
    const message = callbackMessage(json, named, isoTime(Date.now()));
    if (typeof message === 'string') return reject(req, reply, 400, 'invalid', message);
    if (!c.accepting()) return reply.code(503).header('retry-after', '5').send({ error: 'stopping' });
    if (c.store.inboxBacklog() + c.commits.waiting >= c.config.inboxLimit)
      return reject(req, reply, 503, 'overloaded', 'inbox full; send again later', 5);
    const { service, kind } = message;
    let result: 'stored' | 'duplicate';
    try {
      result = await c.commits.add(message);
    } catch (e) {
      if (!(e instanceof InboxRefusal)) throw e;
      const cause = (e.cause as Error | undefined)?.message;
      if (e.status === 400) {
        c.log.warn('callback refused: it cannot be stored', {
          service,
          kind,
          requestId: message.requestId,
          error: cause,
        });
        return reject(req, reply, 400, 'unstorable', e.message);
      }
      // Once per 10 s: a full disk fails every callback until someone makes room.
      if (Date.now() - storeFailureLoggedAt > 10_000) {
        storeFailureLoggedAt = Date.now();
        c.log.error('the inbox cannot store callbacks; answering 503', { error: cause });
      }
      return reject(req, reply, 503, 'store_failed', e.message, e.retryAfter);
    }
    (result === 'stored' ? c.metrics.callbacksReceived : c.metrics.callbacksDuplicated).inc({ service });
    return reply.code(200).send({ status: result });
  };
  app.post<{ Params: { service: string } }>('/callbacks/:service', { onRequest: admit }, (req, reply) =>
    callback(req, reply, req.params.service),
  );
  app.post('/callbacks', { onRequest: admit }, (req, reply) => callback(req, reply, undefined));

  app.get('/healthz', { preValidation: takesOnly() }, async () => ({ status: 'ok' }));
  app.get('/readyz', { preValidation: takesOnly() }, async (_req, reply) => {
    const r = c.readiness();
    return reply.code(r.status === 'ready' ? 200 : 503).send(r);
  });
  app.get('/metrics', { preValidation: takesOnly() }, async (_req, reply) =>
    reply.header('content-type', c.metrics.registry.contentType).send(await c.metrics.registry.metrics()),
  );
  app.get('/status', { preValidation: takesOnly() }, async () => {
    const authRefused = c.authRefused();
    return {
      playbooks: [...c.playbooks.values()].map((pb) => ({ name: pb.name, on: Object.keys(pb.on) })),
      // Only while the files on disk are refused: the set above is the one before them.
      ...(c.reloadRefused() ? { reloadRefused: c.reloadRefused() } : {}),
      inboxBacklog: c.store.inboxBacklog(),
      runs: { running: c.pool.running, queued: c.pool.queued },
      registrations: c.registrations(),
      schedules: c.scheduler()?.next() ?? [],
      rates: c.rates(),
      // Only while refused: every call fails with FB_AUTH until a restart with fresh credentials, or a fetched
      // token taken.
      ...(authRefused ? { authRefused } : {}),
      logins: await c.logins(),
      // Every process on the store (the replicas, a `fleetbook run`), what each holds, and until when.
      owners: (await c.store.holdings(Date.now())).map(({ leaseUntil, ...o }) => ({
        ...o,
        leaseUntil: new Date(leaseUntil).toISOString(),
        ...(o.id === c.owner ? { self: true } : {}),
      })),
    };
  });
  app.get<{ Querystring: Query }>('/runs', async (req, reply) =>
    refusingBadParameters(reply, async () => {
      const q = onlyParameters(req.query, ['playbook', 'status', 'limit']);
      const limit = integer('limit', q.limit, 1, 1000, 50);
      const status = oneOf('status', q.status, RUN_STATUSES);
      const { playbook } = q;
      // As `fleetbook runs list --json` gives them, masked as the console masks them: a run's inputs may be
      // secrets (a token typed into a form).
      return (
        await c.store.listRuns({ ...(playbook ? { playbook } : {}), ...(status ? { status } : {}), limit })
      ).map(runListEntry);
    }),
  );
  app.get<{ Params: { id: string } }>('/runs/:id', { preValidation: takesOnly() }, async (req, reply) => {
    const run = await c.store.getRun(req.params.id);
    if (!run) return reply.code(404).send({ error: `no run ${req.params.id}` });
    // Not ended: its steps so far, and a dry run's planned calls so far, from its checkpoints.
    return shownRun(c.store, run);
  });
  app.post<{ Params: { name: string }; Body: { raw: Buffer; json: unknown } | undefined }>(
    '/playbooks/:name/runs',
    { onSend: durable },
    async (req, reply) => {
      const token = c.config.daemonToken;
      if (!token)
        return reply.code(403).send({ error: 'manual runs over HTTP are off: set FLEETBOOK_DAEMON_TOKEN' });
      const auth = req.headers.authorization ?? '';
      if (!same(auth, `Bearer ${token}`))
        return reply
          .code(401)
          .header('www-authenticate', 'Bearer')
          .send({ error: 'wrong or missing bearer token' });
      const run = startManualRun(c, req.params.name, req.body?.json, 'http');
      if ('error' in run) {
        if (run.retryAfter !== undefined) reply.header('retry-after', String(run.retryAfter));
        return reply.code(run.status).send({ error: run.error });
      }
      return reply.code(202).send({ runId: run.runId, status: 'queued', url: `/runs/${run.runId}` });
    },
  );
}
