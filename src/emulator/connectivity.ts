/**
 * Connectivity management (`/m2m/v1`): device listing and attribute lookup, state changes (suspend, restore,
 * activate, deactivate, plan change), usage history, SMS, and the status of asynchronous requests.
 *
 * A state change (or an SMS) is checked synchronously for what can be known at once (the devices exist and
 * belong to the account, the plan exists) and answered `{ requestId }`. The carrier then carries it out, at
 * once or after the `processingSeconds` fault, and records what it did to each device (requests.ts): devices
 * in a state the action cannot apply to fail with a carrier code, every device the action was applied to gets
 * a mutation record, and each device's outcome goes to the CarrierService listener in a callback of its own
 * (ARCHITECTURE.md).
 */
import type { CarrierErrorType } from '../api/device-errors.js';
import { account, uuid, validInput, type Answer, type Ctx, type Json } from './context.js';
import { ACTIVE, DEACTIVE, PENDING, SUSPENDED } from './devices.js';
import { E } from './errors.js';
import { deliver, listenerTarget } from './listeners.js';
import { hash32, unit } from './random.js';
import { CarrierRequest, reasonId, reasonOf } from './requests.js';
import { DAY_MS, iso, nextBillCycle, startOfDay } from './sim-clock.js';
import type { AccountInfo, DeviceIdPair } from './seed.js';
import { catchUp } from './simulation.js';
import type { Core, EmulatorState } from './state.js';

/** Page size of devices.list when the request does not set maxNumberOfDevices. */
export const DEFAULT_PAGE = 500;
/** Records per usage-history answer. */
export const MAX_USAGE_RECORDS = 1000;
const CARRIER = 'Wireless Carrier';

// ── records ─────────────────────────────────────────────────────────────────────────────────────

/** The one custom field devices have: their group's name. */
const CUSTOM_FIELD = 'CustomField1';

