/**
 * Fault injection, set by `PUT /_emulator/faults` (product.md section 6). A PUT replaces the whole set: a
 * field left out goes back to its default, so a test states every fault it relies on.
 */
import { isAction } from '../api/catalog.js';
import { isDeviceErrorType } from '../api/device-errors.js';
import {
  MAX_NEVER_FINISH_DEVICES,
  MAX_REQUESTS_PER_SECOND,
  MAX_RESET_NEXT,
  MAX_SIMULATED_SECONDS,
} from './limits.js';

export interface Faults {
  /** Share of API requests answered 500 INTERNAL_ERROR before they act. @default 0 */
  errorRate: number;
  /** Share of API requests whose connection is reset after they acted: the answer is lost. @default 0 */
  resetRate: number;
  /**
   * The next requests of an operation, by action name, whose connection is reset after they acted: the answer is
   * lost (a refusal of the handler too: a wrong password's 401), whatever `resetRate` draws. Each reset counts one
   * down; `GET /_emulator/faults` shows what is left.
   * @default {}
   * @example { "session.login": 2 }
   */
  resetNext: Record<string, number>;
  /** Delay before every API answer, in ms. @default 0 */
  latencyMs: number;
  /** Requests allowed in any one-second window; above it, 429 with Retry-After. 0 = no limit. @default 0 */
  maxRequestsPerSecond: number;
  /** Session idle lifetime, in simulated seconds, above 0 and at most a year (31536000). @default 1200 (20 minutes) */
  sessionTtlSeconds: number;
  /** Per-device error rates in location results, by 7.3 type, e.g. `{ "ABSENT SUBSCRIBER": 0.05 }`. @default {} */
  deviceErrors: Record<string, number>;
  /** Deliveries per callback message, in all (the envelope's maxCallbackThreshold). @default 4 */
  maxCallbackThreshold: number;
  /** Delay before the first re-delivery of an unacknowledged callback, doubled each time, in real ms. @default 1000 */
  callbackRetryMs: number;
  /**
   * Simulated seconds the carrier takes to carry out an asynchronous request (device-state actions, SMS): until
   * then the request is `Pending`, its devices are unchanged and no callback is sent. 0 carries it out at once;
   * at most a year (31536000).
   * @default 0
   * @example 30
   */
  processingSeconds: number;
  /** Share of the devices of asynchronous requests that the carrier never finishes: `Pending` forever, unchanged, no callback. @default 0 */
  neverFinishRate: number;
  /**
   * Devices, by any of their identifiers, that the carrier never finishes in any asynchronous request.
   * @default []
   * @example ["353456789012345"]
   */
  neverFinishDevices: string[];
  /** Share of per-device CarrierService callbacks that are never sent: the device is done, nobody is told. @default 0 */
  dropCallbackRate: number;
}

export const DEFAULT_FAULTS: Readonly<Faults> = Object.freeze({
  errorRate: 0,
  resetRate: 0,
  resetNext: {},
  latencyMs: 0,
  maxRequestsPerSecond: 0,
  sessionTtlSeconds: 1200,
  deviceErrors: {},
  maxCallbackThreshold: 4,
  callbackRetryMs: 1000,
  processingSeconds: 0,
  neverFinishRate: 0,
  neverFinishDevices: [],
  dropCallbackRate: 0,
});

/** The defaults, with members of their own (a fault set is never shared with DEFAULT_FAULTS). */
export function defaultFaults(): Faults {
  return { ...DEFAULT_FAULTS, resetNext: {}, deviceErrors: {}, neverFinishDevices: [] };
}

/**
 * A numeric fault's range: from `min` (above it, when `above`) to `max`, an integer when `integer`. `note` says
 * what the number is; `unit` is the time it counts, for a test file that writes it as a duration.
 */
export interface FaultBound {
  min: number;
  above?: true;
  max: number;
  integer?: true;
  note?: string;
  unit?: {
    /** Milliseconds in one. */
    ms: number;
    /** The most it takes, as a duration is said. */
    longest: string;
    /** Why it cannot be zero, when it cannot. */
    zero?: string;
    /** A wait of real time, on a timer (the rest are simulated time). */
    timer?: true;
  };
}

/** A timer fires at once when set for more than 2147483647 ms (Node), so that the fault would be a 1 ms one. */
const MAX_TIMER_MS = 2_147_483_647;
const RATE: FaultBound = { min: 0, max: 1 };
const TIMER: FaultBound = {
  min: 0,
  max: MAX_TIMER_MS,
  note: 'milliseconds: the longest a timer waits',
  unit: { ms: 1, longest: '24.8 days, the longest a timer waits', timer: true },
};
const SIMULATED_UNIT = { ms: 1000, longest: `a year (${MAX_SIMULATED_SECONDS / 86_400}d) of simulated time` };
const SIMULATED: FaultBound = {
  min: 0,
  max: MAX_SIMULATED_SECONDS,
  note: 'simulated seconds: a year',
  unit: SIMULATED_UNIT,
};

const BOUNDS = {
  errorRate: RATE,
  resetRate: RATE,
  neverFinishRate: RATE,
  dropCallbackRate: RATE,
  latencyMs: TIMER,
  callbackRetryMs: TIMER,
  maxRequestsPerSecond: { min: 0, max: MAX_REQUESTS_PER_SECOND, integer: true, note: '0: no limit' },
  processingSeconds: SIMULATED,
  sessionTtlSeconds: {
    ...SIMULATED,
    above: true,
    unit: { ...SIMULATED_UNIT, zero: 'a session would expire at once' },
  },
  maxCallbackThreshold: { min: 1, max: 100, integer: true },
} satisfies Partial<Record<keyof Faults, FaultBound>>;

