/**
 * Device location: exclusions (consents), synchronous locate, and location reports.
 *
 * A report stores the numbers of its devices (an Int32Array), the identifier kind each was named by and each
 * one's fault draw (EmulatorState.draw); its entries are computed per page from the seed, those draws and the
 * exclusion list as it was when the report was made. So a 100,000-device request costs 10 reports of 70 KB,
 * not 100,000 objects.
 */
import { deviceErrorClass } from '../api/device-errors.js';
import { MAX_EXCLUSIONS, MAX_REPORT_DEVICES } from '../api/limits.js';
import { locationAccount, uuid, type Answer, type Ctx, type Json } from './context.js';
import { DEACTIVE, PENDING, SUSPENDED } from './devices.js';
import { E } from './errors.js';
import { deviceErrorPicker, type DeviceErrorPick } from './faults.js';
import { notify } from './listeners.js';
import { luhnValid, unit } from './random.js';
import { DAY_MS, MINUTE_MS, compactTime, iso, startOfBillCycle } from './sim-clock.js';
import type { Core, EmulatorState, Exclusions, Report } from './state.js';

/** Identifier kinds a location request may name a device by. */
export const LOCATION_KINDS = ['imei', 'meid', 'esn'] as const;
const ID_FORMATS: Record<(typeof LOCATION_KINDS)[number], RegExp> = {
  imei: /^[0-9]{15}$/,
  meid: /^([0-9A-Fa-f]{14}|[0-9]{18})$/,
  esn: /^([0-9A-Fa-f]{8}|[0-9]{11})$/,
};
/** Entries per page of a report (public-api-facts.md) and of the exclusion list. */
export const PAGE_SIZE = 1000;
/** A report can be read for 30 days (spec section 8). */
export const REPORT_LIFETIME_MS = 30 * DAY_MS;

/** The `info` of each 7.3 error type: the meaning the spec gives it. */
const INFO: Record<string, string> = {
  'SVC CACHE UNAVAILABLE': 'Location cache has no data',
  'SVC CONSENT CHECK FAILED': 'Device is in the exclusion list',
  'SVC DEVICE TYPE CHECK FAILED': 'Device is not an IoT device',
  'SVC DEVICE DATA UNAVAILABLE': 'Device not found in the location system',
  'SVC DEVICE LOCATION DATA UNAVAILABLE': 'No location information for the device',
  'SYSTEM FAILURE': 'General problem in the location server',
  'UNSPECIFIED ERROR': 'Unspecified error',
  'UNAUTHORIZED APPLICATION': 'Requesting application not allowed',
  'UNKNOWN SUBSCRIBER': 'No such subscription',
  'ABSENT SUBSCRIBER': 'Device not reachable',
  'POSITION METHOD FAILURE': 'Position could not be obtained',
  TIMEOUT: 'Timer expiry for the requested event trigger',
  'CONGESTION IN LOCATION SERVER': 'Request not handled owing to congestion in the location server',
  'CONGESTION IN MOBILE NETWORK': 'Request not handled owing to congestion in the mobile network',
  'QOP NOT ATTAINABLE': 'The requested quality of position cannot be provided',
  'POSITIONING NOT ALLOWED': 'The subscriber does not allow positioning',
  'DISALLOWED BY LOCAL REGULATIONS': 'Disallowed by regulatory requirements',
};

export type Status = 'QUEUED' | 'INPROGRESS' | 'COMPLETED';

// ── reading a location request ──────────────────────────────────────────────────────────────────

interface LocationRequest {
  account: number;
  accountName: string;
  devices: Int32Array;
  kinds: Uint8Array;
  cacheMode: number;
}

function asModeString(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return String(v);
  throw E.inputBinding();
}

/**
 * The body of a locate or report request, checked row by row against spec 7.1 in this order: JSON binding,
 * account, accuracy and cache modes, list size, then each device (kind, format, duplicates, existence,
 * ownership and MDN).
 */
