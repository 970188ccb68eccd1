/**
 * `fleetbook serve`: the daemon. It loads and validates the playbooks, opens the store, listens for the
 * service's callbacks, matches each stored callback against the playbooks, fires the schedules, and runs what
 * they start in the runner pool. See src/daemon/ARCHITECTURE.md for the data flow and the durability rules.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { createClient, type ApiClient } from '../api/client.js';
import type { Config } from '../config.js';
import { ConfigError } from '../errors.js';
import { selectsEvent } from '../expressions/template.js';
import { silentLogger, type Logger } from '../log.js';
import { formatText } from '../playbook/diagnostics.js';
import { loadPlaybook } from '../playbook/load.js';
import type { Playbook, Step } from '../playbook/schema.js';
import { InProcessDeviceLocks } from '../runner/locks.js';
import { EventHub } from '../runner/events.js';
import { coerceInputs } from '../runner/runner.js';
import { parseDuration } from '../playbook/duration.js';
import { SqliteStore } from '../store/sqlite.js';
import type { InboxEvent, RunRecord, Store } from '../store/store.js';
import { playbookFiles } from '../util/files.js';
import { registerSecret } from '../util/secrets.js';
import { connect, type Target } from '../cli/connect.js';
import {
  GroupCommit,
  SIGNATURE_HEADER,
  authentic,
  kindOf,
  same,
  serviceOf,
  toMessage,
  type Json,
  type ListenerCredentials,
} from './callbacks.js';
import { DaemonMetrics, type RejectReason } from './metrics.js';
import { RunPool } from './pool.js';
import { Scheduler, type ScheduleEntry } from './scheduler.js';

export interface DaemonOptions {
  config: Config;
  /** A directory (searched for *.yaml, *.yml) or a file. */
  playbooks: string;
  logger?: Logger;
  /** Secrets for `${{ secrets.X }}` and the environment for `${{ env.X }}`. */
  secrets?: Record<string, string>;
  env?: Record<string, string>;
  /** How long SIGTERM lets running steps finish before interrupting them. @default 10000 */
  graceMs?: number;
  /** Polling interval of report status and poll fallbacks. */
  pollIntervalMs?: number;
}

export interface Registration {
  accountName: string;
  service: string;
  url: string;
  ok: boolean;
  error?: string;
}

export interface Daemon {
  /** `http://host:port` of the listener and the operations endpoints. */
  url: string;
  store: Store;
  pool: RunPool;
  /** The embedded emulator's base URL, when one was started. */
  emulatorUrl?: string;
  /** Stops accepting, lets running steps finish (or checkpoints them), and closes everything. */
  close(): Promise<void>;
}

/**
 * Loads every playbook of `path`; refuses the lot when any has an error, listing every error as
 * `file:line:col: message [rule]` (a ConfigError: the CLI exits 2).
 */
export async function loadPlaybooks(path: string): Promise<Map<string, Playbook>> {
  let files: string[];
  try {
    files = await playbookFiles(path);
  } catch {
    throw new ConfigError(`no such playbook file or directory: ${path}`);
  }
  const out = new Map<string, Playbook>();
  const problems: string[] = [];
  const where = new Map<string, string>();
  for (const file of files) {
    const r = loadPlaybook(readFileSync(file, 'utf8'), file);
    for (const d of r.diagnostics) if (d.severity === 'error') problems.push(formatText(d, r.source));
    if (!r.playbook) continue;
    const other = where.get(r.playbook.name);
    if (other) problems.push(`${file}: playbook name ${r.playbook.name} is also the name of ${other}`);
    where.set(r.playbook.name, file);
    out.set(r.playbook.name, r.playbook);
  }
  if (problems.length)
    throw new ConfigError(
      `${problems.length} error(s) in the playbooks of ${path}; not starting:\n${problems.join('\n')}`,
    );
  return out;
}

