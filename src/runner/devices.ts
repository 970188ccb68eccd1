/**
 * What a step does to devices: which devices an action's input names, as sets by kind; results grouped for the
 * ledger; and per-device results from location entries.
 */
import type { Operation } from '../api/catalog.js';
import { deviceErrorClass, ownType, specErrorType } from '../api/device-errors.js';
import { InputError } from '../errors.js';
import { hasNul, nulRefusal } from '../util/nul.js';
import type { DeviceGroup, DeviceResult, ItemRuns } from '../store/store.js';
import { StepError } from './types.js';

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
  /**
   * One per kind (in lower case), in the order the kinds first came. A set read from a list of devices sent
   * again (stored-retries.ts) has one per kind and error the devices were sent again for (`was`).
   */
  groups: { kind: string; ids: string[]; was?: string }[];
  size: number;
}

/**
 * The devices an action input names (DeviceSet), in one pass over them: its `deviceList` or `devices`, else the
 * member its operation names them in (`devicesIn`): a list of `{ id, kind }`, or of IMEIs. An identifier or a
 * kind with a NUL character is refused (FB_INPUT, before anything is locked, sent or stored): no device's has
 * one, and PostgreSQL's text cannot hold one (SQLite's can), so that a run given one (by its inputs, a callback's
 * event, a listing) would fail on one store and not the other.
 */
export function devicesOf(op: Operation | undefined, input: Json): DeviceSet {
  const set: DeviceSet = { groups: [], size: 0 };
  const seen = new FirstSeen(set);
  const { key, named, list } = listOf(op, input);
  if (list !== undefined) {
    let ids: string[] = [];
    let kindAsGiven: unknown;
    for (let i = 0; i < list.length; i++) {
      const d = list[i] as Json;
      const entry = Array.isArray(d.deviceIds);
      const first = entry ? ((d.deviceIds as Json[])[0] ?? {}) : d;
      const id = String(first.id);
      if (hasNul(id)) refuseNul(op, id, entryPath(key, i, entry, '/id'));
      if (!seen.first(id)) continue;
      // Kinds come in runs: the group of the device before usually fits.
      if (first.kind !== kindAsGiven || !set.groups.length) {
        kindAsGiven = first.kind;
        const kind = String(kindAsGiven);
        if (hasNul(kind)) refuseNul(op, kind, entryPath(key, i, entry, '/kind'));
        ids = groupFor(set, kind.toLowerCase());
      }
      ids.push(id);
      set.size++;
    }
  } else if (Array.isArray(named)) {
    const ids = groupFor(set, 'imei');
    for (let i = 0; i < named.length; i++) {
      const id = String(named[i]);
      if (hasNul(id)) refuseNul(op, id, `/${key}/${i}`);
      if (!seen.first(id)) continue;
      ids.push(id);
      set.size++;
    }
  }
  return set;
}

/**
 * Whether each identifier of a list comes for the first time (devicesOf). While they come in ascending order, as
 * a listing's (and its batches') do, none can be one before it, and no set of them is needed: a hash of every
 * identifier of every batch was the most of devicesOf's cost. The first out of order makes the set, of the
 * identifiers of `set` so far, and each after it is looked up in it.
 */
class FirstSeen {
  /** The identifier before, the greatest so far while no set is made. */
  private last: string | undefined;
  private seen?: Set<string>;

  constructor(private readonly set: DeviceSet) {}

  /** Whether `id` comes for the first time: it counts as come from now on. */
  first(id: string): boolean {
    if (!this.seen) {
      if (this.last === undefined || id > this.last) {
        this.last = id;
        return true;
      }
      this.seen = new Set(idsOf(this.set));
    }
    if (this.seen.has(id)) return false;
    this.seen.add(id);
    return true;
  }
}

/** Where an action input names its devices (devicesOf): its list of devices, or of IMEIs (`named`). */
function listOf(op: Operation | undefined, input: Json): { key?: string; named?: unknown; list?: Json[] } {
  const key = op?.devicesIn;
  const named = key === undefined ? undefined : input[key];
  if (Array.isArray(input.deviceList)) return { key: 'deviceList', named, list: input.deviceList as Json[] };
  if (Array.isArray(input.devices)) return { key: 'devices', named, list: input.devices as Json[] };
  if (Array.isArray(named) && typeof named[0] === 'object') return { key, named, list: named as Json[] };
  return { key, named };
}

/**
 * Refuses an identifier (or kind) with a NUL character (nulRefusal), at `path` of the input (devicesOf, which
 * tests for one first: the path is made only for a refusal).
 */
