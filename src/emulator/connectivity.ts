/**
 * Connectivity management (`/m2m/v1`): device records, listing and attribute lookup, usage history, the devices
 * a request names, and the status of asynchronous requests. The requests themselves (state changes and SMS)
 * are device-actions.ts.
 */
import { account, validInput, type Answer, type Ctx, type Json } from './context.js';
import { E } from './errors.js';
import { hash32, unit } from './random.js';
import { DAY_MS, iso, nextBillCycle, startOfDay } from './sim-clock.js';
import type { DeviceIdPair } from './seed.js';
import type { AccountInfo } from './seed-tables.js';
import { catchUp } from './simulation.js';
import type { EmulatorState } from './state.js';

/** Page size of devices.list when the request does not set maxNumberOfDevices. */
export const DEFAULT_PAGE = 500;
/** Records per usage-history answer. */
export const MAX_USAGE_RECORDS = 1000;
export const CARRIER = 'Wireless Carrier';

// ── records ─────────────────────────────────────────────────────────────────────────────────────

/** The one custom field devices have: their group's name. */
const CUSTOM_FIELD = 'CustomField1';

/** The device group of a device (groups.ts moves devices between groups; devices.ts remembers it). */
export function groupOf(st: EmulatorState, n: number): string {
  return st.devices.group(n);
}

/**
 * The last billing-cycle end written, with the time and bill day it is for: a listing's page asks every device of
 * one account for it at one time, and working it out (four dates and a string) was a third of a record's cost.
 */
let lastCycleEnd = { now: NaN, billDay: 0, text: '' };

function billingCycleEnd(now: number, billDay: number): string {
  if (lastCycleEnd.now !== now || lastCycleEnd.billDay !== billDay)
    lastCycleEnd = { now, billDay, text: iso(nextBillCycle(now, billDay) - 1000) };
  return lastCycleEnd.text;
}

/** A device as the m2m API lists it (spec 2.13). */
export function deviceRecord(st: EmulatorState, n: number, now: number): Json {
  const store = st.devices;
  const world = st.world;
  const info = world.accounts[store.account(n)] as AccountInfo;
  const state = store.stateOf(n);
  const seed = n < world.total;
  const day = Math.floor(now / DAY_MS);
  const activation = st.activations.get(n);
  const group = groupOf(st, n);
  const createdAt = iso(store.created(n));
  const record: Json = {
    accountName: info.name,
    billingCycleEndDate: billingCycleEnd(now, info.billCycleDay),
    carrierInformations: [{ carrierName: CARRIER, servicePlan: store.planOf(n), state }],
    connected: state === 'active' && unit(world.h, n, day, 0xc0) < 0.85,
    createdAt,
    customFields: [{ key: CUSTOM_FIELD, value: group }],
    deviceIds: store.deviceIds(n),
    extendedAttributes: [
      { key: 'SkuNumber', value: seed ? world.model(n).model : null },
      { key: 'CostCenterCode', value: null },
      { key: 'RoamingStatus', value: 'Home' },
    ],
    groupNames: [group],
    lastActivationBy: activation?.by ?? 'admin',
    lastActivationDate: activation ? iso(activation.at) : createdAt,
  };
  if (store.type(n) === 'router') {
    const h = hash32(world.h, n, 0x1f);
    record.ipAddress = `10.${(h >>> 16) & 255}.${(h >>> 8) & 255}.${(h & 253) + 1}`;
  }
  return record;
}

// ── listing ─────────────────────────────────────────────────────────────────────────────────────

/**
 * Pages by the largest first identifier seen (client.ts `largestDeviceId`): devices in ascending order of
 * `deviceIds[0].id`, those after `largestDeviceIdSeen` (a string, or a number as the real service also takes
 * it) that meet every member of the selection; 202 while there is more.
 */