/** The callback services the playbooks react to or wait for. */
function servicesOf(playbooks: Iterable<Playbook>): Set<string> {
  const out = new Set<string>();
  const visit = (steps: Step[] | undefined): void => {
    for (const s of steps ?? []) {
      if ('wait' in s && typeof s.wait === 'object' && 'event' in s.wait) out.add(s.wait.event.service);
      if ('forEach' in s) visit(s.forEach.steps as Step[]);
      if ('parallel' in s) visit(s.parallel as Step[]);
      if (Array.isArray(s.onError)) visit(s.onError as Step[]);
    }
  };
  for (const pb of playbooks) {
    for (const c of callbacksOf(pb)) out.add(c.service);
    visit(pb.steps);
    visit(pb.finally);
  }
  return out;
}

function callbacksOf(pb: Playbook): { service: string; if?: string }[] {
  const c = pb.on.callback;
  return c === undefined ? [] : Array.isArray(c) ? c : [c];
}

function schedulesOf(pb: Playbook): ScheduleEntry[] {
  const s = pb.on.schedule;
  const list = s === undefined ? [] : Array.isArray(s) ? s : [s];
  return list.map((x, i) => ({
    key: `${pb.name}#${i}`,
    playbook: pb.name,
    ...x,
    missed: x.missed as ScheduleEntry['missed'],
  }));
}

export async function startDaemon(o: DaemonOptions): Promise<Daemon> {
  const { config } = o;
  const log = o.logger ?? silentLogger;
  const playbooks = await loadPlaybooks(o.playbooks);
  const [host, portText] = splitListen(config.listen);
  if (config.apiUrl && (!config.callbackUsername || !config.callbackPassword)) {
    throw new ConfigError(
      'FLEETBOOK_CALLBACK_USERNAME and FLEETBOOK_CALLBACK_PASSWORD are required with FLEETBOOK_API_URL: the listener refuses callbacks without the credentials it was registered with',
    );
  }
  let target: Target | undefined;
  let client: ApiClient | undefined;
  let store: Store | undefined;
  let app: FastifyInstance | undefined;
  let scheduler: Scheduler | undefined;
  try {
    target = await connect(config, log, { demoTriggers: true });
    if (target.emulator)
      log.info(
        'embedded emulator: each account has daily 200 KB data triggers (overuse-demo, upgrade-demo) whose callbacks drive the example playbooks',
      );
    const creds: ListenerCredentials = {
      // Embedded: credentials made up now, registered with the emulator below.
      username: config.callbackUsername ?? 'fleetbook',
      password: config.callbackPassword ?? registered(randomBytes(18).toString('base64url')),
      ...(config.callbackSecret
        ? { secret: config.callbackSecret }
        : target.emulator
          ? { secret: target.emulator.callbackSecret }
          : {}),
    };
    const st = new SqliteStore(config.state);
    store = st;
    const metrics: DaemonMetrics = new DaemonMetrics({
      backlog: () => st.inboxBacklog(),
      // Read on scrape only, once the pool exists.
      running: (): number => runPool.running,
      client: () => client,
    });
    client = createClient({
      ...target.options,
      logger: log,
      onResponse: (action, status) => metrics.apiCalls.inc({ action, status: String(status) }),
    });
    const events = new EventHub();
    const runPool: RunPool = new RunPool({
      playbooks,
      store: st,
      client,
      locks: new InProcessDeviceLocks(),
      events,
      logger: log,
      metrics,
      maxRuns: config.maxRuns,
      ...(o.secrets ? { secrets: o.secrets } : {}),
      ...(o.env ? { env: o.env } : {}),
      ...(o.pollIntervalMs
        ? { pollIntervalMs: o.pollIntervalMs }
        : target.emulator
          ? { pollIntervalMs: 250 }
          : {}),
    });
    const matcher = new Matcher(st, playbooks, runPool, events, log);
    const commits = new GroupCommit(st, (stored) => {
      if (stored) matcher.kick();
    });
    let accepting = true;
    app = Fastify({ bodyLimit: 1024 * 1024, logger: false, return503OnClosing: true });
    routes(app, {
      store: st,
      playbooks,
      pool: runPool,
      commits,
      creds,
      metrics,
      config,
      log,
      accepting: () => accepting,
      registrations: () => registrations,
      scheduler: () => scheduler,
    });
    await app.listen({ host, port: Number(portText) });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : Number(portText);
    const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    log.info('listening', { url, playbooks: [...playbooks.keys()] });

    // Runs a crash left unfinished resume first, then the callbacks stored and not yet processed.
    const unfinished = st.unfinishedRuns();
    if (unfinished.length) log.info('resuming unfinished runs', { runs: unfinished.length });
    for (const r of unfinished) runPool.submit(r);
    matcher.kick();

    let registrations: Registration[] = [];
    registrations = await register(client, target, config, url, creds, servicesOf(playbooks.values()), log);

    const entries = [...playbooks.values()].flatMap(schedulesOf);
    scheduler = new Scheduler({
      store: st,
      entries,
      logger: log,
      isRunning: (e) => runPool.isRunning(e.playbook, 'schedule'),
      makeRun: (e, at, reason) => ({
        id: randomUUID(),
        playbook: e.playbook,
        status: 'queued',
        trigger: { type: 'schedule', schedule: e.key, cron: e.cron, scheduledAt: at.toISOString(), reason },
        inputs: {},
        startedAt: new Date().toISOString(),
      }),
      started: (run) => runPool.submit(run),
    });
    scheduler.start();

    let closing: Promise<void> | undefined;
    const daemon: Daemon = {
      url,
      store: st,
      pool: runPool,
      ...(target.emulatorUrl ? { emulatorUrl: target.emulatorUrl } : {}),
      close: () =>
        (closing ??= (async () => {
          accepting = false;
          log.info('stopping: no new callbacks or runs; letting running steps finish');
          scheduler?.stop();
          matcher.stop();
          // The listener stays up through the grace period: /readyz says 503, callbacks get 503 + Retry-After.
          await runPool.stop(o.graceMs ?? parseDuration(config.shutdownGrace) ?? 10_000);
          await app?.close();
          await matcher.idle();
          st.close();
          await client?.close();
          await target?.close();
          log.info('stopped');
        })()),
    };
    return daemon;
  } catch (e) {
    scheduler?.stop();
    await app?.close();
    store?.close();
    await client?.close();
    await target?.close();
    throw e;
  }
}