function refuseNul(op: Operation | undefined, value: string, path: string): never {
  throw new InputError(op?.action ?? 'the step', [
    { path, message: `${nulRefusal(value, identifier, "no device's")}; nothing was sent` },
  ]);
}

/** The path of `member` of the device at `i` of the input's list `key` (its first identifier in an entry). */
const entryPath = (key: string | undefined, i: number, entry: boolean, member: string) =>
  `/${key}/${i}${entry ? '/deviceIds/0' : ''}${member}`;

const identifier = (value: string) => `the identifier ${JSON.stringify(value)}`;

/**
 * An answer of the service refused where it comes in, for a NUL character (nulRefusal) in what the runner keeps
 * of it (a request id, a report's txid, a location's msid, time or error type): SQLite would keep the NUL and
 * PostgreSQL U+FFFD, so the stores would record different things. The step fails; the devices whose request
 * the service accepted are recorded with MALFORMED_ANSWER when what it did is unknown.
 */
export class MalformedAnswer extends StepError {
  constructor(message: string) {
    super(message);
    this.name = 'MalformedAnswer';
  }
}

/** The error type and class of the devices of an accepted request whose answer was refused (MalformedAnswer). */
export const MALFORMED_ANSWER = ownType('MALFORMED ANSWER');

/** The result of a device whose request may have reached the service, and no answer says what it did. */
export const OUTCOME_UNKNOWN = { outcome: 'unconfirmed', ...ownType('OUTCOME UNKNOWN') } as const;

/**
 * The refusal of `action`'s answer for a NUL character in `value`, its member `field` (a JSON path in the
 * answer, e.g. `requestId`, `devLocationList/3/msid`), of which `whose` has none ("no request id"); undefined
 * when it has none.
 */
