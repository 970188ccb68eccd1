/**
 * The carrier's record of its asynchronous requests (the device-state actions and SMS): what it did to each
 * device of a request, as the request-status operation sums it up and as the per-device CarrierService
 * callbacks report it. Tests compare fleetbook's ledger with it (`GET /_emulator/requests`, `emu.request()`).
 *
 * A benchmark suspends tens of thousands of devices and a test then reads every one back, so a request keeps
 * its devices in one `Int32Array` (device number and a word of status, reason, kind and flags), not an object
 * per device. The identifiers a device was named by are rebuilt from its number and the kind it was named by;
 * only a device named otherwise (several identifiers, another spelling) keeps its request entry.
 */
import { DEVICE_KINDS } from '../api/identifiers.js';
import type { DeviceStore } from './devices.js';
import type { DeviceIdPair } from './seed.js';
import { iso } from './sim-clock.js';

export type DeviceStatus = 'Pending' | 'Success' | 'Failed';
/** As the request-status operation answers it: `Failure` is the real service's spelling (its SDKs' enum). */
export type RequestStatus = 'Pending' | 'Success' | 'Failure' | 'PartialSuccess';

/** Why the carrier did not do what a device was asked: a code of CARRIER_ERRORS (api/device-errors.ts). */
export interface Reason {
  code: string;
  message: string;
}

/** One device of a request, as the carrier recorded it. */
export interface RequestDeviceRecord {
  /** The identifiers the request named the device by. */
  deviceIds: DeviceIdPair[];
  status: DeviceStatus;
  /** Only when `Failed`. */
  reason?: Reason;
  /** The device is done but its CarrierService callback was dropped (fault `dropCallbackRate`). */
  callbackDropped?: true;
}

/** A request, as the carrier recorded it. */
export interface RequestRecord {
  requestId: string;
  /** The catalog action, e.g. `devices.suspend`. */
  action: string;
  accountName: string;
  /** Simulated time the request was answered. */
  receivedAt: string;
  /** As the request-status operation answers it. */
  status: RequestStatus;
  /** Simulated time the carrier finished every device; absent while any is Pending. */
  completedAt?: string;
  devices: RequestDeviceRecord[];
}

// The word kept per device: status (2 bits), reason (8), the kind it was named by (4), flags.
const STATUS_MASK = 0b11;
const PENDING = 0;
const SUCCESS = 1;
const FAILED = 2;
const STATUS_NAMES: DeviceStatus[] = ['Pending', 'Success', 'Failed'];
const REASON_SHIFT = 2;
const KIND_SHIFT = 10;
/** The kind field of a device whose entry is kept as the request named it. */
const AS_NAMED = 15;
const NEVER_FINISH = 1 << 14;
const DROPPED = 1 << 15;
/** Its callback is to be dropped (a fault drawn when the request came). */
const DROPS = 1 << 16;

/**
 * Reasons are few (an action's sentence and the device's state): each is kept once, and a device holds its
 * index. Index 0 is no reason.
 */
const reasons: Reason[] = [{ code: '', message: '' }];
const reasonIndex = new Map<string, number>();

/** The index of a reason, added on first use. */
export function reasonId(code: string, message: string): number {
  const key = `${code}\0${message}`;
  let i = reasonIndex.get(key);
  if (i === undefined) {
    if (reasons.length > 255) throw new Error('emulator: more than 255 distinct request failure reasons');
    i = reasons.length;
    reasons.push(Object.freeze({ code, message }));
    reasonIndex.set(key, i);
  }
  return i;
}

export function reasonOf(id: number): Reason {
  return reasons[id] as Reason;
}

export class CarrierRequest {
  readonly requestId: string;
  readonly action: string;
  readonly account: number;
  readonly accountName: string;
  /** Simulated ms. */
  readonly receivedAt: number;
  /** Simulated ms at which the carrier carries it out. */
  readonly dueAt: number;
  /** Simulated ms the carrier finished its last device. */
  completedAt?: number;
  private readonly slots: Int32Array;
  private named?: Map<number, DeviceIdPair[]>;
  private pendingCount: number;
  private failedCount = 0;

  constructor(o: {
    requestId: string;
    action: string;
    account: number;
    accountName: string;
    receivedAt: number;
    dueAt: number;
    size: number;
  }) {
    this.requestId = o.requestId;
    this.action = o.action;
    this.account = o.account;
    this.accountName = o.accountName;
    this.receivedAt = o.receivedAt;
    this.dueAt = o.dueAt;
    this.slots = new Int32Array(2 * o.size);
    this.pendingCount = o.size;
  }

  get size(): number {
    return this.slots.length >> 1;
  }

  get pending(): number {
    return this.pendingCount;
  }

  get status(): RequestStatus {
    if (this.pendingCount > 0) return 'Pending';
    if (this.failedCount === 0) return 'Success';
    return this.failedCount === this.size ? 'Failure' : 'PartialSuccess';
  }

  /**
   * Sets device `i`: its number and how the request named it. `neverFinish`: the carrier will never finish it;
   * `dropsCallback`: its CarrierService callback is never sent.
   */
  setDevice(
    i: number,
    n: number,
    ids: DeviceIdPair[],
    store: DeviceStore,
    neverFinish: boolean,
    dropsCallback = false,
  ): void {
    const first = ids[0] as DeviceIdPair;
    let kind = ids.length === 1 ? KIND_CODES.get(first.kind) : undefined;
    if (kind === undefined || store.idOf(n, first.kind) !== first.id) {
      kind = AS_NAMED;
      (this.named ??= new Map()).set(i, ids);
    }
    this.slots[2 * i] = n;
    this.slots[2 * i + 1] =
      (kind << KIND_SHIFT) | (neverFinish ? NEVER_FINISH : 0) | (dropsCallback ? DROPS : 0);
  }

