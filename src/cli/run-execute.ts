/**
 * `fleetbook run` once its checks passed (run.ts), and `fleetbook runs resume` (runs-resume.ts): the store, the
 * service (or the embedded emulator), the lease, the run and its summary. Loaded only then, so that a run its
 * checks refuse loads none of the engine.
 */
import { engineSettings } from '../actions/settings.js';
import { createClient } from '../api/client.js';
import { loadConfig, stateOrigin } from '../config.js';
import { checkCredentials, connect, onEmbeddedEmulator } from '../connect.js';
import { setExpressionBudget } from '../expressions/cel.js';
import { createLogger, type Logger } from '../log.js';
import type { Playbook } from '../playbook/schema.js';
import { parseDuration } from '../playbook/duration.js';
import { startRun, type NewRun, type RunRequest } from '../runner/factory.js';
import { heldWebhooksNotice } from '../runner/held-webhooks.js';
import { StoreDeviceLocks } from '../runner/locks.js';
import { Interrupted, type Progress } from '../runner/runner.js';
import { unpolledWaits, unreachable } from '../runner/wait.js';
import { RateShares } from '../rate/shares.js';
import { Lease, liveHolder, liveOwners, ownerText } from '../store/lease.js';
import { openStore } from '../store/open.js';
import { everyStep } from '../store/run-views.js';
import { ENDED, type RunRecord, type RunSummary, type Store } from '../store/store.js';
import { envForExpressions } from './environment.js';
import type { RunFlags } from './run.js';
import { formatSummary } from './runs.js';

/** What `executeRun` executes: a new run, or one in the store that no live process holds, taken up here. */
export type RunStart = NewRun | { resume: RunRecord };

/**
 * Runs `pb` as `start` says, with the `secrets` its checks read from the environment, and prints its summary:
 * the exit code, 0 when the run succeeded. A run to resume is claimed once this process holds its lease: one that
 * another process took up, or that ended, in the meantime is said, and left to it (1).
 */
