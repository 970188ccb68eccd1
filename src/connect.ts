/**
 * Where a process's API calls go, for `fleetbook run`, `fleetbook call` and the daemon alike: the service named
 * by FLEETBOOK_API_URL, or, without it, an emulator started in-process with its default credentials (the
 * zero-configuration start). Only the shells (src/cli, src/daemon) use it: the engine is given a client.
 */
import type { ClientOptions } from './api/client-options.js';
import type { Config } from './config.js';
import { ConfigError } from './errors.js';
import type { Emulator, EmulatorOptions } from './emulator/index.js';
import type { Logger } from './log.js';

export interface Target {
  options: ClientOptions;
  /** The embedded emulator's base URL when one was started. */
  emulatorUrl?: string;
  /** The embedded emulator, when one was started. */
  emulator?: Emulator;
  /** Embedded only: how often runs poll report status and fallbacks (EMBEDDED_POLL_INTERVAL_MS). */
  pollIntervalMs?: number;
  close(): Promise<void>;
}

/**
 * Simulated seconds per real second of the embedded emulator: a location report estimated at a few minutes
 * completes in a few seconds, so that `fleetbook run` on a fresh clone shows a whole report.
 */
export const EMBEDDED_TIME_SCALE = 60;

/**
 * The embedded emulator's reports complete in seconds (EMBEDDED_TIME_SCALE): runs poll them every 250 ms
 * rather than the runner's 5 s default.
 */
export const EMBEDDED_POLL_INTERVAL_MS = 250;

/** Whether `connect(config)` starts an embedded emulator: no FLEETBOOK_API_URL (nor `--api-url`). */
export function onEmbeddedEmulator(config: Config): boolean {
  return !config.apiUrl;
}

/** Whether this process said that the rate variables do not apply to the embedded emulator: once is enough. */
let saidUnused = false;

export async function connect(
  config: Config,
  logger: Logger,
  /**
   * Embedded only: the emulator's world, faults and start time (`fleetbook test`), and its demo triggers (the
   * daemon's zero-configuration start).
   */
  embedded: Pick<
    EmulatorOptions,
    'demoTriggers' | 'seed' | 'accounts' | 'devicesPerAccount' | 'timeScale' | 'faults' | 'startTime'
  > = {},
): Promise<Target> {
  const rates = { requestsPerSecond: config.requestsPerSecond, concurrency: config.concurrency };
  const areaRates = { m2m: rates, loc: rates, subsc: rates, dm: rates, oauth: rates };
  checkCredentials(config);
  if (config.apiUrl) {
    const options: ClientOptions = { baseUrl: config.apiUrl, rates: areaRates };
    if (config.accessToken) options.accessToken = config.accessToken;
    if (config.clientId) options.clientId = config.clientId;
    if (config.clientSecret) options.clientSecret = config.clientSecret;
    if (config.username) options.username = config.username;
    if (config.password) options.password = config.password;
    if (config.sessionHeader) options.sessionHeader = config.sessionHeader;
    return { options, close: async () => undefined };
  }
  const { startEmulator } = await import('./emulator/index.js');
  const emu = await startEmulator({ timeScale: EMBEDDED_TIME_SCALE, ...embedded });
  logger.info('no FLEETBOOK_API_URL: using an embedded emulator', { url: emu.baseUrl });
  // The emulator is local: its budget is the machine's, not a carrier's. A budget set for the service is said
  // to be unused, not silently dropped.
  const unused = ['FLEETBOOK_RATE', 'FLEETBOOK_CONCURRENCY'].filter((name) => process.env[name]);
  if (unused.length && !saidUnused) {
    saidUnused = true;
    logger.warn(
      `${unused.join(' and ')} not used: the embedded emulator is called at 10,000 requests/s, 64 at once`,
    );
  }
  const d = emu.defaults;
  const local = { requestsPerSecond: 10_000, concurrency: 64 };
  return {
    options: {
      baseUrl: emu.baseUrl,
      clientId: d.clientId,
      clientSecret: d.clientSecret,
      username: d.username,
      password: d.password,
      // The emulator reads either name.
      ...(config.sessionHeader ? { sessionHeader: config.sessionHeader } : {}),
      rates: { m2m: local, loc: local, subsc: local, dm: local, oauth: local },
    },
    emulatorUrl: emu.baseUrl,
    emulator: emu,
    pollIntervalMs: EMBEDDED_POLL_INTERVAL_MS,
    close: () => emu.close(),
  };
}