function registered(secret: string): string {
  registerSecret(secret);
  return secret;
}

function splitListen(listen: string): [string, string] {
  const i = listen.lastIndexOf(':');
  return [listen.slice(0, i).replace(/^\[|\]$/g, '') || '127.0.0.1', listen.slice(i + 1)];
}

/**
 * Processes stored callback events in order: each is matched against every playbook's `on.callback`, and the
 * runs it starts are stored with the event marked processed, in one transaction; only then are they handed
 * to the pool. Every event also reaches the steps waiting for one.
 */
class Matcher {
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private lastId = 0;

  constructor(
    private readonly store: Store,
    private readonly playbooks: ReadonlyMap<string, Playbook>,
    private readonly pool: RunPool,
    private readonly events: EventHub,
    private readonly log: Logger,
  ) {}

  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain()
      .catch((e: unknown) => {
        // The event stays pending in the store; it is tried again on the next kick, or in a second.
        this.log.error('processing callbacks failed; retrying', { error: (e as Error).message });
        setTimeout(() => this.kick(), 1000).unref();
      })
      .finally(() => {
        this.running = undefined;
        if (this.again && !this.stopped) {
          this.again = false;
          this.kick();
        }
      });
  }

  stop(): void {
    this.stopped = true;
  }

  async idle(): Promise<void> {
    await this.running;
  }

  private async drain(): Promise<void> {
    for (;;) {
      // Memory stays bounded: events wait in the store while the pool has plenty queued.
      if (this.stopped) return;
      if (this.pool.queued > 1000) {
        setTimeout(() => this.kick(), 100).unref();
        return;
      }
      const batch = this.store.pendingInbox(100, this.lastId);
      if (!batch.length) return;
      // The batch is processed in one transaction; only once it is committed do its runs start.
      const matched = batch.map((ev) => ({ ev, eventId: ev.id, runs: this.match(ev) }));
      const started = this.store.completeInbox(matched);
      for (const { ev, runs } of matched) {
        this.lastId = ev.id;
        this.log.info('callback processed', {
          service: ev.service,
          kind: ev.kind,
          requestId: ev.requestId,
          runs: runs.map((r) => ({ runId: r.id, playbook: r.playbook })),
        });
        this.events.publish(ev.service, ev.payload);
      }
      for (const r of started) this.pool.submit(r);
      // Lets the listener and the runs have the event loop between batches.
      await new Promise((r) => setImmediate(r));
    }
  }

  /** The runs an event starts: one per playbook whose `on.callback` matches it. */
  private match(ev: InboxEvent): RunRecord[] {
    const runs: RunRecord[] = [];
    const payload = ev.payload as Json;
    for (const pb of this.playbooks.values()) {
      const hit = callbacksOf(pb).some(
        (c) => c.service === ev.service && (c.if === undefined || selectsEvent(c.if, { event: payload })),
      );
      if (!hit) continue;
      runs.push({
        id: randomUUID(),
        playbook: pb.name,
        status: 'queued',
        trigger: {
          type: 'callback',
          service: ev.service,
          kind: ev.kind,
          requestId: ev.requestId,
          inboxId: ev.id,
        },
        inputs: {},
        event: payload,
        startedAt: new Date().toISOString(),
      });
    }
    return runs;
  }
}