function readLocationRequest(ctx: Ctx): LocationRequest {
  const b = ctx.raw;
  if (b === null || typeof b !== 'object' || Array.isArray(b)) throw E.inputBinding();
  const body = b as Json;
  const list = body.deviceList;
  if (list !== undefined && list !== null && !Array.isArray(list)) throw E.inputBinding();
  if (body.accountName !== undefined && typeof body.accountName !== 'string') throw E.inputBinding();
  const a = locationAccount(ctx, body.accountName);
  const accuracy = asModeString(body.accuracyMode) ?? '0';
  if (accuracy !== '0') throw E.invalidAccuracyMode();
  const cache = asModeString(body.cacheMode) ?? '0';
  if (cache !== '0' && cache !== '1' && cache !== '2') throw E.invalidCacheMode();
  const items = (list ?? []) as unknown[];
  if (items.length === 0) throw E.emptyDeviceList();
  if (items.length > MAX_REPORT_DEVICES) throw E.maxDevicesExceeded();
  const devices = new Int32Array(items.length);
  const kinds = new Uint8Array(items.length);
  const seen = new Set<string>();
  const store = ctx.st.devices;
  let unknown = 0;
  let foreign = false;
  for (let i = 0; i < items.length; i++) {
    const d = items[i];
    if (d === null || typeof d !== 'object' || Array.isArray(d)) throw E.inputBinding();
    const { id, kind, mdn } = d as Json;
    if (typeof id !== 'string' || typeof kind !== 'string') throw E.inputBinding();
    if (mdn !== undefined && typeof mdn !== 'string') throw E.inputBinding();
    const k = LOCATION_KINDS.indexOf(kind.toLowerCase() as (typeof LOCATION_KINDS)[number]);
    if (k < 0) throw E.invalidKind();
    const kindName = LOCATION_KINDS[k]!;
    if (!ID_FORMATS[kindName].test(id) || (kindName === 'imei' && !luhnValid(id))) throw E.invalidIdFormat();
    const n = store.find(kindName, id);
    // The same device named twice, by the same identifier or by two of its identifiers, is a duplicate.
    const key = n >= 0 ? `#${n}` : `${kindName}:${id.toUpperCase()}`;
    if (seen.has(key)) throw E.duplicateDevices();
    seen.add(key);
    if (n < 0) {
      unknown++;
      devices[i] = -1;
      continue;
    }
    if (store.account(n) !== a.index) foreign = true;
    else if (mdn !== undefined && mdn !== store.idOf(n, 'mdn')) foreign = true;
    devices[i] = n;
    kinds[i] = k;
  }
  if (unknown > 0) throw E.deviceNotFound();
  if (foreign) throw E.ownership();
  return { account: a.index, accountName: a.name, devices, kinds, cacheMode: Number(cache) };
}

// ── per-device results ──────────────────────────────────────────────────────────────────────────

export interface LocationEntry {
  msid: string;
  pd: Json;
  error: Json;
}

interface EntryContext {
  st: EmulatorState;
  cacheMode: number;
  exclusions: Exclusions;
  pick: DeviceErrorPick;
  /** Each device's draw (EmulatorState.draw), by its place in the request. */
  draws: ArrayLike<number>;
  /** Simulated time the locations were obtained. */
  at: number;
}

function failed(msid: string, type: string, at: number): LocationEntry {
  return { msid, pd: {}, error: { time: compactTime(at), type, info: INFO[type] ?? type } };
}

/** The result for the i-th device of a request: a fix, or a 7.3 error. */
function entry(c: EntryContext, n: number, kind: number, i: number): LocationEntry {
  const store = c.st.devices;
  const world = c.st.world;
  const msid = store.idOf(n, LOCATION_KINDS[kind] as string) ?? store.primaryId(n);
  const imei = store.idOf(n, 'imei') ?? store.primaryId(n);
  if (c.exclusions.allDevice || c.exclusions.set.has(imei))
    return failed(msid, 'SVC CONSENT CHECK FAILED', c.at);
  if (!store.iot(n)) return failed(msid, 'SVC DEVICE TYPE CHECK FAILED', c.at);
  const state = store.stateCode(n);
  if (state === PENDING || state === DEACTIVE) return failed(msid, 'SVC DEVICE DATA UNAVAILABLE', c.at);
  const cached = store.hasCachedLocation(n);
  if (c.cacheMode === 0 && !cached) return failed(msid, 'SVC CACHE UNAVAILABLE', c.at);
  const draw = c.draws[i] as number;
  const injected = c.pick(unit(world.h, n, draw, 0x7e));
  // A cache miss can only happen when the cache is what was asked for.
  if (injected && (injected !== 'SVC CACHE UNAVAILABLE' || c.cacheMode === 0))
    return failed(msid, injected, c.at);
  // A suspended device is off the network: only a cached fix can be had for it.
  const fromCache = c.cacheMode === 0 || (c.cacheMode === 1 && cached) || state === SUSPENDED;
  if (state === SUSPENDED && (c.cacheMode === 2 || !cached)) return failed(msid, 'ABSENT SUBSCRIBER', c.at);
  const time = fromCache ? c.at - world.cacheAge(n, draw) : c.at;
  const home = n < world.total ? world.home(n) : { lat: 39.8, lon: -98.6, radius: 1500 };
  const day = Math.floor(time / DAY_MS);
  // Devices move about their home a little from day to day.
  const lat = home.lat + (unit(world.h, n, day, 0x1a) - 0.5) * 0.05;
  const lon = home.lon + (unit(world.h, n, day, 0x10) - 0.5) * 0.05;
  return {
    msid,
    pd: {
      time: compactTime(time),
      x: lat.toFixed(6),
      y: lon.toFixed(6),
      radius: String(home.radius),
      qos: home.radius <= 2000,
    },
    error: {},
  };
}

