/** The daemon's HTTP routes: the callback listener, health, status, metrics and the run history API. */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { Playbook } from '../playbook/schema.js';
import { coerceInputs } from '../runner/runner.js';
import type { RunRecord, Store } from '../store/store.js';
import {
  InboxRefusal,
  MAX_DEPTH,
  SIGNATURE_HEADER,
  authentic,
  kindOf,
  nestsDeeperThan,
  same,
  serviceOf,
  toMessage,
  type GroupCommit,
  type Json,
  type ListenerCredentials,
} from './callbacks.js';
import type { DaemonMetrics, RejectReason } from './metrics.js';
import type { RunPool } from './pool.js';
import type { Registration } from './daemon.js';
import type { Scheduler } from './scheduler.js';

export interface RouteContext {
  store: Store;
  playbooks: ReadonlyMap<string, Playbook>;
  pool: RunPool;
  commits: GroupCommit;
  creds: ListenerCredentials;
  metrics: DaemonMetrics;
  config: Config;
  log: Logger;
  accepting(): boolean;
  registrations(): Registration[];
  scheduler(): Scheduler | undefined;
}

export function routes(app: FastifyInstance, c: RouteContext): void {
  let storeFailureLoggedAt = 0;
  const reject = (
    reply: FastifyReply,
    status: number,
    reason: RejectReason,
    message: string,
    retryAfter?: number,
  ) => {
    c.metrics.callbacksRejected.inc({ reason });
    if (retryAfter !== undefined) reply.header('retry-after', String(retryAfter));
    return reply.code(status).send({ error: message });
  };
  const badRequest = (message: string) => Object.assign(new Error(message), { statusCode: 400 });
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
      if (status === 413) return reject(reply, 413, 'too_large', 'the body is larger than 1 MB');
      if (status === 400) return reject(reply, 400, 'malformed', err.message);
      if (status === 415) return reject(reply, 415, 'malformed', 'callbacks are application/json');
    }
    if (status >= 500) c.log.error('request failed', { url: req.url, error: err.message });
    return reply.code(status).send({ error: status >= 500 ? 'internal error' : err.message });
  });

  const callback = async (req: FastifyRequest, reply: FastifyReply, named: string | undefined) => {
    const body = req.body as { raw: Buffer; json: unknown } | undefined;
    if (!body || !body.json || typeof body.json !== 'object' || Array.isArray(body.json))
      return reject(reply, 400, 'malformed', 'a callback is a JSON object');
    const json = body.json as Json;
    const sig = req.headers[SIGNATURE_HEADER];
    if (!authentic(json, body.raw, typeof sig === 'string' ? sig : undefined, c.creds, named))
      return reject(reply, 401, 'unauthenticated', 'wrong callback credentials');
    const kind = kindOf(json);
    if (typeof json.requestId !== 'string' || !json.requestId || !kind)
      return reject(reply, 400, 'invalid', 'a callback has a requestId and a …Response member');
    if (!c.accepting()) return reply.code(503).header('retry-after', '5').send({ error: 'stopping' });
    if (c.store.inboxBacklog() + c.commits.waiting >= c.config.inboxLimit)
      return reject(reply, 503, 'overloaded', 'inbox full; send again later', 5);
    const service = named ?? serviceOf(kind);
    const message = toMessage(service, kind, json, new Date().toISOString());
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
        return reject(reply, 400, 'unstorable', e.message);
      }
      // Once per 10 s: a full disk fails every callback until someone makes room.
      if (Date.now() - storeFailureLoggedAt > 10_000) {
        storeFailureLoggedAt = Date.now();
        c.log.error('the inbox cannot store callbacks; answering 503', { error: cause });
      }
      return reject(reply, 503, 'store_failed', e.message, e.retryAfter);
    }
    (result === 'stored' ? c.metrics.callbacksReceived : c.metrics.callbacksDuplicated).inc({ service });
    return reply.code(200).send({ status: result });
  };
  app.post<{ Params: { service: string } }>('/callbacks/:service', (req, reply) =>
    callback(req, reply, req.params.service),
  );
  app.post('/callbacks', (req, reply) => callback(req, reply, undefined));

  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) =>
    c.accepting() ? { status: 'ready' } : reply.code(503).send({ status: 'stopping' }),
  );
  app.get('/metrics', async (_req, reply) =>
    reply.header('content-type', c.metrics.registry.contentType).send(await c.metrics.registry.metrics()),
  );
  app.get('/status', async () => ({
    playbooks: [...c.playbooks.values()].map((pb) => ({ name: pb.name, on: Object.keys(pb.on) })),
    inboxBacklog: c.store.inboxBacklog(),
    runs: { running: c.pool.running, queued: c.pool.queued },
    registrations: c.registrations(),
    schedules: c.scheduler()?.next() ?? [],
  }));
  app.get<{ Querystring: { playbook?: string; limit?: string } }>('/runs', async (req, reply) => {
    const limit = req.query.limit === undefined ? 50 : Number(req.query.limit);
    // Refused rather than bent: a limit read as another would list other runs than asked, silently.
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
      return reply
        .code(400)
        .send({ error: `limit must be an integer from 1 to 1000, got ${JSON.stringify(req.query.limit)}` });
    return c.store
      .listRuns({ ...(req.query.playbook ? { playbook: req.query.playbook } : {}), limit })
      .map(({ summary, event: _event, ...r }) => ({
        ...r,
        ...(summary ? { devices: summary.devices } : {}),
      }));
  });
  app.get<{ Params: { id: string } }>('/runs/:id', async (req, reply) => {
    const run = c.store.getRun(req.params.id);
    if (!run) return reply.code(404).send({ error: `no run ${req.params.id}` });
    return (
      run.summary ?? {
        runId: run.id,
        playbook: run.playbook,
        status: run.status,
        startedAt: run.startedAt,
        trigger: run.trigger,
      }
    );
  });
  app.post<{ Params: { name: string }; Body: { raw: Buffer; json: unknown } | undefined }>(
    '/playbooks/:name/runs',
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
      const pb = c.playbooks.get(req.params.name);
      if (!pb) return reply.code(404).send({ error: `no playbook ${req.params.name}` });
      if (!pb.on.manual)
        return reply.code(409).send({ error: `playbook ${pb.name} does not declare on.manual: true` });
      if (!c.accepting()) return reply.code(503).header('retry-after', '5').send({ error: 'stopping' });
      const given = ((req.body?.json as Json | undefined)?.inputs ?? {}) as Record<string, unknown>;
      let inputs: Json;
      try {
        inputs = coerceInputs(pb, given);
      } catch (e) {
        return reply.code(400).send({ error: (e as Error).message });
      }
      const run: RunRecord = {
        id: randomUUID(),
        playbook: pb.name,
        status: 'queued',
        trigger: { type: 'manual', by: 'http' },
        inputs,
        startedAt: new Date().toISOString(),
      };
      c.store.createRun(run);
      c.pool.submit(run);
      return reply.code(202).send({ runId: run.id, status: 'queued', url: `/runs/${run.id}` });
    },
  );
}
