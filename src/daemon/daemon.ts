/**
 * `fleetbook serve`: the daemon. It loads and validates the playbooks, opens the store, listens for the
 * service's callbacks, matches each stored callback against the playbooks, fires the schedules, and runs what
 * they start in the runner pool. See src/daemon/ARCHITECTURE.md for the data flow and the durability rules.
 */
import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { engineSettings } from '../actions/settings.js';
import { createClient, type ApiClient } from '../api/client.js';
import { unsetSecrets, type Config } from '../config.js';
import { checkListenerCredentials, connect, onEmbeddedEmulator, type Target } from '../connect.js';
import { ConfigError } from '../errors.js';
import { setExpressionBudget } from '../expressions/cel.js';
import { silentLogger, type Logger } from '../log.js';
import { ConsoleAccess } from '../console/access.js';
import { registerConsole } from '../console/routes.js';
import { MAX_PARAM_LENGTH, answerUnrouted, frameworkErrors } from './unrouted.js';
import type { Playbook } from '../playbook/schema.js';
import { StoreDeviceLocks } from '../runner/locks.js';
import { heldWebhooks } from '../runner/held-webhooks.js';
import { planOf } from '../runner/plan.js';
import { secretsStillRead } from '../runner/resume-secrets.js';
import { CarrierConfirmations } from './confirmations.js';
import { parseDuration } from '../playbook/duration.js';
import { RateShares } from '../rate/shares.js';
import { LOGINS_IN_DOUBT, logAuthRefusal } from '../api/credentials.js';
import { byUser } from '../api/login-count.js';
import { Lease } from '../store/lease.js';
import { openStore } from '../store/open.js';
import type { InboxEvent, RunRecord, Store } from '../store/store.js';
import { registerSecret } from '../util/secrets.js';
import { GroupCommit, type ListenerCredentials } from './callbacks.js';
import { Matcher, callbacksOf } from './matcher.js';
import { DaemonMetrics } from './metrics.js';
import { RunPool } from './pool.js';
import { consoleSources } from './console-sources.js';
import { routes, type Readiness } from './routes.js';
import { Scheduler, scheduledRun, schedulesOf } from './scheduler.js';
import { runsForFires, unfinishedScheduled } from './fire-time.js';
import { LargeRuns } from './large-runs.js';
import { Pruner } from './retention.js';
import { LateConfirmations } from './late-confirmations.js';
import { StoredEvents } from './stored-events.js';
import { playbookOfRun, savePlaybookVersions } from './versions.js';
import { LoadedPlaybooks, loadRunnableSet, sayWarnings } from './playbook-set.js';
import { Reloader, type ReloadOutcome } from './reload.js';
import { Registrations } from './registrations.js';
import { NO_ROUTE_SCHEMAS } from '../util/no-route-schemas.js';

/** What `/readyz` says the start waits for while it registers the callback listener. */
const REGISTERING = 'callback registrations';

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
  /** Where `config.state` came from, for the messages that name the state file (config.ts stateOrigin). */
  stateOrigin?: string;
  /**
   * Watch the playbooks' files, and reload them when one changes (`reload` works either way).
   * @default true
   */
  watch?: boolean;
  /** Polling interval of report status and poll fallbacks. */
  pollIntervalMs?: number;
  /**
   * The daemon lost the ownership of its store (its lease was not renewed in time and may have been taken over):
   * it has stopped acting and closes itself; the process should exit.
   */
  onFatal?: (error: Error) => void;
  /**
   * A stop asked while the daemon starts (SIGTERM before the start is over): the registrations under way are
   * given up (each is made again at the next start) and no schedule is started, so that the start ends soon and
   * `close` stops the daemon as after any start.
   */
  stopping?: AbortSignal;
}

export interface Daemon {
  /** `http://host:port` of the listener and the operations endpoints. */
  url: string;
  store: Store;
  pool: RunPool;
  /** The embedded emulator's base URL, when one was started. */
  emulatorUrl?: string;
  /**
   * Reads and checks the playbooks again, as at start, and swaps them in; a set with an error is refused whole,
   * logged in one line, and the daemon keeps the set it has. What `serve` does on SIGHUP.
   */
  reload(): Promise<ReloadOutcome>;
  /**
   * Stops accepting, lets running steps finish for `graceMs` (the configured grace by default), interrupts the
   * others (they resume at the next start), and closes everything.
   */
  close(graceMs?: number): Promise<void>;
}