/** Registers the listener with the service for the configured accounts (all of the emulator's, embedded). */
async function register(
  client: ApiClient,
  target: Target,
  config: Config,
  url: string,
  creds: ListenerCredentials,
  services: Set<string>,
  log: Logger,
): Promise<Registration[]> {
  const accounts = target.emulator ? target.emulator.accountNames() : (config.callbackAccounts ?? []);
  const base = target.emulator ? url : (config.callbackUrl ?? url);
  const out: Registration[] = [];
  if (!accounts.length || !services.size) return out;
  for (const accountName of accounts) {
    for (const service of services) {
      const at = `${base.replace(/\/$/, '')}/callbacks/${service}`;
      try {
        if (service === 'Location')
          await client.callByName('locationCallbacks.register', { accountName, name: 'Location', url: at });
        else
          await client.callByName('callbacks.register', {
            accountName,
            name: service,
            url: at,
            username: creds.username,
            password: creds.password,
          });
        out.push({ accountName, service, url: at, ok: true });
      } catch (e) {
        out.push({ accountName, service, url: at, ok: false, error: (e as Error).message });
        log.error('callback registration failed', { accountName, service, error: (e as Error).message });
      }
    }
  }
  log.info('callback listener registered', {
    accounts: accounts.length,
    services: [...services],
    failed: out.filter((r) => !r.ok).length,
  });
  return out;
}

interface RouteContext {
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

function routes(app: FastifyInstance, c: RouteContext): void {
  const reject = (reply: FastifyReply, status: number, reason: RejectReason, message: string) => {
    c.metrics.callbacksRejected.inc({ reason });
    return reply.code(status).send({ error: message });
  };
  // The raw body is kept: Location messages are signed over its exact bytes.
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => {
    try {
      done(null, { raw: body, json: JSON.parse((body as Buffer).toString('utf8')) as unknown });
    } catch {
      const err = new Error('the body is not valid JSON') as Error & { statusCode: number };
      err.statusCode = 400;
      done(err, undefined);
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
    if (c.store.inboxBacklog() + c.commits.waiting >= c.config.inboxLimit) {
      c.metrics.callbacksRejected.inc({ reason: 'overloaded' });
      return reply.code(503).header('retry-after', '5').send({ error: 'inbox full; send again later' });
    }
    const service = named ?? serviceOf(kind);
    const result = await c.commits.add(toMessage(service, kind, json, new Date().toISOString()));
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
