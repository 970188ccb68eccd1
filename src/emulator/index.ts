/**
 * The service emulator: the whole API of service-spec.md, stateful and seeded, on one local port, with the
 * control API of product.md section 6. See ARCHITECTURE.md for how it is built and the choices it makes
 * where the spec is silent.
 */
import type { AddressInfo } from 'node:net';
import { silentLogger, type Logger } from '../log.js';
import { TokenStore } from './auth.js';
import { CallbackDispatcher } from './callbacks.js';
import type { ResetFn } from './control.js';
import { defaultFaults, parseFaults, type Faults } from './faults.js';
import { seedSensors } from './sensors.js';
import { DEFAULT_CLIENT, DEFAULT_USERS } from './seed-tables.js';
import { buildServer } from './server.js';
import { checkOptions, OptionError, startMs, type Wording } from './limits.js';
import { DEFAULT_START, iso } from './sim-clock.js';
import type { RequestFilter, RequestRecord } from './requests.js';
import { advance, catchUp, startTicker } from './simulation.js';
import { EmulatorState, type Core, type ResolvedOptions } from './state.js';
import { Holds, type Hold } from './holds.js';
import { seedDemoTriggers, seedTriggers } from './triggers.js';

export { SIGNATURE_HEADER } from './callbacks.js';
export { OptionError, type Wording } from './limits.js';
export type { Faults } from './faults.js';
export type { Hold } from './holds.js';
export type { Delivery } from './callbacks.js';
export type {
  Reason,
  RequestDeviceRecord,
  RequestFilter,
  RequestRecord,
  RequestStatus,
  DeviceStatus,
} from './requests.js';

export interface EmulatorOptions {
  /** Port to listen on; 0 picks a free one. @default 0 */
  port?: number;
  /** @default '127.0.0.1' */
  host?: string;
  /** Seed of the world: the same seed gives the same accounts and devices. @default 1 */
  seed?: number | string;
  /** @default 3 */
  accounts?: number;
  /** @default 50 */
  devicesPerAccount?: number;
  /**
   * Simulated seconds per real second; 0 stops the clock, which then moves only through the control API.
   * @default 1
   */
  timeScale?: number;
  /** @default silent */
  logger?: Logger;
  /**
   * Simulated time at the start and after each reset: an ISO 8601 date and time with its offset
   * (`2026-01-05T00:00:00Z`, `2026-01-04T19:00:00-05:00`) or ms since the epoch, from 0002-01-01T00:00:00Z to
   * 9999-12-31T23:59:59.999Z (limits.ts). @default 2026-01-05T00:00:00Z
   */
  startTime?: string | number;
  /** Shared secret of the HMAC signature on Location callbacks. @default 'fleetbook-emulator-callback-secret' */
  callbackSecret?: string;
  /**
   * Seed demo triggers on every account (see seedDemoTriggers): activity that drives the zero-configuration
   * daemon. @default false
   */
  demoTriggers?: boolean;
  /** Faults in force from the start (as `PUT /_emulator/faults`, refused in its words). @default none */
  faults?: Partial<Faults>;
  /** The wall clock, for bearer-token lifetimes and the request-rate fault. @default Date.now */
  wallClock?: () => number;
}

export interface EmulatorDefaults {
  clientId: string;
  clientSecret: string;
  username: string;
  password: string;
  /** A few account names of the seeded world, the primary account first. */
  accounts: string[];
}