export function answerRefusal(
  action: string,
  value: unknown,
  field: string,
  whose: string,
): MalformedAnswer | undefined {
  const why = nulRefusal(value, (v) => `its ${field} ${JSON.stringify(v)}`, whose);
  return why === undefined
    ? undefined
    : new MalformedAnswer(`${action}: the service's answer is refused: ${why}`);
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

/**
 * The kind of each device of a set, found by its identifier: for the entries of a location report, which come
 * in the order the devices were sent. The device after the one found last is tried first; a map of the set is
 * built only when an entry comes out of that order (a pass that sends some of the devices again), once.
 */
export class KindsOf {
  /** The device tried first: its group, and its place in the group. */
  private group = 0;
  private at = 0;
  /** Each device's group and place, as `place * groups + group`: made when first needed. */
  private places?: Map<string, number>;

  constructor(private readonly set: DeviceSet) {}

  /** The kind of device `id`, or undefined when the set has no such device. */
  kindOf(id: string): string | undefined {
    return this.groupOf(id)?.kind;
  }

  /** The group of device `id`, or undefined when the set has no such device. */
  groupOf(id: string): DeviceSet['groups'][number] | undefined {
    const { groups } = this.set;
    let g = groups[this.group];
    while (g && this.at >= g.ids.length && this.group < groups.length - 1) {
      g = groups[++this.group];
      this.at = 0;
    }
    if (g?.ids[this.at] === id) {
      this.at++;
      return g;
    }
    const place = this.placeOf(id);
    if (place === undefined) return undefined;
    this.group = place % groups.length;
    this.at = Math.floor(place / groups.length) + 1;
    return groups[this.group];
  }

  private placeOf(id: string): number | undefined {
    if (!this.places) {
      // Set one device after another, as a map of the devices built from refsOf would: the last place wins.
      const places = new Map<string, number>();
      const { groups } = this.set;
      groups.forEach(({ ids }, g) => ids.forEach((x, i) => places.set(x, i * groups.length + g)));
      this.places = places;
    }
    return this.places.get(id);
  }
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
  return set.groups.map(({ kind, ids }) => ({ kind, ids, ...result }));
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
      const key = `${r.kind}\0${r.outcome}\0${r.errorType ?? ''}\0${r.errorClass ?? ''}\0${r.attempts}\0${r.requestId ?? ''}\0${r.byStateRead ?? ''}`;
      g = groups.get(key);
      if (!g) {
        const { deviceId: _, data: __, ...result } = r;
        groups.set(key, (g = { ids: [], ...result }));
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

/** Whether a device's result is the group's. */
export function sameResult(g: DeviceGroup, r: DeviceResult): boolean {
  return (
    g.kind === r.kind &&
    g.outcome === r.outcome &&
    g.errorType === r.errorType &&
    g.errorClass === r.errorClass &&
    g.attempts === r.attempts &&
    g.requestId === r.requestId &&
    g.byStateRead === r.byStateRead
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

/** Every identifier of a listed device record. */
export function identifiersOf(record: Json): string[] {
  return Array.isArray(record.deviceIds) ? (record.deviceIds as Json[]).map((x) => String(x.id)) : [];
}

/** How long before its request a fix must have been taken to count as cached, for cacheMode "1". */
const CACHED_AGE_MS = 5 * 60_000;

/**
 * A location entry (`{ msid, pd, error }`) as a device result, under the report's txid (`requestId`) when it
 * came from one; `requested` tells the kind of the device requested (`msid` for a device not requested). A
 * failed device's error type is the spec's name for it (a vendor prefix read as `SVC`). A located device's
 * result carries its location as data: latitude, longitude, radius (metres), time (ISO) and whether the fix
 * came from the cache (cacheMode "0" always, "2" never, "1" when the fix is older than the request by more
 * than five minutes). An entry with a NUL character in its msid, time or error type is refused (MalformedAnswer,
 * as the answer of `request.action`, its entry `at` of `request.list`): a caller maps a whole answer or page
 * before it records any of it.
 */
export function locationResult(
  entry: Json,
  requested: KindsOf,
  attempts: number,
  request: { cacheMode?: unknown; at: number; requestId?: string; action: string; list?: string },
  at = 0,
): DeviceResult {
  const deviceId = String(entry.msid ?? '');
  const err = (entry.error ?? {}) as Json;
  const pd = (entry.pd ?? {}) as Json;
  // Tested first: a report's million entries make no path and no refusal for the ones without a NUL.
  if (hasNul(deviceId) || hasNul(err.type) || hasNul(pd.time)) {
    const field = (member: string) => `${request.list ? `${request.list}/` : ''}${at}/${member}`;
    throw (answerRefusal(request.action, deviceId, field('msid'), "no device's identifier") ??
      answerRefusal(request.action, err.type, field('error/type'), 'no error type') ??
      answerRefusal(request.action, pd.time, field('pd/time'), 'no location time'))!;
  }
  const kind = requested.kindOf(deviceId) ?? 'msid';
  const under = request.requestId === undefined ? {} : { requestId: request.requestId };
  if (typeof err.type === 'string' && err.type !== '') {
    const type = specErrorType(err.type);
    return {
      deviceId,
      kind,
      outcome: 'failed',
      errorType: type,
      errorClass: deviceErrorClass(type),
      attempts,
      ...under,
    };
  }
  const data = locationData(pd, request);
  return data
    ? { deviceId, kind, outcome: 'succeeded', attempts, ...under, data }
    : { deviceId, kind, outcome: 'succeeded', attempts, ...under };
}

function locationData(pd: Json, request: { cacheMode?: unknown; at: number }): Json | undefined {
  if (pd.x === undefined && pd.y === undefined) return undefined;
  const time = typeof pd.time === 'string' ? compactToIso(pd.time) : undefined;
  const mode = String(request.cacheMode ?? '0');
  const cached =
    mode === '0'
      ? true
      : mode === '2'
        ? false
        : time !== undefined && Date.parse(time) < request.at - CACHED_AGE_MS;
  return {
    latitude: Number(pd.x),
    longitude: Number(pd.y),
    ...(pd.radius !== undefined ? { radius: Number(pd.radius) } : {}),
    ...(time !== undefined ? { time } : {}),
    cached,
  };
}

/** `YYYYMMDDhhmmss`: made once, not at each of a report's million fixes (a literal is a new object each time). */
const COMPACT_TIME = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/;

/** `YYYYMMDDhhmmss` (UTC) as ISO 8601; anything else as it is. */
function compactToIso(t: string): string {
  const m = COMPACT_TIME.exec(t);
  return m ? `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}Z` : t;
}

/** Item runs (a checkpoint's `[kind, ids]` pairs) as a DeviceSet. */
export function setOf(runs: ItemRuns): DeviceSet {
  const set: DeviceSet = { groups: [], size: 0 };
  for (const [kind, ids] of runs) {
    groupFor(set, kind).push(...ids);
    set.size += ids.length;
  }
  return set;
}

/** The devices of ledger groups as a DeviceSet. */
export function setOfGroups(groups: readonly DeviceGroup[]): DeviceSet {
  return setOf(groups.map((g) => [g.kind, g.ids]));
}

/** A DeviceSet as item runs, the form a checkpoint keeps. */
export function runsOf(set: DeviceSet): [kind: string, ids: string[]][] {
  return set.groups.map((g) => [g.kind, g.ids]);
}