/**
 * Where a credential came from when not its variable: `call`'s flags. `takesApiUrl`: the command has an
 * `--api-url` flag, which the message offers (`run` and `serve` have none).
 */
export type CredentialFlags = Partial<Record<'apiUrl' | 'clientId' | 'username', string>> & {
  takesApiUrl?: boolean;
};

/**
 * Refuses (ConfigError, saying why) credentials that cannot reach the service named, before any request: with
 * an API URL, one bearer token (given, or the client credentials to fetch it) and the session login, each whole,
 * since a run would otherwise start and fail at its first call; without one, none at all, since the embedded
 * emulator would answer in the service's place and the caller could take its made-up devices for real ones.
 * Each is named by the flag that gave it (`flags`), else by its variable.
 */
export function checkCredentials(c: Config, flags: CredentialFlags = {}): void {
  const missing = missingCredentials(c, flags);
  if (missing) throw new ConfigError(missing);
}

/**
 * Refuses (ConfigError) a daemon on the service without the listener's credentials: it registers its listener
 * with them, and refuses every callback that does not carry them. On the embedded emulator they are made up.
 */
export function checkListenerCredentials(c: Config): void {
  if (!c.apiUrl || (c.callbackUsername && c.callbackPassword)) return;
  const why = 'the listener is registered with both, and refuses callbacks without them';
  const [user, password] = ['FLEETBOOK_CALLBACK_USERNAME', 'FLEETBOOK_CALLBACK_PASSWORD'];
  if (c.callbackUsername || c.callbackPassword) {
    const [missing, given] = c.callbackUsername ? [password, user] : [user, password];
    throw new ConfigError(`${missing} is not set, but ${given} is: set it (with FLEETBOOK_API_URL, ${why})`);
  }
  throw new ConfigError(`${user} and ${password} are required with FLEETBOOK_API_URL: ${why}`);
}

function missingCredentials(c: Config, flags: CredentialFlags): string | undefined {
  const url = flags.apiUrl ?? 'FLEETBOOK_API_URL';
  const clientId = flags.clientId ?? 'FLEETBOOK_CLIENT_ID';
  const username = flags.username ?? 'FLEETBOOK_USERNAME';
  const given = (
    [
      ['FLEETBOOK_ACCESS_TOKEN', c.accessToken],
      [clientId, c.clientId],
      ['FLEETBOOK_CLIENT_SECRET', c.clientSecret],
      [username, c.username],
      ['FLEETBOOK_PASSWORD', c.password],
    ] as const
  ).flatMap(([name, v]) => (v === undefined ? [] : [name]));
  if (!c.apiUrl)
    return given.length
      ? `${given.join(', ')} ${given.length > 1 ? 'are' : 'is'} set, but FLEETBOOK_API_URL is not: set it${flags.takesApiUrl ? ' (or --api-url)' : ''} to the service's {base_url} (e.g. https://<host>/api), or unset the credentials to use the embedded emulator`
      : undefined;
  const problems: string[] = [];
  if (!c.accessToken && (!c.clientId || !c.clientSecret))
    problems.push(
      c.clientId || c.clientSecret
        ? `${c.clientId ? 'FLEETBOOK_CLIENT_SECRET' : clientId} is not set: the OAuth client credentials need both`
        : 'no bearer token: set FLEETBOOK_ACCESS_TOKEN, or FLEETBOOK_CLIENT_ID and FLEETBOOK_CLIENT_SECRET',
    );
  if (!c.username || !c.password)
    problems.push(
      c.username || c.password
        ? `${c.username ? 'FLEETBOOK_PASSWORD' : username} is not set: the session login needs both`
        : 'no session login: set FLEETBOOK_USERNAME and FLEETBOOK_PASSWORD',
    );
  return problems.length
    ? `the credentials of ${url} are incomplete:\n  ${problems.join('\n  ')}`
    : undefined;
}