export async function executeRun(
  pb: Playbook,
  start: RunStart,
  flags: RunFlags,
  secrets: Record<string, string>,
): Promise<number> {
  const env = envForExpressions(process.env);
  const config = loadConfig(process.env, flags.state ? { state: flags.state } : {});
  setExpressionBudget(config.expressionBudget);
  const engine = engineSettings({ ...config, embedded: onEmbeddedEmulator(config) });
  const tty = Boolean(process.stderr.isTTY) && !flags.json;
  const logger = createLogger({ level: tty ? 'warn' : config.logLevel });
  // A dry run plans its waits: it never reaches one.
  if (!flags.dryRun)
    for (const w of unpolledWaits(pb))
      logger.warn(`step \`${w.step}\` will fail when reached: ${unreachable(w.service)}`, w);
  // Credentials that cannot reach the service record no run: refused before the store is opened (or created).
  checkCredentials(config);
  // Opened before the embedded emulator starts: a state file that cannot be opened (exit 2) would otherwise leave
  // the emulator's server holding the process open.
  const store = await openStore(config.state, { origin: stateOrigin(process.env, flags) });
  const target = await connect(config, logger);
  const notice = flags.dryRun ? undefined : heldWebhooksNotice(engine.webhooks, [pb], secrets, env);
  // On a terminal the log shows warnings only: the line is written as the CLI's own, not dropped.
  if (notice) {
    if (tty) process.stderr.write(`fleetbook: ${notice}\n`);
    else logger.info(notice);
  }
  // A mutation leaves only while the lease holds: frozen past it, this process sends nothing more.
  const held: { lease?: Lease } = {};
  const client = createClient({
    ...target.options,
    logger,
    beforeMutation: () => held.lease?.check(),
    // The service's logins are counted with those of every process on the store; the embedded emulator is this
    // process's own.
    ...(target.emulator ? {} : { logins: store.logins }),
  });
  const controller = new AbortController();
  // Ends the `finally` of the cancelled run (RunOptions.stop).
  const stop = new AbortController();
  // This run is this process's: a daemon on the same state file neither adopts it nor acts on its devices
  // while the lease holds. Lost (the process froze past it), the run stops where it is, unfinished.
  const lease = await Lease.acquire({
    store,
    role: 'run',
    exclusive: false,
    leaseMs: parseDuration(config.lease) ?? 15_000,
    onLost: (e) => {
      controller.abort(new Interrupted(e.message));
      stop.abort(e);
    },
    // A cancel asked by another process (`fleetbook runs cancel`, a daemon's console): as a first Ctrl-C.
    onRenew: () =>
      void store.cancelRequests(lease.id).then(
        ([asked]) => {
          if (asked && !controller.signal.aborted) controller.abort(new Error(asked.reason));
        },
        (e: unknown) =>
          logger.warn('reading the cancels asked of this run failed', { error: (e as Error).message }),
      ),
  });
  held.lease = lease;
  if (!('resume' in start)) await sayLeft(store, pb.name, logger);
  // The API areas' budgets are shared with the other processes on the store (a daemon, replicas).
  const shares = new RateShares({
    owner: lease.id,
    board: store.rates,
    areas: client.areas,
    onError: (e) => logger.warn('exchanging the shared rate budgets failed; retrying', { error: e.message }),
  });
  if (store.replicas) shares.start();
  // The progress bar is for a person at a terminal: off one, its module is never loaded.
  const cliProgress = tty ? (await import('cli-progress')).default : undefined;
  const bar = cliProgress
    ? new cliProgress.SingleBar(
        {
          format: ' {bar} {value}/{total} devices | {calls} calls | {errors} errors | {step}',
          hideCursor: true,
        },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  bar?.start(0, 0, { calls: 0, errors: 0, step: '' });
  // A signal cancels the run, whose `finally` then runs; a second one stops that too; a third ends the process.
  const onSignal = () => {
    if (!controller.signal.aborted) return controller.abort(new Error('cancelled by signal'));
    stop.abort(new Error('stopped by a second signal'));
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let summary: RunSummary;
  try {
    const services = {
      client,
      store,
      logger,
      engine,
      owner: lease.id,
      locks: new StoreDeviceLocks(store, lease.id),
      secrets,
      env,
      ...(target.pollIntervalMs ? { pollIntervalMs: target.pollIntervalMs } : {}),
    };
    const control = {
      signal: controller.signal,
      stop: stop.signal,
      ...(bar
        ? {
            onProgress: (p: Progress) => {
              bar.setTotal(Math.max(p.devicesTotal, 1));
              bar.update(p.devicesDone, { calls: p.calls, errors: p.errors, step: p.step });
            },
          }
        : {}),
    };
    let request: RunRequest;
    if ('resume' in start) {
      const [claimed] = await store.claimRuns(lease.id, undefined, Date.now(), start.resume.id);
      if (!claimed) {
        const why =
          (await notResumed(store, start.resume)) ??
          `run ${start.resume.id} was taken up by another process at that moment: fleetbook runs show ${start.resume.id}`;
        process.stderr.write(`fleetbook: ${why}\n`);
        return 1;
      }
      // A cancel asked while no process held it: the run resumes cancelled, sends nothing more, runs its `finally`.
      if (claimed.cancelRequested) controller.abort(new Error(claimed.cancelRequested));
      request = { stored: claimed, ...control };
    } else request = { ...start, dryRun: Boolean(flags.dryRun), ...control };
    summary = await startRun(services, pb, request);
  } finally {
    bar?.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await shares.stop();
    await lease.release();
    await store.close();
    await client.close();
    await target.close();
  }
  // Every step of the playbook, those the run never reached `unreached`, as `runs show` prints it.
  summary = { ...summary, steps: everyStep(summary.steps, pb) };
  if (flags.json) process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  else process.stdout.write(formatSummary(summary));
  return summary.status === 'succeeded' ? 0 : 1;
}

/**
 * Why a run cannot be resumed here: a live process holds it (one that took it up since it was read, too), or it
 * has ended; undefined when neither.
 */
export async function notResumed(store: Store, run: RunRecord): Promise<string | undefined> {
  const now = await store.getRun(run.id);
  if (!now) return `run ${run.id} is no longer in the store`;
  const holder = await liveHolder(store, now);
  if (holder)
    return `run ${run.id} of ${run.playbook} is held by ${ownerText(holder)}, which goes on with it. Follow it: fleetbook runs show ${run.id}`;
  if (ENDED.has(now.status))
    return `run ${run.id} of ${run.playbook} has ended (${now.status}): nothing to resume`;
  return undefined;
}

/**
 * Warns of the runs of `playbook` that a process which stopped left unfinished (a `fleetbook run` killed), when no
 * daemon on the store takes them up: from cron nobody else would notice them, `running` for good. Each with the
 * way on. Read once this process holds its lease, which let go of the owners of this host known to be gone.
 */
async function sayLeft(store: Store, playbook: string, logger: Logger): Promise<void> {
  const owners = await liveOwners(store);
  if (owners.some((o) => o.role === 'daemon')) return;
  const live = new Set(owners.map((o) => o.id));
  for (const status of ['running', 'queued'] as const)
    for (const r of await store.listRuns({ playbook, status, limit: 10 }))
      if (r.owner === undefined || !live.has(r.owner))
        logger.warn(
          `run ${r.id} of ${playbook}, started ${r.startedAt}, was left unfinished by a process that stopped: \`fleetbook runs resume ${r.id}\` goes on with it, \`fleetbook runs cancel ${r.id}\` ends it`,
          { runId: r.id },
        );
}