/** The callback services the playbooks react to, wait for, or confirm device-state actions by. */
function servicesOf(playbooks: Iterable<Playbook>): Set<string> {
  const out = new Set<string>();
  for (const pb of playbooks) {
    for (const c of callbacksOf(pb)) out.add(c.service);
    for (const s of planOf(pb).services) out.add(s);
  }
  return out;
}

export async function startDaemon(o: DaemonOptions): Promise<Daemon> {
  const { config } = o;
  const log = o.logger ?? silentLogger;
  // Before any expression is evaluated: the filters, keys and steps of this daemon all run on this budget.
  setExpressionBudget(config.expressionBudget);
  // A reload swaps the set this object reads: everything below holds it, not a set of its own.
  const set = await loadRunnableSet(o.playbooks, o.secrets ?? {});
  sayWarnings(set, o.playbooks, log);
  const playbooks = new LoadedPlaybooks(set);
  // A run that names a secret not set would fail at that step, after the steps before it acted.
  const unsetOf = (pb: Playbook) => unsetSecrets(planOf(pb).secrets, o.secrets ?? {});
  // A wrong FLEETBOOK_WEBHOOK_ALLOW entry stops the start here, as a ConfigError.
  const engine = engineSettings({ ...config, embedded: onEmbeddedEmulator(config) });
  const [host, portText] = splitListen(config.listen);
  checkListenerCredentials(config);
  let target: Target | undefined;
  let client: ApiClient | undefined;
  let store: Store | undefined;
  let lease: Lease | undefined;
  let app: FastifyInstance | undefined;
  let scheduler: Scheduler | undefined;
  let shares: RateShares | undefined;
  let registrations: Registrations | undefined;
  let reloader: Reloader | undefined;
  try {
    // The store is owned before anything reaches the service: a second daemon on the same file stops here,
    // before it registers its listener in place of the first one's.
    const st = await openStore(config.state, o.stateOrigin ? { origin: o.stateOrigin } : {});
    store = st;
    const largeRuns = new LargeRuns(st, log);
    // What the lease's callbacks reach, once it exists.
    const started: { daemon?: Daemon; pool?: RunPool; matcher?: Matcher } = {};
    const owned = await Lease.acquire({
      store: st,
      role: 'daemon',
      // One daemon per SQLite file; replicas share a PostgreSQL database.
      exclusive: !st.replicas,
      leaseMs: parseDuration(config.lease) ?? 15_000,
      onLost: (e) => {
        log.error('stopping: this daemon no longer holds its lease on the store', { error: e.message });
        void started.daemon?.close(0);
        o.onFatal?.(e);
      },
      // The runs and the callbacks of owners that have gone (a `fleetbook run` or a replica killed) are taken up
      // as they are found.
      onRenew: () => {
        // A cancel asked by another process (another replica's console, `fleetbook runs cancel`).
        void st
          .cancelRequests(owned.id)
          .then((asked) => started.pool?.cancelRequested(asked))
          .catch((e: unknown) =>
            log.warn('reading the cancels asked of this daemon failed; retrying at the next renewal', {
              error: (e as Error).message,
            }),
          );
        void adoptOrphans().catch((e: unknown) =>
          log.warn('taking up the work of gone owners failed; retrying at the next renewal', {
            error: (e as Error).message,
          }),
        );
        void largeRuns.sweep(Date.now()).catch((e: unknown) =>
          log.warn('looking for large runs to group failed; retrying at the next renewal', {
            error: (e as Error).message,
          }),
        );
      },
    });
    const adoptOrphans = async () => {
      const { pool, matcher } = started;
      if (!pool || !matcher) return;
      for (const r of await st.claimRuns(owned.id, undefined, Date.now()))
        pool.submit(r, await playbookOfRun(r, playbooks, st, log));
      await matcher.claimOrphans();
    };
    lease = owned;
    // Before any run of them is created: a run resumed after its playbook changed goes on with its own version.
    await savePlaybookVersions(st, playbooks.values());
    target = await connect(config, log, { demoTriggers: true });
    if (target.emulator)
      log.info(
        'embedded emulator: each account has daily 200 KB data triggers (overuse-demo, upgrade-demo) whose callbacks drive the example playbooks',
      );
    // Information, not a warning: the safe default at work, and how to change it. Said again of a playbook a
    // reload brings that would send webhooks, not of those it was said of.
    const heldSaid = new Set<string>();
    const sayHeld = (set: Iterable<Playbook>) => {
      const held = heldWebhooks(engine.webhooks, set, o.secrets ?? {}, o.env ?? {}, heldSaid);
      if (held) log.info(held.line, { playbooks: held.playbooks });
    };
    sayHeld(playbooks.values());
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
    const metrics: DaemonMetrics = new DaemonMetrics({
      backlog: () => st.inboxBacklog(),
      // Read on scrape only, once the pool exists.
      running: (): number => started.pool?.running ?? 0,
      client: () => client,
      registrationsFailing: () => registrations?.failing() ?? 0,
      reloadRefused: () => reloader?.refusal() !== undefined,
    });
    client = createClient({
      ...target.options,
      logger: log,
      onResponse: (action, status) => metrics.apiCalls.inc({ action, status: String(status) }),
      // A mutation leaves only while the lease holds: frozen past it, this daemon sends nothing more.
      beforeMutation: () => owned.check(),
      // Counted with the logins of every process on the store (the embedded emulator is this process's own).
      ...(target.emulator ? {} : { logins: st.logins }),
      // Once as it stops; `/status` says so until it logs in again.
      onLoginStop: (e) => log.error('session logins stopped', { error: e.message }),
      // Once as the credentials are refused, in /status's words, and once as a fetched token is taken again.
      onAuthRefused: logAuthRefusal(log),
    });
    // Each API area's budget is shared by every process on the store: this one runs at its share.
    shares = new RateShares({
      owner: owned.id,
      board: st.rates,
      areas: client.areas,
      onError: (e) => log.warn('exchanging the shared rate budgets failed; retrying', { error: e.message }),
    });
    // One daemon owns a SQLite file: it keeps the whole budget, and starts at once after a restart.
    if (st.replicas) shares.start();
    const rates = shares;
    const events = new StoredEvents(st);
    const confirmations = new CarrierConfirmations(st);
    const pollIntervalMs = o.pollIntervalMs || target.pollIntervalMs;
    const pool = new RunPool({
      playbooks,
      version: (v) => playbooks.version(v),
      services: {
        client,
        store: st,
        locks: new StoreDeviceLocks(st, owned.id),
        events,
        confirmations,
        logger: log,
        engine,
        owner: owned.id,
        ...(o.secrets ? { secrets: o.secrets } : {}),
        ...(o.env ? { env: o.env } : {}),
        ...(pollIntervalMs ? { pollIntervalMs } : {}),
      },
      metrics,
      maxRuns: config.maxRuns,
      largeRuns,
    });
    started.pool = pool;
    const matcher = new Matcher({
      store: st,
      playbooks,
      pool,
      log,
      metrics,
      owner: owned.id,
    });
    // A message is handed to the waiting steps and the confirming runs as soon as it is on disk, not once the
    // matcher reaches it: the matcher holds back while the run queue is full, and the runs that would drain the
    // queue may be the ones waiting for these messages.
    started.matcher = matcher;
    const publish = (stored: readonly InboxEvent[]) => {
      for (const m of stored) {
        events.publish(m.service, m.payload);
        confirmations.publish(m);
      }
    };
    const late = new LateConfirmations(st, log, (n) => {
      for (const outcome of ['succeeded', 'failed'] as const)
        if (n[outcome]) metrics.lateOutcomes.inc({ outcome }, n[outcome]);
    });
    const commits = new GroupCommit(st, owned.id, (stored) => {
      publish(stored);
      late.offer(stored);
      matcher.offer(stored);
      matcher.kick();
    });
    // Replicas: the callbacks the load balancer gave another replica reach this one's waits and confirmations.
    const unwatch = st.watchInbox(owned.id, publish);
    let accepting = true;
    // What the start still does once the daemon listens: `/readyz` answers 503 until it is over.
    let startingFor: string | undefined = 'the runs to resume and the callbacks stored';
    // A request that has not arrived whole in time is answered 408 and its connection closed: a sender that
    // stalls mid-body would otherwise hold its share of the bytes read unauthenticated (routes.ts) for as long
    // as it keeps the connection open. Node cuts a request off at the larger of the two limits (headers: 60 s
    // by default), and looks for such requests at an interval: here a quarter of the limit.
    const requestTimeout = parseDuration(config.requestTimeout) as number;
    app = Fastify({
      schemaController: NO_ROUTE_SCHEMAS,
      bodyLimit: 1024 * 1024,
      routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
      frameworkErrors,
      logger: false,
      return503OnClosing: true,
      requestTimeout,
      http: { headersTimeout: requestTimeout, connectionsCheckingInterval: Math.ceil(requestTimeout / 4) },
    });
    answerUnrouted(app, () => metrics.callbacksRejected.inc({ reason: 'no_route' }));
    routes(app, {
      store: st,
      playbooks,
      pool,
      commits,
      owner: owned.id,
      creds,
      metrics,
      config,
      log,
      accepting: () => accepting,
      readiness: (): Readiness => {
        if (!accepting || o.stopping?.aborted) return { status: 'stopping' };
        if (startingFor)
          return {
            status: 'starting',
            waitingFor: startingFor,
            ...(registrations && startingFor === REGISTERING
              ? { registrations: registrations.progress() }
              : {}),
          };
        const failing = registrations?.failing() ?? 0;
        return { status: 'ready', ...(failing ? { registrationsFailing: failing } : {}) };
      },
      registrations: () => registrations?.status() ?? [],
      reloadRefused: () => reloader?.refusal(),
      scheduler: () => scheduler,
      // Only shares are worth telling: alone on a SQLite file, the process keeps every budget whole.
      rates: () => (st.replicas ? rates.status() : undefined),
      authRefused: () => client?.authRefused,
      logins: async () => {
        const stopped = client?.loginStopped?.message;
        return { ...(stopped ? { stopped } : {}), counted: byUser(await st.logins.list(), LOGINS_IN_DOUBT) };
      },
    });
    const { access, madeUp } = ConsoleAccess.of(config.consoleToken, host);
    if (madeUp) registerSecret(access.token);
    const consoleRoutes = registerConsole(
      app,
      consoleSources({
        store: st,
        pool,
        owner: owned.id,
        playbooks,
        access,
        log,
        metrics,
        client,
        accepting: () => accepting,
        scheduler: () => scheduler,
      }),
    );
    await app.listen({ host, port: Number(portText) });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : Number(portText);
    const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    log.info('listening', { url, playbooks: [...playbooks.keys()] });
    if (madeUp)
      // The made-up token is a secret the log would mask: the console's address is written as it is.
      process.stderr.write(`fleetbook serve: console at ${url}/#token=${access.token}\n`);
    else if (!access.token)
      log.warn(
        'the console is off: the daemon listens beyond loopback and FLEETBOOK_CONSOLE_TOKEN is not set',
      );
    else log.info('console', { url: `${url}/` });

    // Runs a crash left unfinished resume first (those of a live `fleetbook run` are its own), then the
    // callbacks stored and not yet processed.
    const unfinished = await st.claimRuns(owned.id, undefined, Date.now());
    if (unfinished.length) log.info('resuming unfinished runs', { runs: unfinished.length });
    // One after the other: the runs of one kept version then share its definition, read and planned once.
    const resumes: { r: RunRecord; pb: Playbook | undefined }[] = [];
    for (const r of unfinished) resumes.push({ r, pb: await playbookOfRun(r, playbooks, st, log) });
    // A run goes on with its own version, which may read a secret the loaded playbooks do not: as for those,
    // the daemon does not start rather than fail the run halfway (the next start resumes it). Only what the run
    // can still evaluate counts: a secret only the steps it finished read is not needed (resume-secrets.ts).
    const unsetForRuns: string[] = [];
    for (const { r, pb } of resumes) {
      if (!pb || !unsetOf(pb)) continue;
      const checkpoints = r.status === 'queued' ? new Map<string, unknown>() : await st.loadSteps(r.id);
      const why = unsetSecrets(secretsStillRead(planOf(pb), checkpoints), o.secrets ?? {});
      if (why)
        unsetForRuns.push(`run ${r.id}: playbook ${r.playbook} (version ${r.version ?? 'unknown'}) ${why}`);
    }
    if (unsetForRuns.length)
      throw new ConfigError(
        `runs to resume cannot go on; not starting:\n${unsetForRuns.join('\n')}\nSet each variable, or end such a run without resuming it: fleetbook runs cancel ID`,
      );
    for (const { r, pb } of resumes) pool.submit(r, pb);
    const waiting = await matcher.claimOrphans();
    if (waiting) log.info('processing stored callbacks', { callbacks: waiting });
    else matcher.kick();

    registrations = new Registrations({
      client: client as ApiClient,
      target: target as Target,
      config,
      url,
      creds,
      log,
      ...(o.stopping ? { stopping: o.stopping } : {}),
      onRegistered: (r) => {
        if (r.service === 'CarrierService') confirmations.listenFor(r.accountName);
      },
    });
    const listeners = registrations;
    startingFor = REGISTERING;
    await listeners.add(servicesOf(playbooks.values()));
    startingFor = 'the schedules';

    scheduler = new Scheduler({
      store: st,
      entries: [...playbooks.values()].flatMap(schedulesOf),
      logger: log,
      // The store knows the runs of the other replicas (and the backfills); this pool also those it holds and has
      // not yet started. Read as the scheduler takes them: it stops at the first that holds the fire back.
      unfinished: async function* (e) {
        yield* unfinishedScheduled(st, e.playbook);
        yield* pool.unfinished(e.playbook, 'schedule');
      },
      makeRun: (e, at, reason, through) =>
        scheduledRun(e, playbooks.get(e.playbook) as Playbook, at, reason, {
          owner: owned.id,
          now: Date.now(),
          ...(through ? { through } : {}),
        }),
      started: (run) => pool.submit(run),
      skipped: (e) => metrics.schedulesSkipped.inc({ playbook: e.playbook }),
      ranAlready: (e, times) => runsForFires(st, e, times),
    });
    // Stopping already: its missed runs wait for the next start, rather than begin only to be interrupted.
    if (!o.stopping?.aborted) await scheduler.start();
    const sched = scheduler;
    const reload = new Reloader({
      path: o.playbooks,
      playbooks,
      secrets: o.secrets ?? {},
      store: st,
      log,
      swapped: async (set) => {
        const loaded = [...set];
        sayHeld(loaded);
        await sched.update(loaded.flatMap(schedulesOf));
        await listeners.add(servicesOf(loaded));
      },
    });
    reloader = reload;
    const unwatchPlaybooks = o.watch === false ? () => undefined : reload.watch();
    const keepMs = config.retention === undefined ? undefined : parseDuration(config.retention);
    const pruner = keepMs ? new Pruner(st, keepMs, log, () => sched.next().map((e) => e.key)) : undefined;
    pruner?.start();
    late.start();

    let closing: Promise<void> | undefined;
    const daemon: Daemon = {
      url,
      store: st,
      pool,
      ...(target.emulatorUrl ? { emulatorUrl: target.emulatorUrl } : {}),
      reload: () => reload.reload('SIGHUP'),
      close: (graceMs?: number) =>
        (closing ??= (async () => {
          accepting = false;
          log.info('stopping: no new callbacks or runs; letting running steps finish');
          unwatchPlaybooks();
          await reload.close();
          scheduler?.stop();
          await listeners.stop();
          matcher.stop();
          // The listener stays up through the grace period: /readyz says 503, callbacks get 503 + Retry-After.
          await pool.stop(graceMs ?? o.graceMs ?? parseDuration(config.shutdownGrace) ?? 10_000);
          consoleRoutes.close();
          await app?.close();
          await matcher.idle();
          unwatch();
          await pruner?.stop();
          await late.stop();
          await rates.stop();
          // Interrupted runs stay unfinished, free for the next start to resume.
          await owned.release();
          await st.close();
          await client?.close();
          await target?.close();
          log.info('stopped');
        })()),
    };
    started.daemon = daemon;
    startingFor = undefined;
    return daemon;
  } catch (e) {
    scheduler?.stop();
    await registrations?.stop();
    await app?.close();
    await shares?.stop();
    await lease?.release();
    await store?.close();
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
