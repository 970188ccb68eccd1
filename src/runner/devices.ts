/**
 * What a step does to devices: which devices an action's input names, the state a device-state action leaves a
 * device in (to reconcile an unknown outcome), and per-device results from location entries.
 */
import { deviceErrorClass } from '../api/device-errors.js';
import type { DeviceResult } from '../store/store.js';

type Json = Record<string, unknown>;

export interface DeviceRef {
  id: string;
  kind: string;
}

/** The devices an action input names, one identifier each (the first, for multi-identifier entries). */
export function devicesOf(action: string, input: Json): DeviceRef[] {
  if (Array.isArray(input.deviceList)) {
    return (input.deviceList as Json[]).map((d) => ({
      id: String(d.id),
      kind: String(d.kind).toLowerCase(),
    }));
  }
  if (Array.isArray(input.devices)) {
    return (input.devices as Json[]).map((d) => {
      const first = Array.isArray(d.deviceIds) ? ((d.deviceIds as Json[])[0] ?? {}) : d;
      return { id: String(first.id), kind: String(first.kind).toLowerCase() };
    });
  }
  if (action === 'location.setExclusions' && Array.isArray(input.exclusion)) {
    return (input.exclusion as unknown[]).map((id) => ({ id: String(id), kind: 'imei' }));
  }
  return [];
}

/** `input` with its device list replaced by `keep` (a subset of devicesOf(input), matched by id). */
export function withDevices(input: Json, keep: Set<string>): Json {
  if (Array.isArray(input.deviceList)) {
    return { ...input, deviceList: (input.deviceList as Json[]).filter((d) => keep.has(String(d.id))) };
  }
  if (Array.isArray(input.devices)) {
    return {
      ...input,
      devices: (input.devices as Json[]).filter((d) => {
        const first = Array.isArray(d.deviceIds) ? ((d.deviceIds as Json[])[0] ?? {}) : d;
        return keep.has(String(first.id));
      }),
    };
  }
  return input;
}

/**
 * The filter that lists the devices a device-state action has already been applied to, for reconciling a
 * call whose answer was lost: a device already in the target state needs no second call.
 */
export function appliedFilter(action: string, input: Json): Json | undefined {
  switch (action) {
    case 'devices.suspend':
      return { state: 'suspend' };
    case 'devices.restore':
    case 'devices.activate':
      return { state: 'active' };
    case 'devices.deactivate':
      return { state: 'deactive' };
    case 'devices.changePlan':
      return { servicePlan: String(input.servicePlan) };
    default:
      return undefined;
  }
}

/** Every identifier of a listed device record. */
export function identifiersOf(record: Json): string[] {
  return Array.isArray(record.deviceIds) ? (record.deviceIds as Json[]).map((x) => String(x.id)) : [];
}

/** A location entry (`{ msid, pd, error }`) as a device result; `byMsid` maps msid to the requested device. */
export function locationResult(entry: Json, byMsid: Map<string, DeviceRef>, attempts: number): DeviceResult {
  const msid = String(entry.msid ?? '');
  const ref = byMsid.get(msid) ?? { id: msid, kind: 'msid' };
  const err = (entry.error ?? {}) as Json;
  if (typeof err.type === 'string' && err.type !== '') {
    return {
      deviceId: ref.id,
      kind: ref.kind,
      outcome: 'failed',
      errorType: err.type,
      errorClass: deviceErrorClass(err.type),
      attempts,
    };
  }
  return { deviceId: ref.id, kind: ref.kind, outcome: 'succeeded', attempts };
}
