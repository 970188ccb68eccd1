/** `fleetbook serve`: the daemon in the foreground, until SIGTERM or SIGINT. */
import { loadConfig, stateOrigin } from '../config.js';
import { createLogger } from '../log.js';
import { envForExpressions, secretsFromEnv } from './run.js';

export interface ServeFlags {
  playbooks: string;
  listen?: string;
  state?: string;
}

export async function serveCommand(flags: ServeFlags): Promise<number> {
  const { startDaemon } = await import('../daemon/daemon.js');
  const config = loadConfig(process.env, {
    ...(flags.listen ? { listen: flags.listen } : {}),
    ...(flags.state ? { state: flags.state } : {}),
  });
  const logger = createLogger({ level: config.logLevel });
  let fatal: Error | undefined;
  let stop: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  // Invalid playbooks or configuration, or a state file another daemon owns: a ConfigError, which the CLI prints
  // and exits 2 for.
  const daemon = await startDaemon({
    config,
    playbooks: flags.playbooks,
    stateOrigin: stateOrigin(process.env, flags),
    logger,
    secrets: secretsFromEnv(process.env),
    env: envForExpressions(process.env),
    onFatal: (e) => {
      fatal = e;
      stop();
    },
  });
  process.stderr.write(
    `fleetbook serve: listening on ${daemon.url} (runs: ${daemon.url}/runs, metrics: ${daemon.url}/metrics)${
      daemon.emulatorUrl ? `\n  embedded emulator: ${daemon.emulatorUrl}` : ''
    }\n`,
  );
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  await stopped;
  await daemon.close();
  if (fatal) process.stderr.write(`fleetbook serve: ${fatal.message}\n`);
  return fatal ? 1 : 0;
}
