/**
 * Fault injection, set by `PUT /_emulator/faults` (product.md section 6). A PUT replaces the whole set: a
 * field left out goes back to its default, so a test states every fault it relies on.
 */
import { isDeviceErrorType } from '../api/device-errors.js';
import { MAX_NEVER_FINISH_DEVICES, MAX_REQUESTS_PER_SECOND, MAX_SIMULATED_SECONDS } from './limits.js';

export interface Faults {
  /** Share of API requests answered 500 INTERNAL_ERROR before they act. @default 0 */
  errorRate: number;
  /** Share of API requests whose connection is reset after they acted: the answer is lost. @default 0 */
  resetRate: number;
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
  return { ...DEFAULT_FAULTS, deviceErrors: {}, neverFinishDevices: [] };
}

const RATE_FIELDS = ['errorRate', 'resetRate', 'neverFinishRate', 'dropCallbackRate'] as const;
/** Waits on a timer: one of more than 2147483647 ms fires at once (Node), so that the fault would be a 1 ms one. */
const TIMER_FIELDS = ['latencyMs', 'callbackRetryMs'] as const;
const MAX_TIMER_MS = 2_147_483_647;

/** A fault set from a request body, or the reason it is refused. */
export function parseFaults(body: unknown): Faults | string {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    return 'the body must be a JSON object';
  const b = body as Record<string, unknown>;
  const known = new Set(Object.keys(DEFAULT_FAULTS));
  for (const k of Object.keys(b))
    if (!known.has(k)) return `unknown fault \`${k}\`: the faults are ${[...known].join(', ')}`;
  const out = defaultFaults();
  for (const k of RATE_FIELDS) {
    const v = b[k];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !(v >= 0 && v <= 1)) return `${k} must be a number from 0 to 1`;
    out[k] = v;
  }
  for (const k of TIMER_FIELDS) {
    const v = b[k];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !(v >= 0 && v <= MAX_TIMER_MS))
      return `${k} must be a number from 0 to ${MAX_TIMER_MS} (milliseconds: the longest a timer waits)`;
    out[k] = v;
  }
  if (b.maxRequestsPerSecond !== undefined) {
    const v = b.maxRequestsPerSecond;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > MAX_REQUESTS_PER_SECOND)
      return `maxRequestsPerSecond must be an integer from 0 to ${MAX_REQUESTS_PER_SECOND} (0: no limit)`;
    out.maxRequestsPerSecond = v;
  }
  if (b.processingSeconds !== undefined) {
    const v = b.processingSeconds;
    if (typeof v !== 'number' || !(v >= 0 && v <= MAX_SIMULATED_SECONDS))
      return `processingSeconds must be a number from 0 to ${MAX_SIMULATED_SECONDS} (simulated seconds: a year)`;
    out.processingSeconds = v;
  }
  if (b.sessionTtlSeconds !== undefined) {
    const v = b.sessionTtlSeconds;
    if (typeof v !== 'number' || !(v > 0 && v <= MAX_SIMULATED_SECONDS))
      return `sessionTtlSeconds must be a number above 0, at most ${MAX_SIMULATED_SECONDS} (simulated seconds: a year)`;
    out.sessionTtlSeconds = v;
  }
  if (b.maxCallbackThreshold !== undefined) {
    const v = b.maxCallbackThreshold;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 100)
      return 'maxCallbackThreshold must be an integer from 1 to 100';
    out.maxCallbackThreshold = v;
  }
  if (b.deviceErrors !== undefined) {
    const d = b.deviceErrors;
    if (d === null || typeof d !== 'object' || Array.isArray(d))
      return 'deviceErrors must be an object of { "<7.3 error type>": rate }';
    let sum = 0;
    for (const [type, rate] of Object.entries(d as Record<string, unknown>)) {
      if (!isDeviceErrorType(type))
        return `deviceErrors: \`${type}\` is not an error type of spec section 7.3`;
      if (typeof rate !== 'number' || !(rate >= 0 && rate <= 1))
        return `deviceErrors: the rate of ${type} must be a number from 0 to 1`;
      sum += rate;
      out.deviceErrors[type] = rate;
    }
    if (sum > 1 + 1e-9) return `deviceErrors: the rates add up to ${sum}, more than 1`;
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
