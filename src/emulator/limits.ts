/**
 * The limits of the emulator's options, defined once: `startEmulator`, the control API's reset and
 * `fleetbook emulator` each ask here what is wrong with a value, and say it under their own name for it (a
 * field, an option, a flag) and as they were given it (a flag's text). The bounds of its faults too, which the
 * fault check (faults.ts) and a playbook test file's (src/testing/world.ts) take.
 */
import { said, timeScaleProblem } from './sim-clock.js';

export { timeScaleProblem };

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

/** The most identifiers `neverFinishDevices` may list. */
export const MAX_NEVER_FINISH_DEVICES = 100_000;

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

/**
 * What is wrong with `v` as a seed, named `name`: a number or a word. An empty one (or only spaces) is refused
 * rather than read as a seed of its own: it is a value left out, not one chosen.
 */
export function seedProblem(v: unknown, name = 'seed'): string | undefined {
  if (typeof v === 'string')
    return v.trim() === '' ? `${name} is empty: give a number or a word, or leave it out` : undefined;
  return typeof v === 'number' && Number.isFinite(v)
    ? undefined
    : `${name} must be a number or a word, got ${said(v)}`;
}

/** What is wrong with the world options given (those left out are not checked), the first; undefined for none. */
export function worldProblem(o: {
  seed?: unknown;
  accounts?: unknown;
  devicesPerAccount?: unknown;
  timeScale?: unknown;
}): string | undefined {
  return (
    (o.seed !== undefined ? seedProblem(o.seed) : undefined) ??
    (o.accounts !== undefined ? integerProblem('accounts', o.accounts) : undefined) ??
    (o.devicesPerAccount !== undefined
      ? integerProblem('devicesPerAccount', o.devicesPerAccount)
      : undefined) ??
    (o.timeScale !== undefined ? timeScaleProblem(o.timeScale) : undefined)
  );
}
