/**
 * What a step does to devices: which devices an action's input names, the state a device-state action leaves a
 * device in (to reconcile an unknown outcome), and per-device results from location entries.
 */
import { deviceErrorClass } from '../api/device-errors.js';
import type { DeviceGroup, DeviceResult } from '../store/store.js';

type Json = Record<string, unknown>;

export interface DeviceRef {
  id: string;
  kind: string;
}

/**
 * The devices an input names, as their identifiers by kind: each device once, in the order they came, one
 * identifier each (the first, for multi-identifier entries). A step hands them to the ledger as they are.
 */
export interface DeviceSet {
  /** One per kind (in lower case), in the order the kinds first came. */
  groups: { kind: string; ids: string[] }[];
  size: number;
}

/** The devices an action input names (DeviceSet), in one pass over them. */
export function devicesOf(action: string, input: Json): DeviceSet {
  const set: DeviceSet = { groups: [], size: 0 };
  const seen = new Set<string>();
  const list = Array.isArray(input.deviceList)
    ? (input.deviceList as Json[])
    : Array.isArray(input.devices)
      ? (input.devices as Json[])
      : undefined;
  if (list !== undefined) {
    let ids: string[] = [];
    let kindAsGiven: unknown;
    for (const d of list) {
      const first = Array.isArray(d.deviceIds) ? ((d.deviceIds as Json[])[0] ?? {}) : d;
      const id = String(first.id);
      if (seen.has(id)) continue;
      seen.add(id);
      // Kinds come in runs: the group of the device before usually fits.
      if (first.kind !== kindAsGiven || !set.groups.length) {
        kindAsGiven = first.kind;
        ids = groupFor(set, String(kindAsGiven).toLowerCase());
      }
      ids.push(id);
    }
  } else if (action === 'location.setExclusions' && Array.isArray(input.exclusion)) {
    const ids = groupFor(set, 'imei');
    for (const x of input.exclusion as unknown[]) {
      const id = String(x);
      if (!seen.has(id)) ids.push(id);
      seen.add(id);
    }
  }
  set.size = seen.size;
  return set;
}

/** The identifiers of `kind` in `set`, a new group when it has none yet. */
function groupFor(set: DeviceSet, kind: string): string[] {
  let g = set.groups.find((x) => x.kind === kind);
  if (!g) set.groups.push((g = { kind, ids: [] }));
  return g.ids;
}

/** Every identifier of a set, kind after kind. */
export function idsOf(set: DeviceSet): string[] {
  return set.groups.length === 1
    ? (set.groups[0] as { ids: string[] }).ids
    : set.groups.flatMap((g) => g.ids);
}

/** Every device of a set with its kind. */
export function refsOf(set: DeviceSet): DeviceRef[] {
  return set.groups.flatMap(({ kind, ids }) => ids.map((id) => ({ id, kind })));
}

/** The devices of `set` that are (`keep` true) or are not in `ids`. */
export function subset(set: DeviceSet, ids: Set<string>, keep: boolean): DeviceSet {
  const groups = set.groups
    .map(({ kind, ids: all }) => ({ kind, ids: all.filter((id) => ids.has(id) === keep) }))
    .filter((g) => g.ids.length);
  return { groups, size: groups.reduce((n, g) => n + g.ids.length, 0) };
}

/** What a group of devices got: a DeviceGroup without its devices. */
export type GroupResult = Omit<DeviceGroup, 'ids' | 'kind'>;

/** A set's devices, which all got the same result, as ledger groups (they share the set's lists). */
export function withResult(set: DeviceSet, result: GroupResult): DeviceGroup[] {
  return set.groups.map(({ kind, ids }) => ({ ...result, kind, ids }));
}

/**
 * Per-device results as ledger groups of equal results; of a device given twice, only the last is kept.
 * `unique` says that no device is given twice (the values of a map by device), which spares checking it.
 */
export function groupResults(results: DeviceResult[], unique = false): DeviceGroup[] {
  const groups = new Map<string, DeviceGroup>();
  const seen = unique ? undefined : new Set<string>();
  let g: DeviceGroup | undefined;
  for (let i = results.length - 1; i >= 0; i--) {
    const r = results[i] as DeviceResult;
    if (seen) {
      if (seen.has(r.deviceId)) continue;
      seen.add(r.deviceId);
    }
    // Results come in runs of the same result: the group of the one before usually fits.
    if (!g || !sameResult(g, r)) {
      const key = `${r.kind}\0${r.outcome}\0${r.errorType ?? ''}\0${r.errorClass ?? ''}\0${r.attempts}\0${r.requestId ?? ''}`;
      g = groups.get(key);
      if (!g) {
        const { deviceId: _, data: __, ...result } = r;
        groups.set(key, (g = { ...result, ids: [] }));
      }
    }
    g.ids.push(r.deviceId);
    if (r.data !== undefined || g.data) (g.data ??= new Array<undefined>(g.ids.length - 1)).push(r.data);
  }
  // Built from the last result back: each group's devices in the order they came.
  const out = [...groups.values()].reverse();
  for (const x of out) {
    x.ids.reverse();
    if (x.data) {
      x.data.length = x.ids.length;
      x.data.reverse();
    }
  }
  return out;
}

function sameResult(g: DeviceGroup, r: DeviceResult): boolean {
  return (
    g.kind === r.kind &&
    g.outcome === r.outcome &&
    g.errorType === r.errorType &&
    g.errorClass === r.errorClass &&
    g.attempts === r.attempts &&
    g.requestId === r.requestId
  );
}

/** Every device of `groups` as a DeviceResult, in order. */
export function resultsOf(groups: DeviceGroup[]): DeviceResult[] {
  const out: DeviceResult[] = [];
  for (const { ids, data, ...result } of groups)
    ids.forEach((deviceId, i) => {
      const d = data?.[i];
      out.push(d ? { deviceId, ...result, data: d } : { deviceId, ...result });
    });
  return out;
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