/** Counts located devices against the account's location subscription for its billing cycle. */
function countUsage(st: EmulatorState, account: number, devices: number, now: number): void {
  const info = st.world.accounts[account]!;
  const cycle = startOfBillCycle(now, info.billCycleDay);
  const u = st.locationUsage.get(account);
  if (!u || u.cycle !== cycle) st.locationUsage.set(account, { cycle, count: devices });
  else u.count += devices;
  let daily = st.locationDaily.get(account);
  if (!daily) st.locationDaily.set(account, (daily = new Map()));
  const day = Math.floor(now / DAY_MS);
  daily.set(day, (daily.get(day) ?? 0) + devices);
}

/** The next location draw of each device of a request, in its order. */
function drawsOf(st: EmulatorState, devices: Int32Array): Uint16Array {
  const draws = new Uint16Array(devices.length);
  for (let i = 0; i < devices.length; i++) draws[i] = st.draw('location', devices[i] as number);
  return draws;
}

// ── synchronous locate ──────────────────────────────────────────────────────────────────────────

function locate(ctx: Ctx): Answer {
  const req = readLocationRequest(ctx);
  const st = ctx.st;
  const c: EntryContext = {
    st,
    cacheMode: req.cacheMode,
    exclusions: st.exclusionsOf(req.account),
    pick: deviceErrorPicker(st.faults.deviceErrors),
    draws: drawsOf(st, req.devices),
    at: ctx.now,
  };
  const out: LocationEntry[] = [];
  for (let i = 0; i < req.devices.length; i++) out.push(entry(c, req.devices[i]!, req.kinds[i]!, i));
  countUsage(st, req.account, out.length, ctx.now);
  // When every device fails for the same reason, the request itself fails with the 7.1 row for it.
  const first = out[0]?.error.type as string | undefined;
  if (first && out.every((e) => e.error.type === first)) {
    switch (first) {
      case 'SVC CONSENT CHECK FAILED':
        throw E.consentCheckFailed();
      case 'SVC DEVICE TYPE CHECK FAILED':
        throw E.deviceTypeCheckFailed();
      case 'SVC DEVICE DATA UNAVAILABLE':
        throw E.failToVerifyDevice();
      case 'SVC CACHE UNAVAILABLE':
        throw E.cacheUnavailable();
      default:
        if (deviceErrorClass(first) === 'transient') throw E.failedToGetLocation();
    }
  }
  return { body: out };
}

// ── reports ─────────────────────────────────────────────────────────────────────────────────────

/** Estimated minutes to complete a report of `count` devices at a cache mode of 1 or 2. */
export function estimatedMinutes(cacheMode: number, count: number): number {
  return cacheMode === 1 ? 2 + Math.ceil(count / 2500) : 5 + Math.ceil(count / 1000);
}

/** A report is QUEUED for the first quarter of its estimated duration, then INPROGRESS, then COMPLETED. */
export function reportStatus(r: Report, now: number): Status {
  const elapsed = now - r.createdAt;
  if (elapsed >= r.durationMs) return 'COMPLETED';
  return elapsed < r.durationMs / 4 ? 'QUEUED' : 'INPROGRESS';
}

function createReport(ctx: Ctx): Answer {
  const req = readLocationRequest(ctx);
  const st = ctx.st;
  const report: Report = {
    txid: uuid(),
    account: req.account,
    accountName: req.accountName,
    devices: req.devices,
    kinds: req.kinds,
    cacheMode: req.cacheMode,
    createdAt: ctx.now,
    durationMs: req.cacheMode === 0 ? 0 : estimatedMinutes(req.cacheMode, req.devices.length) * MINUTE_MS,
    exclusions: st.exclusionsOf(req.account),
    deviceErrors: { ...st.faults.deviceErrors },
    draws: drawsOf(st, req.devices),
  };
  st.reports.set(report.txid, report);
  countUsage(st, req.account, req.devices.length, ctx.now);
  // Every creation answers QUEUED (public-api-facts.md); a cacheMode 0 report's status reads COMPLETED at once.
  if (report.durationMs === 0) return { body: { txid: report.txid, status: 'QUEUED' } };
  const core = ctx.core;
  st.schedule(report.createdAt + report.durationMs, () => reportCompleted(core, report));
  return {
    body: {
      txid: report.txid,
      status: 'QUEUED',
      estimatedDuration: String(report.durationMs / MINUTE_MS),
    },
  };
}