  device(i: number): number {
    return this.slots[2 * i] as number;
  }

  neverFinishes(i: number): boolean {
    return ((this.slots[2 * i + 1] as number) & NEVER_FINISH) !== 0;
  }

  /** Whether device `i`'s callback is to be dropped. */
  dropsCallback(i: number): boolean {
    return ((this.slots[2 * i + 1] as number) & DROPS) !== 0;
  }

  /** The identifiers the request named device `i` by. */
  deviceIds(i: number, store: DeviceStore): DeviceIdPair[] {
    const word = this.slots[2 * i + 1] as number;
    const kind = (word >> KIND_SHIFT) & 15;
    if (kind === AS_NAMED) return this.named?.get(i) as DeviceIdPair[];
    const k = DEVICE_KINDS[kind] as string;
    return [{ id: store.idOf(this.device(i), k) as string, kind: k }];
  }

  /** Records what the carrier did to device `i`: done, or failed for the reason of index `reason`. */
  settle(i: number, reason: number): void {
    const w = this.slots[2 * i + 1] as number;
    if ((w & STATUS_MASK) !== PENDING) return;
    this.slots[2 * i + 1] =
      (w & ~(STATUS_MASK | (255 << REASON_SHIFT))) | (reason ? FAILED : SUCCESS) | (reason << REASON_SHIFT);
    this.pendingCount--;
    if (reason) this.failedCount++;
  }

  dropCallback(i: number): void {
    this.slots[2 * i + 1] = (this.slots[2 * i + 1] as number) | DROPPED;
  }

  /** Device `i` as the record shows it. */
  entry(i: number, store: DeviceStore): RequestDeviceRecord {
    const w = this.slots[2 * i + 1] as number;
    const status = STATUS_NAMES[w & STATUS_MASK] as DeviceStatus;
    const out: RequestDeviceRecord = { deviceIds: this.deviceIds(i, store), status };
    if (status === 'Failed') out.reason = reasonOf((w >> REASON_SHIFT) & 255);
    if (w & DROPPED) out.callbackDropped = true;
    return out;
  }

  record(store: DeviceStore): RequestRecord {
    const devices: RequestDeviceRecord[] = new Array<RequestDeviceRecord>(this.size);
    for (let i = 0; i < devices.length; i++) devices[i] = this.entry(i, store);
    const status = this.status;
    return {
      requestId: this.requestId,
      action: this.action,
      accountName: this.accountName,
      receivedAt: iso(this.receivedAt),
      status,
      ...(status !== 'Pending' && this.completedAt !== undefined
        ? { completedAt: iso(this.completedAt) }
        : {}),
      devices,
    };
  }
}

export interface RequestFilter {
  requestId?: string;
  accountName?: string;
  /** A catalog action, e.g. `devices.suspend`. */
  action?: string;
  /** Only the newest this many. */
  limit?: number;
}

function matches(r: CarrierRequest, f: RequestFilter): boolean {
  return (
    (f.accountName === undefined || r.accountName === f.accountName) &&
    (f.action === undefined || r.action === f.action)
  );
}

const KIND_CODES = new Map<string, number>(DEVICE_KINDS.map((k, i) => [k, i]));

/** Requests kept by default: the most recent, up to this many devices in all… */
export const KEEP_REQUEST_DEVICES = 2_000_000;
/** …and this many requests. */
export const KEEP_REQUESTS = 200_000;

/**
 * The requests of the current world, oldest first. Bounded: when the devices of all kept requests pass
 * `maxDevices`, or the requests `maxRequests`, the oldest are forgotten (a forgotten request is unknown to the
 * request-status operation). A request still in progress is carried out even when forgotten.
 */
export class RequestLog {
  private readonly byId = new Map<string, CarrierRequest>();
  private devices = 0;
  readonly maxDevices: number;
  readonly maxRequests: number;

  constructor(maxDevices = KEEP_REQUEST_DEVICES, maxRequests = KEEP_REQUESTS) {
    this.maxDevices = maxDevices;
    this.maxRequests = maxRequests;
  }

  add(r: CarrierRequest): void {
    this.byId.set(r.requestId, r);
    this.devices += r.size;
    while (this.byId.size > 1 && (this.devices > this.maxDevices || this.byId.size > this.maxRequests)) {
      const oldest = this.byId.values().next().value as CarrierRequest;
      this.byId.delete(oldest.requestId);
      this.devices -= oldest.size;
    }
  }

  get(requestId: string): CarrierRequest | undefined {
    return this.byId.get(requestId);
  }

  /** The records of the requests kept, oldest first, narrowed by `filter`; `limit` keeps the newest. */
  records(store: DeviceStore, filter: RequestFilter = {}): RequestRecord[] {
    if (filter.requestId !== undefined) {
      const r = this.byId.get(filter.requestId);
      return r && matches(r, filter) ? [r.record(store)] : [];
    }
    const picked: CarrierRequest[] = [];
    for (const r of this.byId.values()) if (matches(r, filter)) picked.push(r);
    const from = filter.limit !== undefined ? Math.max(0, picked.length - filter.limit) : 0;
    return picked.slice(from).map((r) => r.record(store));
  }

  values(): IterableIterator<CarrierRequest> {
    return this.byId.values();
  }

  get size(): number {
    return this.byId.size;
  }

  /** Devices of the requests kept. */
  get deviceCount(): number {
    return this.devices;
  }
}
