/**
 * The limits of the emulator's options, defined once and checked once on each way in: `startEmulator` (and
 * `fleetbook emulator`, which starts it under its flags' names), a reset (`emulator.reset()`, `POST
 * /_emulator/reset`), a test file's worlds when it loads (src/testing/world.ts). The world and the clock they
 * make take them as checked. Each way says a problem under its own name for the option (a field, a flag, a test
 * file's key) and as it was given it (a flag's text). The bounds of the faults are here too; the faults' own
 * definitions are faults.ts's.
 */
import { ISO_TIME, parseIsoTime } from '../clock.js';
import { DEVICE_AGE_DAYS } from './seed.js';
import { LATEST, MAX_TIME_SCALE, said } from './sim-clock.js';

/**
 * An option or a fault out of its limits: thrown by `startEmulator`, a reset and `setFaults`, and answered 400, in
 * the same words, by the control API.
 */
export class OptionError extends RangeError {}

/** More than this many seed devices would exhaust the 24-bit pseudo-ESN space. */
export const MAX_DEVICES = 5_000_000;

/**
 * The longest wait of simulated time a fault sets (processingSeconds, sessionTtlSeconds): a year, beyond any
 * carrier delay or session lifetime worth testing (neverFinishRate is the carrier that never finishes). Without
 * a bound, 1e308 was taken: a request due after the clock's end, a session that never expired.
 */
export const MAX_SIMULATED_SECONDS = 365 * 86_400;

/** The most requests a second `maxRequestsPerSecond` allows: a RateGate counts each in a slot of its ring. */
export const MAX_REQUESTS_PER_SECOND = 1_000_000;

/** The most requests of one action `resetNext` may reset. */
export const MAX_RESET_NEXT = 1_000_000;

/** The most identifiers `neverFinishDevices` may list. */
export const MAX_NEVER_FINISH_DEVICES = 100_000;

/**
 * The earliest start of the clock: the API writes four-digit years, from 0000, and the seeded devices were made
 * up to DEVICE_AGE_DAYS before the start. The first new year that leaves them room.
 */
const EARLIEST = Date.parse('0002-01-01T00:00:00Z');

/** The integer options and the range each takes. */
export const RANGES = {
  port: [0, 65535],
  accounts: [1, 1000],
  devicesPerAccount: [0, MAX_DEVICES],
} as const;

/** What is wrong with `v` as the integer option `key`, named `name` and said as `got`; undefined when nothing. */
export function integerProblem(
  key: keyof typeof RANGES,
  v: unknown,
  name: string = key,
  got = said(v),
): string | undefined {
  const [min, max] = RANGES[key];
  return typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max
    ? undefined
    : `${name} must be an integer from ${min} to ${max}, got ${got}`;
}

/** What is wrong with `v` as a timeScale, named `name` and said as `got`; undefined when it is one. */
export function timeScaleProblem(v: unknown, name = 'timeScale', got = said(v)): string | undefined {
  return typeof v === 'number' && v >= 0 && v <= MAX_TIME_SCALE
    ? undefined
    : `${name} must be a number from 0 to ${MAX_TIME_SCALE} (e.g. 60 or 0.5), got ${got}`;
}

/**
 * What is wrong with `v` as a seed, named `name`: a number or a word. An empty one (or only spaces) is refused
 * rather than read as a seed of its own: it is a value left out, not one chosen.
 */
function seedProblem(v: unknown, name = 'seed'): string | undefined {
  if (typeof v === 'string')
    return v.trim() === '' ? `${name} is empty: give a number or a word, or leave it out` : undefined;
  return typeof v === 'number' && Number.isFinite(v)
    ? undefined
    : `${name} must be a number or a word, got ${said(v)}`;
}

/**
 * A startTime in milliseconds since the epoch: NaN when it is no time. A text is an ISO 8601 date and time with
 * its offset (clock.ts parseIsoTime), not whatever Date.parse makes of it: `"2026"`, `"March 7"`, a time without
 * an offset (midnight where the machine is), each a start of its own choosing.
 */
