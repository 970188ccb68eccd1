/**
 * Where the CLI's API calls go: the service named by FLEETBOOK_API_URL, or, without it, an emulator started
 * in-process with its default credentials (the zero-configuration start).
 */
import type { ClientOptions } from '../api/client.js';
import type { Config } from '../config.js';
import { ConfigError } from '../errors.js';
import type { Logger } from '../log.js';

export interface Target {
  options: ClientOptions;
  /** The embedded emulator's URL when one was started. */
  emulatorUrl?: string;
  close(): Promise<void>;
}

export async function connect(config: Config, _logger: Logger): Promise<Target> {
  const rates = { requestsPerSecond: config.requestsPerSecond, concurrency: config.concurrency };
  const areaRates = { m2m: rates, loc: rates, subsc: rates, dm: rates, oauth: rates };
  if (config.apiUrl) {
    const options: ClientOptions = { baseUrl: config.apiUrl, rates: areaRates };
    if (config.accessToken) options.accessToken = config.accessToken;
    if (config.clientId) options.clientId = config.clientId;
    if (config.clientSecret) options.clientSecret = config.clientSecret;
    if (config.username) options.username = config.username;
    if (config.password) options.password = config.password;
    return { options, close: async () => undefined };
  }
  throw new ConfigError(
    'no API URL: set FLEETBOOK_API_URL or pass --api-url (e.g. http://127.0.0.1:8080/api)',
  );
}
