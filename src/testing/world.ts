/**
 * A test case's world and faults, as a test file writes them (friendly names, durations), turned into the
 * embedded emulator's options: the same world `fleetbook emulator` and the control API build. And what of them
 * the emulator would refuse, told when the file loads, at its place.
 */
import {
  FAULT_BOUNDS,
  deviceErrorRateProblem,
  deviceErrorsProblem,
  faultProblem,
  type BoundedFault,
} from '../emulator/faults.js';
import type { Faults } from '../emulator/index.js';
import { devicesProblem, integerProblem, optionProblem } from '../emulator/limits.js';
import { said } from '../emulator/sim-clock.js';
import { durationProblem, parseDuration } from '../playbook/duration.js';
import { isObject } from '../util/json.js';

type Json = Record<string, unknown>;

/** The default world of a test: the embedded emulator's (seed 1, 3 accounts of 50 devices). */
export interface World {
  seed?: number | string;
  accounts?: number;
  devicesPerAccount?: number;
  timeScale?: number;
}

/** Test-file name → the emulator's fault. */
const FAULT_NAMES: Record<string, keyof Faults> = {
  serverErrors: 'errorRate',
  connectionResets: 'resetRate',
  latency: 'latencyMs',
  rateLimit: 'maxRequestsPerSecond',
  sessionExpiry: 'sessionTtlSeconds',
  deviceErrors: 'deviceErrors',
  carrierDelay: 'processingSeconds',
  neverFinish: 'neverFinishRate',
  neverFinishDevices: 'neverFinishDevices',
  droppedCallbacks: 'dropCallbackRate',
};

/** The fault's bound (faults.ts), when it has one. */
const boundOf = (fault: keyof Faults) =>
  fault in FAULT_BOUNDS ? FAULT_BOUNDS[fault as BoundedFault] : undefined;

/** A test file's value as the emulator's fault takes it: a duration in the unit of its bound. */
function convert(fault: keyof Faults, v: unknown): unknown {
  const unit = boundOf(fault)?.unit;
  return unit ? (parseDuration(String(v)) ?? 0) / unit.ms : v;
}

/** The emulator's faults for a test file's `faults` (already checked against its schema). */
export function emulatorFaults(faults: Json): Partial<Faults> {
  const out: Json = {};
  for (const [name, value] of Object.entries(faults)) {
    const fault = FAULT_NAMES[name] as keyof Faults;
    out[fault] = convert(fault, value);
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

/**
 * What the emulator would refuse of the worlds and faults of a test file (already checked against its schema:
 * a value of the wrong type is told there, and not here): each value at its place, with the test file's name
 * for it (`faults.carrierDelay`, not the emulator's `processingSeconds`), by the emulator's own limits. A case
 * would otherwise fail when it ran, with the emulator's names (`Invalid faults: processingSeconds must be ...`).
 */
export function settingProblems(file: Json): SettingProblem[] {
  const out: SettingProblem[] = [];
  const fileWorld = isObject(file.world) ? file.world : {};
  out.push(...worldProblems(file.world, ['world']), ...faultProblems(file.faults, ['faults']));
  const size = sizeProblem(fileWorld, ['world']);
  if (size) out.push(size);
  if (Array.isArray(file.cases))
    file.cases.forEach((c: unknown, i) => {
      if (!isObject(c)) return;
      out.push(...worldProblems(c.world, ['cases', i, 'world']));
      // The case's world over the file's: told at the case's when it gives a size of its own.
      if (isObject(c.world) && ('accounts' in c.world || 'devicesPerAccount' in c.world)) {
        const own = sizeProblem({ ...fileWorld, ...c.world }, ['cases', i, 'world']);
        if (own) out.push(own);
      }
      out.push(...faultProblems(c.faults, ['cases', i, 'faults']));
      if (Array.isArray(c.before))
        c.before.forEach((e: unknown, j) => {
          if (isObject(e)) out.push(...faultProblems(e.faults, ['cases', i, 'before', j, 'faults']));
        });
    });
  return out;
}

/** The values of one `world` the emulator would refuse (limits.ts), by the test file's names. */
function worldProblems(world: unknown, at: Seg[]): SettingProblem[] {
  if (!isObject(world)) return [];
  const out: SettingProblem[] = [];
  for (const key of ['seed', 'accounts', 'devicesPerAccount', 'timeScale'] as const) {
    // A value of the wrong type is told by the schema, at the same place, and not again.
    const message =
      world[key] === undefined
        ? undefined
        : optionProblem(key, world[key], { names: { [key]: `world.${key}` } });
    if (message) out.push({ path: [...at, key], message, rule: 'schema' });
  }
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

/**
 * The values of one `faults` the emulator would refuse (faults.ts's bounds), by the test file's names: a duration
 * as written, said against the longest the fault takes.
 */
function faultProblems(faults: unknown, at: Seg[]): SettingProblem[] {
  if (!isObject(faults)) return [];
  const out: SettingProblem[] = [];
  for (const [name, value] of Object.entries(faults)) {
    const fault = FAULT_NAMES[name];
    const bound = fault && boundOf(fault);
    const key = `faults.${name}`;
    let message: string | undefined;
    let rule: SettingProblem['rule'] = 'schema';
    if (fault === 'deviceErrors' && isObject(value)) {
      message = deviceErrorsProblem(
        Object.values(value).filter((r): r is number => typeof r === 'number'),
        key,
      );
      // Each rate out of its range at its own place; one of another type is the schema's to tell.
      for (const [type, rate] of Object.entries(value)) {
        const problem = typeof rate === 'number' ? deviceErrorRateProblem(type, rate, key) : undefined;
        if (problem) out.push({ path: [...at, name, type], message: `${problem}, got ${said(rate)}`, rule });
      }
    } else if (bound?.unit && typeof value === 'string' && parseDuration(value) !== undefined) {
      const v = convert(fault as keyof Faults, value) as number;
      rule = 'duration';
      // A wait on a timer is a duration of the file, as long as a playbook's may be: shorter than the timer's.
      if (bound.unit.timer) message = durationProblem(key, value);
      if (!message && faultProblem(fault as BoundedFault, v))
        message =
          v <= bound.min
            ? `${key} is zero: ${bound.unit.zero ?? 'it takes no time'}; give a duration above zero`
            : `${key} ${value} is longer than ${bound.unit.longest}`;
    } else if (bound && !bound.unit && typeof value === 'number') {
      const problem = faultProblem(fault as BoundedFault, value, key);
      if (problem) message = `${problem}, got ${said(value)}`;
    }
    if (message) out.push({ path: [...at, name], message, rule });
  }
  return out;
}