function list(ctx: Ctx): Answer {
  const input = validInput(ctx);
  const a = account(ctx, input.accountName);
  const st = ctx.st;
  const limit = (input.maxNumberOfDevices as number | undefined) ?? DEFAULT_PAGE;
  const selected = selection(st, input);
  const devices: Json[] = [];
  let more = false;
  for (const n of st.devices.inOrder(a.index, String(input.largestDeviceIdSeen ?? ''))) {
    if (!selected(n)) continue;
    if (devices.length === limit) {
      more = true;
      break;
    }
    devices.push(deviceRecord(st, n, ctx.now));
  }
  return { status: more ? 202 : 200, body: { hasMoreData: more, devices } };
}

interface IdentifierFilter {
  kind: string;
  contains?: string;
  startswith?: string;
  endswith?: string;
}

/**
 * Whether a device meets a devices.list selection: `currentState`, `servicePlan`, `groupName`, `customFields`,
 * added within [`earliest`, `latest`], the one `deviceId`, and every identifier match of
 * `filter.deviceIdentifierFilters`.
 */
export function selection(st: EmulatorState, input: Json): (n: number) => boolean {
  const store = st.devices;
  const { currentState, servicePlan, groupName } = input as Record<string, string | undefined>;
  const fields = input.customFields as { key: string; value: string }[] | undefined;
  const earliest = input.earliest === undefined ? -Infinity : Date.parse(String(input.earliest));
  const latest = input.latest === undefined ? Infinity : Date.parse(String(input.latest));
  const id = input.deviceId as DeviceIdPair | undefined;
  const one = id ? store.find(id.kind, id.id) : -1;
  const matches = ((input.filter as Json | undefined)?.deviceIdentifierFilters ?? []) as IdentifierFilter[];
  return (n) => {
    if (id && n !== one) return false;
    if (currentState !== undefined && store.stateOf(n) !== currentState) return false;
    if (servicePlan !== undefined && store.planOf(n) !== servicePlan) return false;
    if (groupName !== undefined && groupOf(st, n) !== groupName) return false;
    if (fields && !fields.every((f) => f.key === CUSTOM_FIELD && f.value === groupOf(st, n))) return false;
    const created = store.created(n);
    if (created < earliest || created > latest) return false;
    return matches.every((m) => {
      const value = store.idOf(n, m.kind);
      return (
        value !== undefined &&
        (m.contains === undefined || value.includes(m.contains)) &&
        (m.startswith === undefined || value.startsWith(m.startswith)) &&
        (m.endswith === undefined || value.endsWith(m.endswith))
      );
    });
  };
}

/** The identifier kinds of a 5G device attribute lookup's `deviceIds` (spec 2.13). */
const ATTRIBUTE_KINDS = new Set(['imei', 'imsi', 'iccid']);

/** 5G device attributes by ICCID (spec 4.4): the listing record, its `deviceIds` those of spec 2.13. */
function attributes(ctx: Ctx): Answer {
  const input = validInput(ctx);
  const n = ownDevice(ctx, { id: (input.deviceId as DeviceIdPair).id, kind: 'iccid' });
  const record = deviceRecord(ctx.st, n, ctx.now);
  record.deviceIds = (record.deviceIds as DeviceIdPair[]).filter((d) => ATTRIBUTE_KINDS.has(d.kind));
  return { body: { hasMoreData: false, devices: [record] } };
}

/** The device one identifier names (400 when none), in an account of the user's (else 401). */
function ownDevice(ctx: Ctx, d: DeviceIdPair): number {
  const st = ctx.st;
  const n = st.devices.find(d.kind, d.id);
  if (n < 0) throw E.invalid(`Device not found: ${d.kind} ${d.id}`);
  const name = st.world.accounts[st.devices.account(n)]!.name;
  if (!ctx.user.accounts.includes(name)) throw E.noAccess();
  return n;
}

// ── the devices of a request ────────────────────────────────────────────────────────────────────

export interface Named {
  n: number;
  /** The identifier the request named the device by first. */
  named: DeviceIdPair;
  ids: DeviceIdPair[];
}

/**
 * Resolves `devices: [{ deviceIds }]` to device numbers. Every device must be known and in the account;
 * `addUnknown` (activation) brings unknown devices into the account instead.
 */