export interface Emulator {
  /** `http://host:port`. */
  url: string;
  /** The spec's `{base_url}`: `url + '/api'`. */
  baseUrl: string;
  defaults: EmulatorDefaults;
  /** The shared secret that signs Location callbacks. */
  callbackSecret: string;
  /** Every account of the current world. */
  accountNames(): string[];
  /** Multi-line text for the CLI to print at start: URL, credentials, accounts, callback signing. */
  banner(): string;
  close(): Promise<void>;
  /** Fresh deterministic state, as `POST /_emulator/reset`. */
  reset(o?: {
    seed?: number | string;
    accounts?: number;
    devicesPerAccount?: number;
    timeScale?: number;
  }): void;
  /** Moves simulated time forward, as `POST /_emulator/clock/advance`. */
  advance(seconds: number): void;
  /** Simulated time now, in ms since the epoch. */
  now(): number;
  /** Replaces the faults, as `PUT /_emulator/faults`. */
  setFaults(faults: Partial<Faults>): void;
  /** Resolves when no callback is queued, in flight or waiting to be re-sent. */
  callbacksIdle(): Promise<void>;
  /**
   * Sends at once every callback waiting to be sent again after an attempt that was not acknowledged, rather
   * than after `callbackRetryMs`, each as its next attempt: how many there were.
   */
  resendCallbacksNow(): number;
  /**
   * API requests received and not yet answered, counted or not: a request a killed client sent before it died
   * is answered (and counted in `GET /_emulator/calls`) all the same, once its latency has passed.
   */
  requestsInFlight(): number;
  /**
   * Holds the API requests of `action` (a catalog name, `devices.suspend`) after the next `pass` of them: each
   * waits, after its latency and before it is counted or acts, until the hold is released. For a test to act
   * while requests are certainly under way, however fast or slow the machine. A request held is in flight.
   * @param pass Requests of the action let through first. @default 0
   */
  hold(action: string, pass?: number): Hold;
  /**
   * The carrier's record of an asynchronous request (a device action or SMS): what it did to each device, as
   * `GET /_emulator/requests?requestId=` shows it. Undefined for an unknown (or forgotten) request.
   */
  request(requestId: string): RequestRecord | undefined;
  /** The records of the requests kept, oldest first, as `GET /_emulator/requests`. */
  requests(filter?: RequestFilter): RequestRecord[];
}

export const DEFAULT_CALLBACK_SECRET = 'fleetbook-emulator-callback-secret';

/** The options with their defaults, checked (limits.ts): OptionError, in the words of `wording`, if not. */
function resolve(o: EmulatorOptions, wording?: Wording): ResolvedOptions {
  const timeScale = o.timeScale ?? 1;
  const port = o.port ?? 0;
  const accounts = o.accounts ?? 3;
  const devicesPerAccount = o.devicesPerAccount ?? 50;
  const { seed, startTime } = o;
  checkOptions({ port, seed, accounts, devicesPerAccount, timeScale, startTime }, wording);
  const start = startTime === undefined ? DEFAULT_START : startMs(startTime);
  return Object.freeze({
    port,
    host: o.host ?? '127.0.0.1',
    seed: o.seed ?? 1,
    accounts,
    devicesPerAccount,
    timeScale,
    start,
    callbackSecret: o.callbackSecret ?? DEFAULT_CALLBACK_SECRET,
    demoTriggers: o.demoTriggers ?? false,
    wallClock: o.wallClock ?? Date.now,
    logger: o.logger ?? silentLogger,
  });
}

function freshState(o: ResolvedOptions): EmulatorState {
  const st = new EmulatorState(o);
  seedTriggers(st);
  if (o.demoTriggers) seedDemoTriggers(st);
  seedSensors(st);
  return st;
}

/** The faults `f` sets, or OptionError in the words the control API answers a PUT of them with. */
function faultsFrom(f: Partial<Faults>): Faults {
  const parsed = parseFaults({ ...f });
  if (typeof parsed === 'string') throw new OptionError(parsed);
  return parsed;
}

/**
 * Starts an emulator. An option out of its limits throws OptionError before anything starts, its message in the
 * words of `wording` when given (`fleetbook emulator` names its flags and says the text it got).
 */