/** The Location callback of a completed cacheMode 1 or 2 report (none is sent for cacheMode 0). */
function reportCompleted(core: Core, r: Report): void {
  if (core.state.reports.get(r.txid) !== r) return;
  notify(core, r.accountName, 'Location', 'locationReportResponse', {
    requestId: uuid(),
    locationReportResponse: {
      accountName: r.accountName,
      txid: r.txid,
      status: 'COMPLETED',
      totalCount: r.devices.length,
      completedAt: iso(r.createdAt + r.durationMs),
    },
  });
}

/** The report a path names, if it exists, belongs to the account and is within its 30 days. */
function findReport(ctx: Ctx): Report {
  const a = locationAccount(ctx, ctx.params.accountName);
  const r = ctx.st.reports.get(ctx.params.txid ?? '');
  if (!r || r.account !== a.index || ctx.now - (r.createdAt + r.durationMs) > REPORT_LIFETIME_MS) {
    if (r && r.account === a.index) ctx.st.reports.delete(r.txid);
    throw E.invalid('Report not found');
  }
  return r;
}

function getReportStatus(ctx: Ctx): Answer {
  const r = findReport(ctx);
  return { body: { txid: r.txid, status: reportStatus(r, ctx.now) } };
}

/** The entries [from, to) of a report, computed now from what the report keeps. */
export function reportEntries(st: EmulatorState, r: Report, from: number, to: number): LocationEntry[] {
  const c: EntryContext = {
    st,
    cacheMode: r.cacheMode,
    exclusions: r.exclusions,
    pick: deviceErrorPicker(r.deviceErrors),
    draws: r.draws,
    at: r.createdAt + r.durationMs,
  };
  const out: LocationEntry[] = [];
  for (let i = from; i < to; i++) out.push(entry(c, r.devices[i]!, r.kinds[i]!, i));
  return out;
}

function getReport(ctx: Ctx): Answer {
  const r = findReport(ctx);
  const raw = ctx.params.startIndex ?? '0';
  if (!/^[0-9]+$/.test(raw)) throw E.inputBinding();
  if (reportStatus(r, ctx.now) !== 'COMPLETED') throw E.invalid('Report is not completed');
  const start = Number(raw);
  const total = r.devices.length;
  const end = Math.min(total, start + PAGE_SIZE);
  return {
    body: {
      startIndex: start,
      txid: r.txid,
      totalCount: total,
      hasMoreData: end < total,
      devLocationList: start < end ? reportEntries(ctx.st, r, start, end) : [],
    },
  };
}

function cancelReport(ctx: Ctx): Answer {
  const r = findReport(ctx);
  if (reportStatus(r, ctx.now) === 'COMPLETED') throw E.unableToCancel();
  ctx.st.reports.delete(r.txid);
  return { body: { txid: r.txid } };
}

/** Drops reports past their 30 days (run once a simulated day). */
export function pruneReports(st: EmulatorState, now: number): void {
  for (const [txid, r] of st.reports)
    if (now - (r.createdAt + r.durationMs) > REPORT_LIFETIME_MS) st.reports.delete(txid);
}

// ── exclusions ──────────────────────────────────────────────────────────────────────────────────

/**
 * Spec section 3: `append` adds to the list, `replace` (or no type) replaces it, `allDevice: true`
 * excludes every device, and `allDevice: false` with an empty list excludes none. The consents operations
 * answer with the PARAMETER_ERROR rows of 7.1 (ARCHITECTURE.md).
 */