export function startMs(v: unknown): number {
  return typeof v === 'number' ? v : typeof v === 'string' ? (parseIsoTime(v) ?? NaN) : NaN;
}

/** The times a startTime may be written as, for its error. */
const START_FORM =
  'an ISO 8601 date and time with its offset (2026-01-05T00:00:00Z, 2026-01-04T19:00:00-05:00) or milliseconds since the epoch';

/** What is wrong with `v` as the start of the clock, named `name`: a time from EARLIEST to LATEST. */
export function startTimeProblem(v: unknown, name = 'startTime', got = said(v)): string | undefined {
  const ms = startMs(v);
  if (Number.isNaN(ms))
    return typeof v === 'string' && ISO_TIME.test(v)
      ? `${name} ${v} is no time: that day or hour does not exist`
      : `${name} must be ${START_FORM}, got ${got}`;
  // As a time when a Date holds it, so that `+010000-01-01T00:00:00Z` and its milliseconds are said alike.
  const time = Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : got;
  if (ms < EARLIEST)
    return `${name} must be no earlier than ${new Date(EARLIEST).toISOString()} (the API writes four-digit years, and the seeded devices were made up to ${DEVICE_AGE_DAYS[1]} days before the start), got ${time}`;
  if (ms > LATEST) return `${name} must be no later than ${new Date(LATEST).toISOString()}, got ${time}`;
  return undefined;
}

/** What is wrong with a world of `accounts` × `devicesPerAccount` devices, the two named as `names`. */
export function devicesProblem(
  accounts: number,
  devicesPerAccount: number,
  names: readonly [string, string] = ['accounts', 'devicesPerAccount'],
): string | undefined {
  const total = accounts * devicesPerAccount;
  return total > MAX_DEVICES
    ? `${names[0]} × ${names[1]} must be at most ${MAX_DEVICES} devices, got ${total}`
    : undefined;
}

/** The options with limits. */
type LimitedOption = 'port' | 'seed' | 'accounts' | 'devicesPerAccount' | 'timeScale' | 'startTime';

/**
 * How a way in names the options and says a value it got (a flag and its text, for `fleetbook emulator`). Left
 * out: the option's own name, and the value as `said` says it.
 */
export interface Wording {
  names?: Partial<Record<LimitedOption, string>>;
  got?: Partial<Record<LimitedOption, string>>;
}

/** What is wrong with `v` as the option `key`, in the words of `wording`; undefined when nothing. */
export function optionProblem(key: LimitedOption, v: unknown, wording: Wording = {}): string | undefined {
  const name = wording.names?.[key] ?? key;
  const got = wording.got?.[key] ?? said(v);
  switch (key) {
    case 'seed':
      return seedProblem(v, name);
    case 'timeScale':
      return timeScaleProblem(v, name, got);
    case 'startTime':
      return startTimeProblem(v, name, got);
    default:
      return integerProblem(key, v, name, got);
  }
}

/**
 * The check of a way in: throws OptionError, in the words of `wording`, at the first of the options given that
 * is out of its limits (in the order of LimitedOption), then at a world of too many devices (accounts and
 * devicesPerAccount are the world's, given or not).
 */
export function checkOptions(
  o: Partial<Record<LimitedOption, unknown>> & { accounts: unknown; devicesPerAccount: unknown },
  wording: Wording = {},
): void {
  for (const key of ['port', 'seed', 'accounts', 'devicesPerAccount', 'timeScale', 'startTime'] as const) {
    const problem = o[key] === undefined ? undefined : optionProblem(key, o[key], wording);
    if (problem) throw new OptionError(problem);
  }
  const names = wording.names ?? {};
  const problem = devicesProblem(o.accounts as number, o.devicesPerAccount as number, [
    names.accounts ?? 'accounts',
    names.devicesPerAccount ?? 'devicesPerAccount',
  ]);
  if (problem) throw new OptionError(problem);
}
