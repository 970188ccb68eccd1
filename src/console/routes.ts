/**
 * The console (docs/console.md): the page at `/`, its files, and the JSON API it reads under `/console/api/`.
 * What it shows comes from the store (so that every replica on a shared database shows the same runs) and from
 * this daemon (its playbooks, schedules, rate budgets and callback counters), which hands it `ConsoleSources`.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthRefusal } from '../api/credentials.js';
import type { Logger } from '../log.js';
import type { Diagnostic } from '../playbook/diagnostics.js';
import type { Playbook } from '../playbook/schema.js';
import {
  DEVICE_OUTCOMES,
  ENDED,
  RUN_STATUSES,
  RUN_TRIGGERS,
  type DeviceOutcome,
  type RunRecord,
  type RunStatus,
  type Store,
} from '../store/store.js';
import { cancelTaker, cancelTakerText, liveHolder, ownerText } from '../store/lease.js';
import { deviceFilterProblem, filteredResults } from '../store/device-filter.js';
import {
  decodeCursor,
  devicePage,
  encodeCursor,
  latestOf,
  type DeviceFilter,
} from '../store/device-table.js';
import { liveView, shownSummary } from '../store/run-views.js';
import type { ConsoleAccess, Refusal } from './access.js';
import { Assets } from './assets.js';
import { RunsFeed } from './feed.js';
import { deviceHistoryRow, deviceRow, playbookView, runDetail, runRow } from './views.js';
import { ledgerCsv } from '../actions/report-table.js';
import { MASK, SECRET_KEY } from '../util/secrets.js';
import {
  BadParameter,
  integer,
  isoMs,
  onlyParameters,
  oneOf,
  refusingBadParameters,
  takesOnly,
  time,
  type Query,
} from '../util/query.js';

/** What the daemon tells the console of itself. */
export interface ConsoleSources {
  store: Store;
  access: ConsoleAccess;
  log: Logger;
  version: string;
  playbooks: ReadonlyMap<string, { playbook: Playbook; file: string; diagnostics: readonly Diagnostic[] }>;
  /** The next fire of each schedule of this daemon. */
  nextFires(): { playbook: string; next: string | undefined }[];
  runs(): { running: number; queued: number };
  /** Why this daemon sends no session login now (`/status`'s `logins.stopped`), if it does not. */
  loginsStopped?(): string | undefined;
  /**
   * The daemon's credentials refused, until it restarts or a fetched token is taken (`/status`'s `authRefused`),
   * if they are.
   */
  authRefused?(): AuthRefusal | undefined;
  /** Cancels a run this daemon executes or holds queued; false when it holds no such run. */
  cancel(runId: string): boolean;
  /** Whether this daemon executes the run or holds it queued. */
  holds(runId: string): boolean;
  /**
   * Starts a manual run of a playbook with the inputs of a request's JSON body (`{ "inputs": {...} }`): its id,
   * or the refusal (status and message), a body that says anything else among them.
   */
  startRun(name: string, body: unknown): Promise<{ runId: string } | { status: number; error: string }>;
  /** The callbacks this daemon received, found duplicate, and refused since it started. */
  callbackCounts(): Promise<{
    received: Record<string, number>;
    duplicated: Record<string, number>;
    rejected: Record<string, number>;
  }>;
  /** Each API area's budget as this daemon runs it. */
  rates(): {
    area: string;
    /** The area's whole budget (requests/s), and the rate this daemon runs at now: its share, lowered by 429s. */
    budget: number;
    rate: number;
    concurrency: number;
    inFlight: number;
    waiting: number;
    throttled: number;
    /** The time requests of the area waited for a slot or a start, all together, since the daemon started. */
    waitedSeconds: number;
    pausedUntil?: string;
  }[];
}

/** The query parameters of the runs listing, and of the device table's filter. */
const RUN_PARAMETERS = ['playbook', 'status', 'trigger', 'from', 'to', 'before', 'limit'];
const DEVICE_FILTERS = ['step', 'outcome', 'errorType', 'device'];

/** A filter of the run's devices that names a step or an error type the run cannot have: 400, naming what was meant. */
async function checkDeviceFilter(store: Store, run: RunRecord, filter: DeviceFilter): Promise<void> {
  const wrong = await deviceFilterProblem(store, run, filter);
  if (wrong) throw new BadParameter(`${wrong.member}: ${wrong.problem}`);
}

function deviceFilter(q: Record<string, string | undefined>): DeviceFilter {
  const outcome = oneOf<DeviceOutcome>('outcome', q.outcome, DEVICE_OUTCOMES);
  const { step, errorType, device } = q;
  return {
    ...(step ? { step } : {}),
    ...(outcome ? { outcome } : {}),
    ...(errorType ? { errorType } : {}),
    ...(device ? { device } : {}),
  };
}