function setExclusions(ctx: Ctx): Answer {
  const b = ctx.raw;
  if (b === null || typeof b !== 'object' || Array.isArray(b)) throw E.inputBinding();
  const body = b as Json;
  const { type, allDevice, exclusion } = body;
  if (body.accountName !== undefined && typeof body.accountName !== 'string') throw E.inputBinding();
  if (type !== undefined && type !== null && type !== 'append' && type !== 'replace') throw E.inputBinding();
  if (allDevice !== undefined && allDevice !== null && typeof allDevice !== 'boolean') throw E.inputBinding();
  if (exclusion !== undefined && exclusion !== null && !Array.isArray(exclusion)) throw E.inputBinding();
  const ids = (exclusion ?? []) as unknown[];
  if (ids.some((id) => typeof id !== 'string')) throw E.inputBinding();
  const a = locationAccount(ctx, body.accountName);
  if (allDevice === true && ids.length > 0) throw E.conflictingDeviceList('PARAMETER_ERROR');
  if (ids.length > MAX_EXCLUSIONS) throw E.maxExclusions();
  const list = ids as string[];
  for (const id of list)
    if (!/^[0-9]{15}$/.test(id) || !luhnValid(id)) throw E.invalidIdFormat('PARAMETER_ERROR');
  if (new Set(list).size !== list.length) throw E.duplicateExclusions();
  const store = ctx.st.devices;
  for (const id of list) {
    const n = store.find('imei', id);
    if (n < 0 || store.account(n) !== a.index) throw E.ownership('PARAMETER_ERROR');
  }
  const st = ctx.st;
  const current = st.exclusionsOf(a.index);
  let next: Exclusions;
  if (allDevice === true) next = { allDevice: true, list: [], set: new Set(), updateTime: ctx.now };
  else if (type === 'append' && !(allDevice === false && list.length === 0)) {
    const merged = [...current.list];
    const set = new Set(current.set);
    for (const id of list) {
      if (set.has(id)) continue;
      set.add(id);
      merged.push(id);
    }
    if (merged.length > MAX_EXCLUSIONS) throw E.maxExclusions();
    next = {
      allDevice: allDevice === false ? false : current.allDevice,
      list: merged,
      set,
      updateTime: ctx.now,
    };
  } else next = { allDevice: false, list: [...list], set: new Set(list), updateTime: ctx.now };
  st.exclusions.set(a.index, next);
  for (const id of list) st.mutated(store.find('imei', id), 'location.setExclusions');
  return { body: { success: true } };
}

function getExclusions(ctx: Ctx): Answer {
  const a = locationAccount(ctx, ctx.params.accountName);
  const raw = ctx.params.startIndex ?? '0';
  if (!/^[0-9]+$/.test(raw)) throw E.inputBinding();
  const start = Number(raw);
  const ex = ctx.st.exclusionsOf(a.index);
  const end = Math.min(ex.list.length, start + PAGE_SIZE);
  return {
    body: {
      accountName: a.name,
      allDevice: ex.allDevice,
      hasMoreData: end < ex.list.length,
      totalCount: ex.list.length,
      ...(ex.updateTime !== undefined ? { updateTime: iso(ex.updateTime) } : {}),
      exclusion: start < end ? ex.list.slice(start, end) : [],
    },
  };
}

/** `DELETE /loc/v1/consents?accountName=…&deviceList=…` (public-api-facts.md): removes some devices. */
function removeExclusions(ctx: Ctx): Answer {
  const q = ctx.query;
  const a = locationAccount(ctx, Array.isArray(q.accountName) ? q.accountName[0] : q.accountName);
  const rawList = ([] as string[]).concat(q.deviceList ?? []);
  const ids = rawList.flatMap((v) => {
    const t = v.trim();
    if (t.startsWith('[')) {
      try {
        const parsed = JSON.parse(t) as unknown;
        if (Array.isArray(parsed)) return parsed.map(String);
      } catch {
        throw E.invalidJson();
      }
    }
    return t.split(',').map((s) => s.trim());
  });
  if (ids.filter((s) => s !== '').length === 0) throw E.emptyDeviceList();
  for (const id of ids)
    if (!/^[0-9]{15}$/.test(id) || !luhnValid(id)) throw E.invalidIdFormat('PARAMETER_ERROR');
  const st = ctx.st;
  const current = st.exclusionsOf(a.index);
  const drop = new Set(ids);
  const list = current.list.filter((id) => !drop.has(id));
  st.exclusions.set(a.index, { allDevice: current.allDevice, list, set: new Set(list), updateTime: ctx.now });
  return { body: { success: true } };
}

export const locationHandlers = {
  'location.setExclusions': setExclusions,
  'location.getExclusions': getExclusions,
  'location.removeExclusions': removeExclusions,
  'location.locate': locate,
  'location.createReport': createReport,
  'location.getReportStatus': getReportStatus,
  'location.getReport': getReport,
  'location.cancelReport': cancelReport,
};

/** For GET /_emulator/accounts: how many location transactions an account has used this cycle. */
export function locationUsed(st: EmulatorState, account: number, now: number): number {
  const u = st.locationUsage.get(account);
  const info = st.world.accounts[account]!;
  return u && u.cycle === startOfBillCycle(now, info.billCycleDay) ? u.count : 0;
}
