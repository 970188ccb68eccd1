/**
 * `fleetbook serve`: the daemon in the foreground, until SIGTERM or SIGINT. SIGHUP reloads the playbooks, as an
 * edit of their files does while they are watched.
 */
import { loadConfig, stateOrigin } from '../config.js';
import { createLogger } from '../log.js';
import { listenError } from './listen-error.js';
import { envForExpressions, secretsFromEnv } from './environment.js';

export interface ServeFlags {
  playbooks: string;
  listen?: string;
  state?: string;
  /** `--no-watch`: false. Commander makes it true otherwise, so only false is read (FLEETBOOK_WATCH decides). */
  watch?: boolean;
}

export async function serveCommand(flags: ServeFlags): Promise<number> {
  const { startDaemon } = await import('../daemon/daemon.js');
  const config = loadConfig(process.env, {
    ...(flags.listen ? { listen: flags.listen } : {}),
    ...(flags.state ? { state: flags.state } : {}),
  });
  const logger = createLogger({ level: config.logLevel });
  let fatal: Error | undefined;
  // SIGHUP reloads the playbooks: one during the start is kept for when it is done (the files it read may be
  // older than the signal), not taken as the end of the process.
  let hupEarly = false;
  let reload = () => void (hupEarly = true);
  process.on('SIGHUP', () => reload());
  // SIGTERM or SIGINT from now on, the start too: one during the start cuts its waits on the service short, and the
  // daemon is then stopped as after any start (its running steps finish, the rest is checkpointed).
  const starting = new AbortController();
  let stop: () => void = () => undefined;
  const stopped = new Promise<void>(
    (resolve) =>
      (stop = () => {
        starting.abort();
        resolve();
      }),
  );
  process.once('SIGINT', () => stop());
  process.once('SIGTERM', () => stop());
  // Invalid playbooks or configuration, or a state file another daemon owns: a ConfigError, which the CLI prints
  // and exits 2 for.
  const daemon = await startDaemon({
    config,
    playbooks: flags.playbooks,
    stateOrigin: stateOrigin(process.env, flags),
    logger,
    secrets: secretsFromEnv(process.env),
    env: envForExpressions(process.env),
    watch: flags.watch !== false && config.watch,
    stopping: starting.signal,
    onFatal: (e) => {
      fatal = e;
      stop();
    },
  }).catch((e: unknown) => {
    throw listenError(e, config.listen, listenOrigin(flags), 'address');
  });
  process.stderr.write(
    `fleetbook serve: listening on ${daemon.url} (runs: ${daemon.url}/runs, metrics: ${daemon.url}/metrics)${
      daemon.emulatorUrl ? `\n  embedded emulator: ${daemon.emulatorUrl}` : ''
    }\n`,
  );
  // The reload logs what it did, or why it kept the playbooks it has. Left on while stopping: a SIGHUP then
  // does nothing, rather than end the process before its runs are checkpointed.
  reload = () => void daemon.reload();
  if (hupEarly) reload();
  await stopped;
  await daemon.close();
  if (fatal) process.stderr.write(`fleetbook serve: ${fatal.message}\n`);
  return fatal ? 1 : 0;
}

/** Where the address `serve` listens on came from, as a refusal names it. */
function listenOrigin(flags: ServeFlags): string {
  if (flags.listen) return '--listen';
  return process.env.FLEETBOOK_LISTEN ? 'FLEETBOOK_LISTEN' : 'the default, FLEETBOOK_LISTEN being unset';
}