/** The faults that are numbers. */
export type BoundedFault = keyof typeof BOUNDS;

/** The range of each numeric fault, in the order a fault set is checked. */
export const FAULT_BOUNDS: Readonly<Record<BoundedFault, FaultBound>> = BOUNDS;

/** Whether `v` is a number of the bound `b`. */
function within(b: FaultBound, v: unknown): v is number {
  return (
    typeof v === 'number' &&
    (b.above ? v > b.min : v >= b.min) &&
    v <= b.max &&
    (!b.integer || Number.isInteger(v))
  );
}

/** What is wrong with `v` as the fault `key`, named `name`; undefined when nothing. */
export function faultProblem(key: BoundedFault, v: unknown, name: string = key): string | undefined {
  const b = FAULT_BOUNDS[key];
  if (within(b, v)) return undefined;
  const range = b.above ? `above ${b.min}, at most ${b.max}` : `from ${b.min} to ${b.max}`;
  return `${name} must be ${b.integer ? 'an integer' : 'a number'} ${range}${b.note ? ` (${b.note})` : ''}`;
}

/** What is wrong with `rate` as the rate of the per-device error `type` (of the rates named `name`). */
export function deviceErrorRateProblem(
  type: string,
  rate: unknown,
  name = 'deviceErrors',
): string | undefined {
  return within(RATE, rate)
    ? undefined
    : `${name}: the rate of ${type} must be a number from ${RATE.min} to ${RATE.max}`;
}

/** What is wrong with per-device error rates that add up to more than 1 (the rates named `name`). */
export function deviceErrorsProblem(rates: number[], name = 'deviceErrors'): string | undefined {
  const sum = rates.reduce((a, b) => a + b, 0);
  // A sum a rounding error above 1 is 1.
  return sum > 1 + 1e-9 ? `${name}: the rates add up to ${sum}, more than 1` : undefined;
}

/** A fault set from a request body, or the reason it is refused. */
export function parseFaults(body: unknown): Faults | string {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    return 'the body must be a JSON object';
  const b = body as Record<string, unknown>;
  const known = new Set(Object.keys(DEFAULT_FAULTS));
  for (const k of Object.keys(b))
    if (!known.has(k)) return `unknown fault \`${k}\`: the faults are ${[...known].join(', ')}`;
  const out = defaultFaults();
  for (const k of Object.keys(FAULT_BOUNDS) as BoundedFault[]) {
    const v = b[k];
    if (v === undefined) continue;
    const problem = faultProblem(k, v);
    if (problem) return problem;
    out[k] = v as number;
  }
  if (b.resetNext !== undefined) {
    const r = b.resetNext;
    if (r === null || typeof r !== 'object' || Array.isArray(r))
      return 'resetNext must be an object of { "<action>": number of requests }';
    for (const [action, n] of Object.entries(r as Record<string, unknown>)) {
      if (!isAction(action)) return `resetNext: \`${action}\` is not an action (e.g. session.login)`;
      if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > MAX_RESET_NEXT)
        return `resetNext: the requests of ${action} must be an integer from 0 to ${MAX_RESET_NEXT}`;
      if (n > 0) out.resetNext[action] = n;
    }
  }
  if (b.deviceErrors !== undefined) {
    const d = b.deviceErrors;
    if (d === null || typeof d !== 'object' || Array.isArray(d))
      return 'deviceErrors must be an object of { "<7.3 error type>": rate }';
    for (const [type, rate] of Object.entries(d as Record<string, unknown>)) {
      if (!isDeviceErrorType(type))
        return `deviceErrors: \`${type}\` is not an error type of spec section 7.3`;
      const problem = deviceErrorRateProblem(type, rate);
      if (problem) return problem;
      out.deviceErrors[type] = rate as number;
    }
    const sum = deviceErrorsProblem(Object.values(out.deviceErrors));
    if (sum) return sum;
  }
  if (b.neverFinishDevices !== undefined) {
    const d = b.neverFinishDevices;
    if (
      !Array.isArray(d) ||
      d.length > MAX_NEVER_FINISH_DEVICES ||
      !d.every((x) => typeof x === 'string' && x !== '')
    )
      return `neverFinishDevices must be a list of at most ${MAX_NEVER_FINISH_DEVICES} device identifiers`;
    out.neverFinishDevices = [...(d as string[])];
  }
  return out;
}

/** The per-device error a uniform draw `u` selects, the rates stacked in key order; undefined for none. */
export type DeviceErrorPick = (u: number) => string | undefined;

export function deviceErrorPicker(rates: Record<string, number>): DeviceErrorPick {
  const table: [number, string][] = [];
  let acc = 0;
  for (const [type, rate] of Object.entries(rates)) {
    if (rate <= 0) continue;
    acc += rate;
    table.push([acc, type]);
  }
  if (table.length === 0) return () => undefined;
  return (u) => {
    for (const [limit, type] of table) if (u < limit) return type;
    return undefined;
  };
}

/**
 * At most `max` requests in any window of one second, measured on the wall clock: the times of the last
 * `max` admitted requests sit in a ring, and a request is admitted when the oldest of them is a second old.
 */
export class RateGate {
  private readonly ring: Float64Array;
  private head = 0;
  readonly max: number;

  constructor(max: number) {
    this.max = max;
    this.ring = new Float64Array(max).fill(-Infinity);
  }

  /** 0 when admitted (and counted), else the whole seconds to wait for Retry-After. */
  take(nowMs: number): number {
    const oldest = this.ring[this.head] as number;
    if (nowMs - oldest < 1000) return Math.max(1, Math.ceil((oldest + 1000 - nowMs) / 1000));
    this.ring[this.head] = nowMs;
    this.head = (this.head + 1) % this.max;
    return 0;
  }
}