/** The device group of a device: its seeded one; a device that activation added is in the default group. */
function groupOf(st: EmulatorState, n: number): string {
  return n < st.world.total ? st.world.group(n) : 'Default';
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
  const record: Json = {
    accountName: info.name,
    billingCycleEndDate: iso(nextBillCycle(now, info.billCycleDay) - 1000),
    carrierInformations: [{ carrierName: CARRIER, servicePlan: store.planOf(n), state }],
    connected: state === 'active' && unit(world.h, n, day, 0xc0) < 0.85,
    createdAt: iso(store.created(n)),
    customFields: [{ key: CUSTOM_FIELD, value: group }],
    deviceIds: store.deviceIds(n),
    extendedAttributes: [
      { key: 'SkuNumber', value: seed ? world.model(n).model : null },
      { key: 'CostCenterCode', value: null },
      { key: 'RoamingStatus', value: 'Home' },
    ],
    groupNames: [group],
    lastActivationBy: activation?.by ?? 'admin',
    lastActivationDate: iso(activation?.at ?? store.created(n)),
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
function selection(st: EmulatorState, input: Json): (n: number) => boolean {
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

/** 5G device attributes by ICCID (spec 4.4). */
function attributes(ctx: Ctx): Answer {
  const input = validInput(ctx);
  const n = ownDevice(ctx, { id: (input.deviceId as DeviceIdPair).id, kind: 'iccid' });
  return { body: { hasMoreData: false, devices: [deviceRecord(ctx.st, n, ctx.now)] } };
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

interface Named {
  n: number;
  /** The identifier the request named the device by first. */
  named: DeviceIdPair;
  ids: DeviceIdPair[];
}

/**
 * Resolves `devices: [{ deviceIds }]` to device numbers. Every device must be known and in the account;
 * `addUnknown` (activation) brings unknown devices into the account instead.
 */
function resolveDevices(ctx: Ctx, a: AccountInfo, input: Json, addUnknown = false): Named[] {
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
 * The devices a request acts on: those it names (`devices` entries, or a flat `deviceIds` list), else every
 * device of the account in its `groupName`; either way only those that also meet its `groupName`,
 * `servicePlan` and `customFields`, the real service's "only include devices that ..." (docs/spec-decisions.md).
 * None is 400: a request that reaches no device is a mistake to say at once.
 */
function targets(ctx: Ctx, a: AccountInfo, input: Json): Named[] {
  const st = ctx.st;
  const narrow = selection(st, {
    groupName: input.groupName,
    servicePlan: input.servicePlan,
    customFields: input.customFields,
  });
  let out: Named[];
  if (input.devices !== undefined || input.deviceIds !== undefined) {
    const devices = input.devices ?? (input.deviceIds as DeviceIdPair[]).map((d) => ({ deviceIds: [d] }));
    out = resolveDevices(ctx, a, { devices }).filter((d) => narrow(d.n));
  } else {
    out = [];
    for (const n of st.devices.inOrder(a.index, '')) {
      if (!narrow(n)) continue;
      const first = st.devices.deviceIds(n)[0] as DeviceIdPair;
      out.push({ n, named: first, ids: [first] });
    }
  }
  if (!out.length) throw E.invalid('No device matches the request');
  return out;
}

// ── asynchronous requests ───────────────────────────────────────────────────────────────────────

/**
 * What the carrier does to one device when it carries a request out at simulated time `at`: 0 when done
 * (a device already in the target state included), else the index of the reason it failed for (`reasonId`).
 */
type Apply = (st: EmulatorState, n: number, at: number) => number;

interface Work {
  /** The `deviceResponse` member of its CarrierService callbacks; none are sent without one (SMS). */
  responseKey?: string;
  /** Members of that response beside `accountName`. */
  response?: Json;
  apply: Apply;
}

/**
 * Takes an asynchronous request whose devices are resolved: records every device `Pending`, and carries it out
 * at once, or after `processingSeconds` on the simulated clock. Returns its requestId.
 */
function accept(ctx: Ctx, a: AccountInfo, named: Named[], work: Work): string {
  const st = ctx.st;
  const f = st.faults;
  const requestId = uuid();
  // Drawn only when a per-device fault is on, so that other faults meet the same draws as before.
  const salt =
    f.neverFinishRate > 0 || f.dropCallbackRate > 0
      ? hash32(st.world.h, Math.floor(st.faultRng.next() * 2 ** 32), 0x4e0)
      : 0;
  const rec = new CarrierRequest({
    requestId,
    action: ctx.action,
    account: a.index,
    accountName: a.name,
    receivedAt: ctx.now,
    dueAt: ctx.now + Math.round(f.processingSeconds * 1000),
    salt,
    dropRate: f.dropCallbackRate,
    size: named.length,
  });
  for (let i = 0; i < named.length; i++) {
    const d = named[i] as Named;
    rec.setDevice(i, d.n, d.ids, st.devices, neverFinishes(st, salt, i, d));
  }
  st.requests.add(rec);
  const core = ctx.core;
  if (rec.dueAt <= ctx.now) carryOut(core, rec, work);
  else st.schedule(rec.dueAt, () => carryOut(core, rec, work));
  return requestId;
}

function neverFinishes(st: EmulatorState, salt: number, i: number, d: Named): boolean {
  const f = st.faults;
  if (f.neverFinishRate > 0 && unit(salt, i, 0x5f) < f.neverFinishRate) return true;
  const ids = st.neverFinish;
  if (ids.size === 0) return false;
  return d.ids.some((x) => ids.has(x.id)) || st.devices.deviceIds(d.n).some((x) => ids.has(x.id));
}

/**
 * The carrier carries a request out: applies it to each device it finishes, records the outcome, and sends
 * one CarrierService callback per device (public-api-facts.md) when a listener is registered.
 */
function carryOut(core: Core, rec: CarrierRequest, work: Work): void {
  const st = core.state;
  const at = rec.dueAt;
  const key = work.responseKey;
  const target = key ? listenerTarget(core, rec.accountName, 'CarrierService') : undefined;
  // Shared by every message of the request: only the device, status and fault differ.
  const deviceResponse = key ? { [key]: { accountName: rec.accountName, ...work.response } } : undefined;
  for (let i = 0; i < rec.size; i++) {
    if (rec.neverFinishes(i)) continue;
    const n = rec.device(i);
    const reason = work.apply(st, n, at);
    rec.settle(i, reason);
    if (!reason) st.mutated(n, rec.action, rec.requestId, at);
    if (!target || !key) continue;
    if (rec.dropRate > 0 && unit(rec.salt, i, 0xd9) < rec.dropRate) {
      rec.dropCallback(i);
      continue;
    }
    const deviceIds = rec.deviceIds(i, st.devices);
    let payload: { requestId: string } & Json;
    if (reason) {
      const r = reasonOf(reason);
      payload = {
        requestId: rec.requestId,
        deviceIds,
        deviceResponse,
        status: 'Failed',
        faultResponse: { faultcode: r.code, faultstring: r.message },
      };
    } else payload = { requestId: rec.requestId, deviceIds, deviceResponse, status: 'Success' };
    deliver(core, target, 'CarrierService', rec.accountName, key, payload);
  }
  if (rec.pending === 0) rec.completedAt = at;
}

// ── state changes ───────────────────────────────────────────────────────────────────────────────

const STATE_NAMES = ['pending', 'active', 'suspend', 'deactive'];

/** Why a device in state `s` was refused: the carrier code (CARRIER_ERRORS) and the sentence. */
function refused(why: string, s: number): number {
  const code: CarrierErrorType = s === DEACTIVE ? 'DEVICE DEACTIVATED' : 'INVALID DEVICE STATE';
  return reasonId(code, `${why}; the device is ${STATE_NAMES[s]}`);
}

/** Devices in a `from` state go to `to`; one already in `to` is done; any other is refused. */
function stateChange(from: number[], to: number, why: string): Apply {
  return (st, n, at) => {
    const store = st.devices;
    const s = store.stateCode(n);
    if (s === to) return 0;
    if (!from.includes(s)) return refused(why, s);
    store.setState(n, to, at);
    return 0;
  };
}

/** A device-state action: checked at once (400, nothing done), then carried out as an asynchronous request. */
function change(
  ctx: Ctx,
  opts: { responseKey: string; addUnknown?: boolean; plan?: boolean },
  apply: (input: Json) => Apply,
): Answer {
  const input = validInput(ctx);
  const a = account(ctx, input.accountName);
  if (opts.plan && !ctx.st.world.plan(String(input.servicePlan)))
    throw E.invalid(`Invalid service plan ${String(input.servicePlan)}`);
  const named = resolveDevices(ctx, a, input, opts.addUnknown);
  const requestId = accept(ctx, a, named, {
    responseKey: opts.responseKey,
    ...(opts.plan ? { response: { servicePlan: input.servicePlan } } : {}),
    apply: apply(input),
  });
  return { body: { requestId } };
}

const suspend = (ctx: Ctx) =>
  change(ctx, { responseKey: 'suspendResponse' }, () =>
    stateChange([ACTIVE], SUSPENDED, 'Only an active device can be suspended'),
  );

const restore = (ctx: Ctx) =>
  change(ctx, { responseKey: 'restoreResponse' }, () =>
    stateChange([SUSPENDED], ACTIVE, 'Only a suspended device can be restored'),
  );

const deactivate = (ctx: Ctx) =>
  change(ctx, { responseKey: 'deactivateResponse' }, () =>
    stateChange([PENDING, ACTIVE, SUSPENDED], DEACTIVE, 'The device cannot be deactivated'),
  );

const activate = (ctx: Ctx) =>
  change(ctx, { responseKey: 'activateResponse', addUnknown: true, plan: true }, (input) => {
    const inner = stateChange([PENDING, DEACTIVE], ACTIVE, 'A suspended device is restored, not activated');
    const plan = String(input.servicePlan);
    const by = ctx.user.username;
    return (st, n, at) => {
      const wasActive = st.devices.stateCode(n) === ACTIVE;
      const reason = inner(st, n, at);
      if (reason) return reason;
      st.devices.setPlan(n, plan, at);
      if (!wasActive) st.activations.set(n, { by, at });
      return 0;
    };
  });

const changePlan = (ctx: Ctx) =>
  change(ctx, { responseKey: 'changePlanResponse', plan: true }, (input) => {
    const plan = String(input.servicePlan);
    return (st, n, at) => {
      const store = st.devices;
      if (store.stateCode(n) === DEACTIVE)
        return reasonId('DEVICE DEACTIVATED', 'The plan of a deactivated device cannot be changed');
      store.setPlan(n, plan, at);
      return 0;
    };
  });

/**
 * The request-status operation: `Pending` until the carrier has finished every device, then `Success`,
 * `Failed` (every device failed) or `PartialSuccess`. A request of another account is refused as that
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
      bytesUsed: Math.round(store.usage(n, Math.max(day, from), Math.min(day + DAY_MS, latest))),
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

/** Queued for every device; the spec's callback services include none for SMS delivery, so none is sent. */
function sms(ctx: Ctx): Answer {
  const input = validInput(ctx);
  const a = account(ctx, input.accountName);
  const requestId = accept(ctx, a, targets(ctx, a, input), { apply: () => 0 });
  return { body: { requestId } };
}

export const connectivityHandlers = {
  'devices.list': list,
  'devices.attributes': attributes,
  'devices.suspend': suspend,
  'devices.restore': restore,
  'devices.activate': activate,
  'devices.deactivate': deactivate,
  'devices.changePlan': changePlan,
  'devices.usage': usage,
  'sms.send': sms,
  'requests.status': requestStatus,
};
