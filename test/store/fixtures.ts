/** Records the store tests build: runs, owners, device results and callback messages. */
import {
  emptyCounts,
  type DeviceCounts,
  type DeviceGroup,
  type DeviceResult,
  type InboxMessage,
  type OwnerInfo,
  type RunRecord,
} from '../../src/store/store.js';

export const MISS = 'SVC CACHE UNAVAILABLE';

/** A 15-digit IMEI from a small number: they sort as the numbers do. */
export const imei = (n: number) => `35345678${String(n).padStart(7, '0')}`;
/** The IMEIs of devices `from` to `to` (not included). */
export const imeis = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => imei(from + i));
/** A group of devices with one result, as a step records it: succeeded at the first attempt unless `o` says. */
export const group = (ids: string[], o: Partial<DeviceGroup> = {}): DeviceGroup => ({
  kind: 'imei',
  outcome: 'succeeded',
  attempts: 1,
  ids,
  ...o,
});

export const ok = (n: number, attempts = 1): DeviceResult => ({
  deviceId: imei(n),
  kind: 'imei',
  outcome: 'succeeded',
  attempts,
});

export const miss = (n: number): DeviceResult => ({
  deviceId: imei(n),
  kind: 'imei',
  outcome: 'failed',
  errorType: MISS,
  errorClass: 'retryable',
  attempts: 1,
});

export function run(id: string, o: Partial<RunRecord> = {}): RunRecord {
  return {
    id,
    playbook: 'pb',
    status: 'running',
    trigger: { manual: true },
    inputs: {},
    startedAt: '2026-11-23T10:00:00.000Z',
    ...o,
  };
}

export function owner(id: string, o: Partial<OwnerInfo> = {}): OwnerInfo {
  return {
    id,
    role: 'daemon',
    pid: 4242,
    host: 'elsewhere',
    boot: 'b',
    startedAt: '2026-11-23T10:00:00.000Z',
    ...o,
  };
}

/** A callback message of request `requestId`, about `device` when given. */
export function message(requestId: string, device?: string): InboxMessage {
  return {
    service: 'CarrierService',
    kind: 'suspendResponse',
    requestId,
    ...(device !== undefined ? { device } : {}),
    payload: { requestId, ...(device !== undefined ? { device } : {}) },
    receivedAt: '2026-11-23T00:00:00.000Z',
  };
}

/** Device counts: none but those given. */
export const counts = (o: Partial<DeviceCounts>): DeviceCounts => ({ ...emptyCounts(), ...o });

/** The service's CarrierService message for device `n` of request `requestId`: done, or refused with `fault`. */
export function carrier(requestId: string, n: number, fault?: string): InboxMessage {
  return {
    service: 'CarrierService',
    kind: 'suspendResponse',
    requestId,
    device: `imei:${imei(n)}`,
    payload: {
      requestId,
      deviceIds: [
        { kind: 'IMEI', id: imei(n) },
        { kind: 'ICCID', id: `8901${imei(n)}` },
      ],
      status: fault ? 'Failed' : 'Success',
      ...(fault ? { faultResponse: { faultcode: fault, faultstring: 'the device is not active' } } : {}),
    },
    receivedAt: '2026-11-23T10:30:00.000Z',
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `done()` holds, up to `ms`: the caller asserts what it waited for. */
export async function until(done: () => boolean | Promise<boolean>, ms = 5_000): Promise<void> {
  for (const end = Date.now() + ms; !(await done()) && Date.now() < end;) await sleep(10);
}

/** The end of this turn of the event loop, and of the next: a turn's writes are committed by then. */
export async function nextTurns(): Promise<void> {
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
}

/** The rows of an iteration by pages (eachDeviceResult), in order. */
export async function allRows<T>(pages: AsyncIterable<T[]>): Promise<T[]> {
  const out: T[] = [];
  for await (const page of pages) out.push(...page);
  return out;
}
