/**
 * Where a process's API calls go, for `fleetbook run`, `fleetbook call` and the daemon alike: the service named
 * by FLEETBOOK_API_URL, or, without it, an emulator started in-process with its default credentials (the
 * zero-configuration start). Only the shells (src/cli, src/daemon) use it: the engine is given a client.
 */
import type { ClientOptions } from './api/client.js';
import type { Config } from './config.js';
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

export async function connect(
  config: Config,
  logger: Logger,
  /**
   * Embedded only: the emulator's world and faults (`fleetbook test`), and its demo triggers (the daemon's
   * zero-configuration start).
   */
  embedded: Pick<
    EmulatorOptions,
    'demoTriggers' | 'seed' | 'accounts' | 'devicesPerAccount' | 'timeScale' | 'faults'
  > = {},
): Promise<Target> {
  const rates = { requestsPerSecond: config.requestsPerSecond, concurrency: config.concurrency };
  const areaRates = { m2m: rates, loc: rates, subsc: rates, dm: rates, oauth: rates };
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
  const d = emu.defaults;
  // The emulator is local: its budget is the machine's, not a carrier's.
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