export function registerConsole(app: FastifyInstance, c: ConsoleSources): { close(): void } {
  const assets = new Assets();
  const feed = new RunsFeed(c.store, (e) =>
    c.log.warn('console: reading the runs failed', { error: e.message }),
  );

  const refuse = (reply: FastifyReply, r: Refusal) => reply.code(r.status).send({ error: r.error });
  /** The hook of every API route that reads. */
  const reading = async (req: FastifyRequest, reply: FastifyReply) => {
    const r = c.access.readRefusal(req);
    if (r) return refuse(reply, r);
  };
  /** The hook of the page, its files, and signing in: refused only when the console is off. */
  const serving = async (_req: FastifyRequest, reply: FastifyReply) => {
    const r = c.access.pageRefusal();
    if (r) return refuse(reply, r);
  };
  const acting = async (req: FastifyRequest, reply: FastifyReply) => {
    const r = c.access.actRefusal(req);
    if (r) return refuse(reply, r);
  };
  /** A JSON read: `params` are the query parameters it takes, any other is refused (400). */
  const api = <P = Record<string, string>>(
    path: string,
    params: readonly string[],
    handler: (
      req: FastifyRequest<{ Params: P }>,
      reply: FastifyReply,
      query: Record<string, string | undefined>,
    ) => Promise<unknown>,
  ) =>
    app.get<{ Querystring: Query; Params: P }>(
      `/console/api${path}`,
      { onRequest: reading },
      async (req, reply) =>
        refusingBadParameters(reply, () => handler(req, reply, onlyParameters(req.query, params))),
    );

  // ── the page and its files ──
  const sendAsset = (req: FastifyRequest, reply: FastifyReply, a: ReturnType<Assets['file']>) => {
    if (!a) return reply.code(404).send({ error: 'no such file' });
    reply
      .header('etag', a.etag)
      .header('cache-control', 'no-cache')
      .header('x-content-type-options', 'nosniff');
    if (req.headers['if-none-match'] === a.etag) return reply.code(304).send();
    return reply.type(a.type).send(a.body);
  };
  app.get('/', { onRequest: serving }, async (req, reply) => {
    const { asset, csp } = assets.page();
    reply.header('content-security-policy', csp).header('referrer-policy', 'no-referrer');
    return sendAsset(req, reply, asset);
  });
  app.get('/favicon.ico', { onRequest: serving }, async (req, reply) =>
    sendAsset(req, reply, assets.file('favicon.svg')),
  );
  app.get<{ Params: { '*': string } }>('/console/assets/*', { onRequest: serving }, async (req, reply) =>
    sendAsset(req, reply, assets.file(req.params['*'])),
  );
  app.get<{ Params: { name: string } }>('/console/vendor/:name', { onRequest: serving }, async (req, reply) =>
    sendAsset(req, reply, assets.vendor(req.params.name)),
  );

  // ── access ──
  app.post<{ Body: { json?: { token?: unknown } } | undefined }>(
    '/console/api/session',
    { onRequest: serving },
    async (req, reply) => {
      const token = req.body?.json?.token;
      if (typeof token !== 'string' || !c.access.matches(token))
        return reply.code(401).send({ error: 'wrong console token' });
      c.access.startSession(reply);
      return reply.code(204).send();
    },
  );

  // ── reads ──
  api('/overview', [], async (req) => {
    const loginsStopped = c.loginsStopped?.();
    const authRefused = c.authRefused?.();
    return {
      version: c.version,
      store: c.store.replicas ? 'postgres' : 'sqlite',
      readNeedsToken: !c.access.readOpen,
      authenticated: c.access.authenticated(req),
      playbooks: c.playbooks.size,
      inboxBacklog: c.store.inboxBacklog(),
      runs: c.runs(),
      ...(loginsStopped ? { loginsStopped } : {}),
      ...(authRefused ? { authRefused } : {}),
    };
  });

  api('/runs', RUN_PARAMETERS, async (_req, _reply, q) => {
    const limit = integer('limit', q.limit, 1, 200, 50);
    const cursor = q.before === undefined ? undefined : decodeRunCursor(q.before);
    const status = oneOf<RunStatus>('status', q.status, RUN_STATUSES);
    const trigger = oneOf('trigger', q.trigger, RUN_TRIGGERS);
    const { playbook } = q;
    const from = time('from', q.from);
    const to = time('to', q.to);
    const runs = await c.store.listRuns({
      ...(playbook ? { playbook } : {}),
      ...(status ? { status } : {}),
      ...(trigger ? { trigger } : {}),
      ...(from ? { from } : {}),
      ...(to ? { to } : {}),
      ...(cursor ? { before: cursor } : {}),
      limit: limit + 1,
    });
    const page = runs.slice(0, limit);
    const last = page[page.length - 1];
    return {
      runs: page.map(runRow),
      ...(runs.length > limit && last ? { next: encodeRunCursor(last.startedAt, last.id) } : {}),
    };
  });

  app.get('/console/api/runs/stream', { onRequest: reading, preValidation: takesOnly() }, (req, reply) => {
    reply.hijack();
    reply.raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    reply.raw.write('retry: 2000\n\n');
    const stop = feed.watch((run) => reply.raw.write(`event: run\ndata: ${JSON.stringify(run)}\n\n`));
    // A comment now and then keeps proxies from closing an idle stream.
    const beat = setInterval(() => reply.raw.write(': keep-alive\n\n'), 15_000);
    beat.unref();
    req.raw.once('close', () => {
      clearInterval(beat);
      stop();
    });
  });

  api<{ id: string }>('/runs/:id', [], async (req, reply) => {
    const run = await c.store.getRun(req.params.id);
    if (!run) return reply.code(404).send({ error: `no run ${req.params.id}` });
    // A cancel asked of another process is not asked again; this daemon's own run can be cancelled again (a
    // second cancel stops its `finally`).
    const cancellable = !ENDED.has(run.status) && (!run.cancelRequested || c.holds(run.id));
    // Who cancels a run asked to cancel, as `fleetbook runs show` says it: its live holder, else a `serve`.
    const by = run.cancelRequested && !ENDED.has(run.status) ? await cancelTaker(c.store, run) : undefined;
    const cancelBy = by && {
      ...('holder' in by ? { holder: ownerText(by.holder) } : { serve: by.serve }),
      text: cancelTakerText(by, run.id),
    };
    // The process that holds a run not ended, as `fleetbook runs list` names it; none when its process stopped.
    const holder = ENDED.has(run.status) ? undefined : await liveHolder(c.store, run);
    const shown = await shownSummary(c.store, run);
    const live = shown ? {} : await liveView(c.store, run);
    const steps = shown?.steps ?? live.steps ?? [];
    return {
      run: runDetail(run, steps, live.planned),
      cancellable,
      ...(holder ? { heldBy: ownerText(holder) } : {}),
      ...(cancelBy ? { cancelBy } : {}),
    };
  });

  api<{ id: string }>('/runs/:id/devices', [...DEVICE_FILTERS, 'after', 'limit'], async (req, reply, q) => {
    const run = await c.store.getRun(req.params.id);
    if (!run) return reply.code(404).send({ error: `no run ${req.params.id}` });
    const filter = deviceFilter(q);
    await checkDeviceFilter(c.store, run, filter);
    const limit = integer('limit', q.limit, 1, 500, 50);
    const after = q.after === undefined ? undefined : decodeCursor(q.after);
    if (q.after !== undefined && !after)
      throw new BadParameter(`after is not a cursor of this listing: ${JSON.stringify(q.after)}`);
    const latest = latestOf(c.store, run.id, ENDED.has(run.status));
    const page = await devicePage(c.store, run.id, latest, filter, after, limit);
    return { devices: page.rows.map(deviceRow), ...(page.next ? { next: encodeCursor(page.next) } : {}) };
  });

  api<{ id: string }>('/runs/:id/devices.csv', DEVICE_FILTERS, async (req, reply, q) => {
    const run = await c.store.getRun(req.params.id);
    if (!run) return reply.code(404).send({ error: `no run ${req.params.id}` });
    const filter = deviceFilter(q);
    await checkDeviceFilter(c.store, run, filter);
    const found = run;
    const runId = run.id;
    const res = reply.raw;
    reply.hijack();
    res.writeHead(200, {
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="run-${run.id}-devices.csv"`,
    });
    // The rows of the table, as `runs show --csv` writes them (filteredResults, ledgerCsv), a page at a time: a
    // million rows are never in memory. A download given up is read no further; one of a run that went on
    // meanwhile with data the columns miss fails (the browser says the download failed, the log why).
    async function* rows() {
      for await (const page of filteredResults(c.store, found, filter)) {
        if (res.destroyed) return;
        yield page;
      }
    }
    try {
      await pipeline(Readable.from(ledgerCsv(rows)), res);
    } catch (e) {
      // A download the browser gave up is not a failure of the daemon's.
      if ((e as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE')
        c.log.warn('console: writing a CSV failed', { runId, error: (e as Error).message });
      res.destroy();
    }
  });

  api<{ id: string }>('/devices/:id', [], async (req) => {
    if (!req.params.id) throw new BadParameter('the device id is empty: /console/api/devices/{id}');
    return {
      deviceId: req.params.id,
      results: (await c.store.deviceHistory(req.params.id, 500)).map(deviceHistoryRow),
    };
  });

  api('/playbooks', [], async () => {
    const fires = c.nextFires();
    const out = [];
    for (const { playbook, file, diagnostics } of c.playbooks.values()) {
      const recent = await c.store.listRuns({ playbook: playbook.name, limit: 5 });
      out.push({
        ...playbookView(playbook, file, diagnostics),
        nextFires: fires
          .filter((f) => f.playbook === playbook.name && f.next)
          .map((f) => f.next as string)
          .sort(),
        recentRuns: recent.map(runRow),
      });
    }
    // The names of secrets (util/secrets.ts): the run form withholds the JSON typed under one from the tab's storage;
    // and what stands in a secret's place: the form knows a masked default edited by it.
    return { playbooks: out, secretName: SECRET_KEY.source, mask: MASK };
  });

  api('/callbacks', [], async () => {
    const [counts, recent] = await Promise.all([c.callbackCounts(), c.store.recentInbox(50)]);
    const services = [
      ...new Set([...Object.keys(counts.received), ...Object.keys(counts.duplicated)]),
    ].sort();
    return {
      backlog: c.store.inboxBacklog(),
      services: services.map((service) => ({
        service,
        received: counts.received[service] ?? 0,
        duplicates: counts.duplicated[service] ?? 0,
      })),
      rejected: Object.entries(counts.rejected).map(([reason, count]) => ({ reason, count })),
      recent: recent.map((m) => ({
        id: m.id,
        service: m.service,
        kind: m.kind,
        requestId: m.requestId,
        receivedAt: m.receivedAt,
        processed: m.processed,
      })),
    };
  });

  api('/rates', [], async () => ({ areas: c.rates() }));

  api('/charts/runs', ['hours'], async (_req, _reply, q) => {
    const hours = integer('hours', q.hours, 1, 720, 48);
    const start = new Date(Date.now() - (hours - 1) * 3_600_000);
    start.setUTCMinutes(0, 0, 0);
    const counts = await c.store.runsByHour(start.toISOString());
    const buckets = Array.from({ length: hours }, (_, i) => {
      const at = new Date(start.getTime() + i * 3_600_000).toISOString();
      return { at, ...Object.fromEntries(RUN_STATUSES.map((s) => [s, 0])) } as Record<
        string,
        number | string
      >;
    });
    const index = new Map(buckets.map((b, i) => [(b.at as string).slice(0, 13), i]));
    for (const r of counts) {
      const i = index.get(r.hour);
      if (i !== undefined) (buckets[i] as Record<string, number>)[r.status] = r.n;
    }
    return { hours, buckets };
  });

  // ── actions ──
  app.post<{ Params: { name: string }; Body: { json?: unknown } | undefined }>(
    '/console/api/playbooks/:name/runs',
    { onRequest: acting },
    async (req, reply) => {
      const started = await c.startRun(req.params.name, req.body?.json);
      if ('error' in started) return reply.code(started.status).send({ error: started.error });
      return reply.code(202).send(started);
    },
  );

  app.post<{ Params: { id: string } }>(
    '/console/api/runs/:id/cancel',
    { onRequest: acting },
    async (req, reply) => {
      const run = await c.store.getRun(req.params.id);
      if (!run) return reply.code(404).send({ error: `no run ${req.params.id}` });
      if (ENDED.has(run.status))
        return reply.code(409).send({ error: `run ${run.id} has ended (${run.status})` });
      if (c.cancel(run.id)) {
        c.log.info('run cancelled from the console', { runId: run.id });
        return reply.code(202).send({ status: 'cancelling' });
      }
      // Another process holds it (a replica, a `fleetbook run`), or none does: it cancels it at its next lease
      // renewal, or the `serve` that takes the run up does, before another step (cancelTaker: the run page says which).
      if (!(await c.store.requestCancel(run.id, 'cancelled from the console')))
        return reply.code(409).send({ error: `run ${run.id} has ended` });
      c.log.info('cancel of a run held by another process asked from the console', { runId: run.id });
      return reply.code(202).send({ status: 'cancel requested' });
    },
  );

  return { close: () => feed.stop() };
}

function encodeRunCursor(startedAt: string, id: string): string {
  return Buffer.from(JSON.stringify([startedAt, id])).toString('base64url');
}

function decodeRunCursor(text: string): { startedAt: string; id: string } {
  try {
    const v = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown;
    // Its time is a run's start: text that is no time compares with every start as text, and would list the
    // newest runs as if there were no cursor.
    if (
      Array.isArray(v) &&
      v.length === 2 &&
      typeof v[0] === 'string' &&
      isoMs(v[0]) !== undefined &&
      typeof v[1] === 'string'
    )
      return { startedAt: v[0], id: v[1] };
  } catch {
    // fall through
  }
  throw new BadParameter(`before is not a cursor of this listing: ${JSON.stringify(text)}`);
}
