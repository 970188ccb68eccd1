/**
 * A test case's world and faults, as a test file writes them (friendly names, durations), turned into the
 * embedded emulator's options: the same world `fleetbook emulator` and the control API build. And what of them
 * the emulator would refuse, told when the file loads, at its place.
 */
import type { Faults } from '../emulator/index.js';
import {
  devicesProblem,
  integerProblem,
  MAX_REQUESTS_PER_SECOND,
  MAX_SIMULATED_SECONDS,
  seedProblem,
  timeScaleProblem,
} from '../emulator/limits.js';
import { durationProblem, parseDuration } from '../playbook/duration.js';

type Json = Record<string, unknown>;

/** The default world of a test: the embedded emulator's (seed 1, 3 accounts of 50 devices). */
export interface World {
  seed?: number | string;
  accounts?: number;
  devicesPerAccount?: number;
  timeScale?: number;
}

const seconds = (v: unknown) => (parseDuration(String(v)) ?? 0) / 1000;

/** Test-file name → the emulator's fault, with the conversion of its value. */
const FAULT_NAMES: Record<string, [keyof Faults, (v: unknown) => unknown]> = {
  serverErrors: ['errorRate', (v) => v],
  connectionResets: ['resetRate', (v) => v],
  latency: ['latencyMs', (v) => parseDuration(String(v)) ?? 0],
  rateLimit: ['maxRequestsPerSecond', (v) => v],
  sessionExpiry: ['sessionTtlSeconds', seconds],
  deviceErrors: ['deviceErrors', (v) => v],
  carrierDelay: ['processingSeconds', seconds],
  neverFinish: ['neverFinishRate', (v) => v],
  neverFinishDevices: ['neverFinishDevices', (v) => v],
  droppedCallbacks: ['dropCallbackRate', (v) => v],
};

/** The emulator's faults for a test file's `faults` (already checked against its schema). */
export function emulatorFaults(faults: Json): Partial<Faults> {
  const out: Json = {};
  for (const [name, value] of Object.entries(faults)) {
    const [fault, convert] = FAULT_NAMES[name] as [keyof Faults, (v: unknown) => unknown];
    out[fault] = convert(value);
  }
  return out as Partial<Faults>;
}

export type Seg = string | number;

/** A value of a test file's `world` or `faults` the emulator would refuse: at `path`, in the file's words. */
export interface SettingProblem {
  path: Seg[];
  message: string;
  rule: 'schema' | 'duration';
}

/** The embedded emulator's world when a test file leaves its size out: 3 accounts of 50 devices. */
const DEFAULT_SIZE = { accounts: 3, devicesPerAccount: 50 };