export async function startEmulator(options: EmulatorOptions = {}, wording?: Wording): Promise<Emulator> {
  let o = resolve(options, wording);
  const initialFaults = options.faults ? faultsFrom(options.faults) : defaultFaults();
  const state = freshState(o);
  state.setFaults(initialFaults);
  const core: Core = {
    options: o,
    state,
    tokens: new TokenStore(o.wallClock),
    callbacks: new CallbackDispatcher({ secret: o.callbackSecret, logger: o.logger }),
    log: o.logger,
    inFlight: 0,
    holds: new Holds(),
  };
  const reset: ResetFn = (r) => {
    // What a reset leaves out keeps its value; checked whole, as startEmulator checks it.
    const given = Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined));
    const { seed, accounts, devicesPerAccount, timeScale } = { ...o, ...given };
    checkOptions({ seed, accounts, devicesPerAccount, timeScale });
    // Options taken only once their world is made: a reset refused keeps the options it was given with.
    const next: ResolvedOptions = Object.freeze({ ...o, ...(given as Partial<ResolvedOptions>) });
    const st = freshState(next);
    o = next;
    (core as { options: ResolvedOptions }).options = o;
    core.callbacks.reset();
    core.state = st;
    return st;
  };
  const app = buildServer({ core, reset });
  await app.listen({ port: o.port, host: o.host });
  const stopTicker = startTicker(core);
  const address = app.server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  const baseUrl = `${url}/api`;
  const world = () => core.state.world;
  const admin = DEFAULT_USERS[0];
  const defaults: EmulatorDefaults = {
    clientId: DEFAULT_CLIENT.clientId,
    clientSecret: DEFAULT_CLIENT.clientSecret,
    username: admin.username,
    password: admin.password,
    // Read from the current world, so that it follows a reset with another seed.
    get accounts() {
      return world()
        .accounts.slice(0, 5)
        .map((a) => a.name);
    },
  };
  o.logger.info('emulator listening', { url, seed: o.seed });

  const banner = (): string => {
    const w = world();
    const st = core.state;
    const lines = [
      `fleetbook emulator listening on ${url}`,
      `  API base URL      ${baseUrl}   (FLEETBOOK_API_URL)`,
      `  control API       ${url}/_emulator`,
      `  OAuth client      id ${DEFAULT_CLIENT.clientId}  secret ${DEFAULT_CLIENT.clientSecret}`,
      '  users             username / password, accounts',
      ...w.users.map(
        (u) =>
          `                    ${u.username} / ${u.password}, ${u.accounts.length === w.accounts.length ? 'all accounts' : u.accounts.join(' ')}`,
      ),
      `  seed              ${String(w.seed)}: ${w.accounts.length} account${w.accounts.length === 1 ? '' : 's'} x ${w.devicesPerAccount} devices, profile (ecpdId) ${w.profile.ecpdId}`,
      '  accounts',
      ...w.accounts.slice(0, 5).map((a) => {
        const tags = [
          a.primary ? 'primary' : '',
          st.locationRegistered.has(a.name) ? 'location' : 'not registered for location',
        ]
          .filter(Boolean)
          .join(', ');
        return `                    ${a.name} (${tags})`;
      }),
      ...(w.accounts.length > 5
        ? [`                    … and ${w.accounts.length - 5} more (GET /_emulator/accounts)`]
        : []),
      `  simulated clock   ${iso(st.now())}, ${st.clock.timeScale === 0 ? 'stopped (POST /_emulator/clock/advance)' : `x${st.clock.timeScale}`}`,
      `  Location callbacks are signed: X-Fleetbook-Signature: sha256=<HMAC-SHA256 of the body>, secret ${o.callbackSecret}`,
    ];
    return lines.join('\n');
  };

  const requests = (filter: RequestFilter = {}): RequestRecord[] => {
    catchUp(core, false);
    return core.state.requests.records(core.state.devices, filter);
  };

  let closed = false;
  return {
    url,
    baseUrl,
    defaults,
    callbackSecret: o.callbackSecret,
    accountNames: () => world().accounts.map((a) => a.name),
    banner,
    async close() {
      if (closed) return;
      closed = true;
      stopTicker();
      core.holds.releaseAll();
      await core.callbacks.close();
      await app.close();
    },
    reset(r = {}) {
      reset(r);
    },
    advance(seconds) {
      advance(core, seconds);
    },
    now: () => core.state.now(),
    setFaults(f) {
      core.state.setFaults(faultsFrom(f));
    },
    callbacksIdle: () => core.callbacks.idle(),
    resendCallbacksNow: () => core.callbacks.resendNow(),
    requestsInFlight: () => core.inFlight,
    hold: (action, pass) => core.holds.hold(action, pass),
    request: (requestId) => requests({ requestId })[0],
    requests,
  };
}