export function resolveDevices(ctx: Ctx, a: AccountInfo, input: Json, addUnknown = false): Named[] {
  const st = ctx.st;
  const store = st.devices;
  const out: Named[] = [];
  const seen = new Set<number>();
  for (const entry of input.devices as { deviceIds: DeviceIdPair[] }[]) {
    let n = -1;
    for (const d of entry.deviceIds) {
      const m = store.find(d.kind, d.id);
      if (m < 0) continue;
      if (n >= 0 && m !== n)
        throw E.invalid(
          `The identifiers ${entry.deviceIds.map((x) => `${x.kind} ${x.id}`).join(', ')} name different devices`,
        );
      n = m;
    }
    const named = entry.deviceIds[0] as DeviceIdPair;
    if (n < 0) {
      if (!addUnknown) throw E.invalid(`Device not found: ${named.kind} ${named.id}`);
      n = store.add(a.index, entry.deviceIds, ctx.now, String(5_550_000_000 + store.size));
    } else if (store.account(n) !== a.index)
      throw E.invalid(`Device ${named.kind} ${named.id} does not belong to account ${a.name}`);
    if (seen.has(n)) throw E.invalid(`Duplicate devices: ${named.kind} ${named.id} is named twice`);
    seen.add(n);
    out.push({ n, named, ids: entry.deviceIds });
  }
  return out;
}

/**
 * The request-status operation: `Pending` until the carrier has finished every device, then `Success`,
 * `Failure` (every device failed) or `PartialSuccess`. A request of another account is refused as that
 * account would be (401 INVALID_ACCESS); an unknown (or forgotten) one is 400.
 */
function requestStatus(ctx: Ctx): Answer {
  const input = validInput(ctx);
  const a = account(ctx, input.accountName);
  const requestId = String(input.requestId);
  const rec = ctx.st.requests.get(requestId);
  if (!rec) throw E.invalid(`Request not found: ${requestId}`);
  if (rec.account !== a.index) throw E.noAccess();
  // Due, but the clock has not been caught up since (it runs by itself between ticks).
  if (rec.pending > 0 && rec.dueAt <= ctx.now) catchUp(ctx.core, false);
  return { body: { requestId, status: rec.status } };
}

// ── usage and SMS ───────────────────────────────────────────────────────────────────────────────

/**
 * The daily usage of one device within [earliest, latest], up to now: bytes, SMS (sent and received apart in
 * `extendedAttributes`), and the plan the device is on.
 */
function usage(ctx: Ctx): Answer {
  const input = validInput(ctx);
  const n = ownDevice(ctx, input.deviceId as DeviceIdPair);
  const earliest = Date.parse(String(input.earliest));
  const latest = Math.min(Date.parse(String(input.latest)), ctx.now);
  if (!(earliest <= Date.parse(String(input.latest)))) throw E.invalid('earliest must not be after latest');
  const store = ctx.st.devices;
  const from = Math.max(earliest, store.created(n));
  const records: Json[] = [];
  let more = false;
  for (let day = startOfDay(from); day < latest; day += DAY_MS) {
    if (records.length === MAX_USAGE_RECORDS) {
      more = true;
      break;
    }
    const sms = n < ctx.st.world.total ? ctx.st.world.smsOnDay(n, day / DAY_MS) : 0;
    const mo = Math.floor(sms / 2);
    records.push({
      timestamp: iso(day),
      bytesUsed: store.bytes(n, Math.max(day, from), Math.min(day + DAY_MS, latest)),
      smsUsed: sms,
      servicePlan: store.planOf(n),
      source: 'Raw Usage',
      extendedAttributes: [
        { key: 'MoSms', value: String(mo) },
        { key: 'MtSms', value: String(sms - mo) },
      ],
    });
  }
  return { body: { hasMoreData: more, usageHistory: records } };
}

export const connectivityHandlers = {
  'devices.list': list,
  'devices.attributes': attributes,
  'devices.usage': usage,
  'requests.status': requestStatus,
};