const isMap = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * What the emulator would refuse of the worlds and faults of a test file (already checked against its schema:
 * a value of the wrong type is told there, and not here): each value at its place, with the test file's name
 * for it (`faults.carrierDelay`, not the emulator's `processingSeconds`), by the emulator's own limits. A case
 * would otherwise fail when it ran, with the emulator's names (`Invalid faults: processingSeconds must be ...`).
 */
export function settingProblems(file: Json): SettingProblem[] {
  const out: SettingProblem[] = [];
  const fileWorld = isMap(file.world) ? file.world : {};
  out.push(...worldProblems(file.world, ['world']), ...faultProblems(file.faults, ['faults']));
  const size = sizeProblem(fileWorld, ['world']);
  if (size) out.push(size);
  if (Array.isArray(file.cases))
    file.cases.forEach((c: unknown, i) => {
      if (!isMap(c)) return;
      out.push(...worldProblems(c.world, ['cases', i, 'world']));
      // The case's world over the file's: told at the case's when it gives a size of its own.
      if (isMap(c.world) && ('accounts' in c.world || 'devicesPerAccount' in c.world)) {
        const own = sizeProblem({ ...fileWorld, ...c.world }, ['cases', i, 'world']);
        if (own) out.push(own);
      }
      out.push(...faultProblems(c.faults, ['cases', i, 'faults']));
      if (Array.isArray(c.before))
        c.before.forEach((e: unknown, j) => {
          if (isMap(e)) out.push(...faultProblems(e.faults, ['cases', i, 'before', j, 'faults']));
        });
    });
  return out;
}

/** The values of one `world` the emulator would refuse (limits.ts). */
function worldProblems(world: unknown, at: Seg[]): SettingProblem[] {
  if (!isMap(world)) return [];
  const out: SettingProblem[] = [];
  const tell = (key: string, message: string | undefined) =>
    message && out.push({ path: [...at, key], message, rule: 'schema' });
  const { seed, accounts, devicesPerAccount, timeScale } = world;
  if (typeof seed === 'string') tell('seed', seedProblem(seed, 'world.seed'));
  if (typeof accounts === 'number') tell('accounts', integerProblem('accounts', accounts, 'world.accounts'));
  if (typeof devicesPerAccount === 'number')
    tell(
      'devicesPerAccount',
      integerProblem('devicesPerAccount', devicesPerAccount, 'world.devicesPerAccount'),
    );
  if (typeof timeScale === 'number') tell('timeScale', timeScaleProblem(timeScale, 'world.timeScale'));
  return out;
}

/** A world of more devices than the emulator makes, at `at`; a size out of its own range is told by itself. */
function sizeProblem(world: Json, at: Seg[]): SettingProblem | undefined {
  const { accounts, devicesPerAccount } = { ...DEFAULT_SIZE, ...world };
  if (integerProblem('accounts', accounts) || integerProblem('devicesPerAccount', devicesPerAccount))
    return undefined;
  const message = devicesProblem(accounts as number, devicesPerAccount as number, [
    'world.accounts',
    'world.devicesPerAccount',
  ]);
  return message ? { path: at, message, rule: 'schema' } : undefined;
}

const YEAR = `a year (${MAX_SIMULATED_SECONDS / 86_400}d) of simulated time`;

/** The values of one `faults` the emulator would refuse (faults.ts, by the limits of limits.ts). */
function faultProblems(faults: unknown, at: Seg[]): SettingProblem[] {
  if (!isMap(faults)) return [];
  const out: SettingProblem[] = [];
  const tell = (key: string, message: string | undefined, rule: SettingProblem['rule'] = 'duration') =>
    message && out.push({ path: [...at, key], message, rule });
  const { latency, sessionExpiry, carrierDelay, rateLimit, deviceErrors } = faults;
  // A wait on a timer: as long as a playbook's durations may be (the emulator's bound is a timer's too).
  if (typeof latency === 'string') tell('latency', durationProblem('faults.latency', latency));
  if (typeof sessionExpiry === 'string')
    tell(
      'sessionExpiry',
      parseDuration(sessionExpiry) === 0
        ? 'faults.sessionExpiry is zero: a session would expire at once; give a duration above zero'
        : simulatedProblem('faults.sessionExpiry', sessionExpiry),
    );
  if (typeof carrierDelay === 'string')
    tell('carrierDelay', simulatedProblem('faults.carrierDelay', carrierDelay));
  if (typeof rateLimit === 'number' && rateLimit > MAX_REQUESTS_PER_SECOND)
    tell(
      'rateLimit',
      `faults.rateLimit must be an integer from 0 to ${MAX_REQUESTS_PER_SECOND} (0: no limit), got ${rateLimit}`,
      'schema',
    );
  if (isMap(deviceErrors)) {
    const rates = Object.values(deviceErrors).filter((r): r is number => typeof r === 'number');
    const sum = rates.reduce((a, b) => a + b, 0);
    // As the emulator adds them up: a sum a rounding error above 1 is 1.
    if (sum > 1 + 1e-9)
      tell('deviceErrors', `faults.deviceErrors: the rates add up to ${sum}, more than 1`, 'schema');
  }
  return out;
}

/** Why a wait of simulated time (`text`, named `name`) is longer than the emulator takes; undefined when not. */
function simulatedProblem(name: string, text: string): string | undefined {
  const ms = parseDuration(text);
  return ms !== undefined && ms / 1000 > MAX_SIMULATED_SECONDS
    ? `${name} ${text} is longer than ${YEAR}`
    : undefined;
}
