/**
 * Connectivity management (`/m2m/v1`): device listing and attribute lookup, state changes (suspend, restore,
 * activate, deactivate, plan change), usage history and SMS.
 *
 * A state change is checked synchronously for what can be known at once (the devices exist and belong to the
 * account, the plan exists) and answered `{ requestId }`. Its result per device arrives in one CarrierService
 * callback for the request (ARCHITECTURE.md): devices in a state the action cannot apply to are reported
 * there as failed, and every device the action was applied to gets a mutation record.
 */
import { account, uuid, validInput, type Answer, type Ctx, type Json } from './context.js';
import { ACTIVE, DEACTIVE, PENDING, SUSPENDED } from './devices.js';
import { E } from './errors.js';
import { notify } from './listeners.js';
import { hash32, unit } from './random.js';
import { DAY_MS, iso, nextBillCycle, startOfDay } from './sim-clock.js';
import type { AccountInfo, DeviceIdPair } from './seed.js';
import type { EmulatorState } from './state.js';

/** Page size of devices.list when the request does not set maxNumberOfDevices. */
export const DEFAULT_PAGE = 500;
/** Records per usage-history answer. */
export const MAX_USAGE_RECORDS = 1000;
const CARRIER = 'Wireless Carrier';

// ── records ─────────────────────────────────────────────────────────────────────────────────────

/** A device as the m2m API lists it (spec 2.13). */
export function deviceRecord(st: EmulatorState, n: number, now: number): Json {
  const store = st.devices;
  const world = st.world;
  const info = world.accounts[store.account(n)] as AccountInfo;
  const state = store.stateOf(n);
  const seed = n < world.total;
  const day = Math.floor(now / DAY_MS);
  const activation = st.activations.get(n);
  const group = seed ? world.group(n) : 'Default';
  const record: Json = {
    accountName: info.name,
    billingCycleEndDate: iso(nextBillCycle(now, info.billCycleDay) - 1000),
    carrierInformations: [{ carrierName: CARRIER, servicePlan: store.planOf(n), state }],
    connected: state === 'active' && unit(world.h, n, day, 0xc0) < 0.85,
    createdAt: iso(store.created(n)),
    customFields: [{ key: 'CustomField1', value: group }],
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
 * `deviceIds[0].id`, those after `largestDeviceIdSeen`; 202 while there is more.
 */
function list(ctx: Ctx): Answer {
  const input = validInput(ctx);
  const a = account(ctx, input.accountName);
  const st = ctx.st;
  const store = st.devices;
  const limit = (input.maxNumberOfDevices as number | undefined) ?? DEFAULT_PAGE;
  const f = (input.filter ?? {}) as {
    groupName?: string;
    servicePlan?: string;
    state?: string;
    kind?: string;
  };
  const kind = f.kind?.toLowerCase();
  const world = st.world;
  const devices: Json[] = [];
  let more = false;
  for (const n of store.inOrder(a.index, (input.largestDeviceIdSeen as string | undefined) ?? '')) {
    if (f.state !== undefined && store.stateOf(n) !== f.state) continue;
    if (f.servicePlan !== undefined && store.planOf(n) !== f.servicePlan) continue;
    if (f.groupName !== undefined && (n < world.total ? world.group(n) : 'Default') !== f.groupName) continue;
    if (kind !== undefined && store.idOf(n, kind) === undefined) continue;
    if (devices.length === limit) {
      more = true;
      break;
    }
    devices.push(deviceRecord(st, n, ctx.now));
  }
  return { status: more ? 202 : 200, body: { hasMoreData: more, devices } };
}

/** 5G device attributes by ICCID (spec 4.4). */
function attributes(ctx: Ctx): Answer {
  const input = validInput(ctx);
  const d = input.deviceId as DeviceIdPair;
  const st = ctx.st;
  const n = st.devices.find('iccid', d.id);
  if (n < 0) throw E.invalid(`Device not found: iccid ${d.id}`);
  const name = st.world.accounts[st.devices.account(n)]!.name;
  if (!ctx.user.accounts.includes(name)) throw E.noAccess();
  return { body: { hasMoreData: false, devices: [deviceRecord(st, n, ctx.now)] } };
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

// ── state changes ───────────────────────────────────────────────────────────────────────────────

type Transition = (n: number) => string | undefined;

const STATE_NAMES = ['pending', 'active', 'suspend', 'deactive'];

function change(
  ctx: Ctx,
  opts: { responseKey: string; addUnknown?: boolean; plan?: boolean },
  transition: (ctx: Ctx, input: Json, requestId: string) => Transition,
): Answer {
  const input = validInput(ctx);
  const a = account(ctx, input.accountName);
  const st = ctx.st;
  if (opts.plan && !st.world.plan(String(input.servicePlan)))
    throw E.invalid(`Invalid service plan ${String(input.servicePlan)}`);
  const named = resolveDevices(ctx, a, input, opts.addUnknown);
  const requestId = uuid();
  const apply = transition(ctx, input, requestId);
  const failed: Json[] = [];
  for (const d of named) {
    const reason = apply(d.n);
    if (reason) failed.push({ deviceIds: d.ids, reason });
    else st.mutated(d.n, ctx.action, requestId);
  }
  const status =
    failed.length === 0 ? 'Success' : failed.length === named.length ? 'Failed' : 'PartialSuccess';
  notify(ctx.core, a.name, 'CarrierService', opts.responseKey, {
    requestId,
    deviceIds: named.map((d) => d.named),
    deviceResponse: {
      [opts.responseKey]: {
        accountName: a.name,
        ...(opts.plan ? { servicePlan: input.servicePlan } : {}),
        succeeded: named.length - failed.length,
        failed,
      },
    },
    status,
  });
  return { body: { requestId } };
}

function stateTransition(from: number[], to: number, why: string) {
  return (ctx: Ctx): Transition =>
    (n) => {
      const store = ctx.st.devices;
      const s = store.stateCode(n);
      if (s === to) return undefined;
      if (!from.includes(s)) return `${why}; the device is ${STATE_NAMES[s]}`;
      store.setState(n, to, ctx.now);
      return undefined;
    };
}

const suspend = (ctx: Ctx) =>
  change(
    ctx,
    { responseKey: 'suspendResponse' },
    stateTransition([ACTIVE], SUSPENDED, 'Only an active device can be suspended'),
  );

const restore = (ctx: Ctx) =>
  change(
    ctx,
    { responseKey: 'restoreResponse' },
    stateTransition([SUSPENDED], ACTIVE, 'Only a suspended device can be restored'),
  );

const deactivate = (ctx: Ctx) =>
  change(
    ctx,
    { responseKey: 'deactivateResponse' },
    stateTransition([PENDING, ACTIVE, SUSPENDED], DEACTIVE, 'The device cannot be deactivated'),
  );

const activate = (ctx: Ctx) =>
  change(ctx, { responseKey: 'activateResponse', addUnknown: true, plan: true }, (c, input) => {
    const inner = stateTransition(
      [PENDING, DEACTIVE],
      ACTIVE,
      'A suspended device is restored, not activated',
    )(c);
    return (n) => {
      const wasActive = c.st.devices.stateCode(n) === ACTIVE;
      const reason = inner(n);
      if (reason) return reason;
      c.st.devices.setPlan(n, String(input.servicePlan), c.now);
      if (!wasActive) c.st.activations.set(n, { by: c.user.username, at: c.now });
      return undefined;
    };
  });

const changePlan = (ctx: Ctx) =>
  change(ctx, { responseKey: 'changePlanResponse', plan: true }, (c, input) => (n) => {
    const store = c.st.devices;
    if (store.stateCode(n) === DEACTIVE) return 'The plan of a deactivated device cannot be changed';
    store.setPlan(n, String(input.servicePlan), c.now);
    return undefined;
  });

// ── usage and SMS ───────────────────────────────────────────────────────────────────────────────

/** Daily usage records of each device within [earliest, latest], up to now. */
function usage(ctx: Ctx): Answer {
  const input = validInput(ctx);
  const a = account(ctx, input.accountName);
  const earliest = Date.parse(String(input.earliest));
  const latest = Math.min(Date.parse(String(input.latest)), ctx.now);
  if (!(earliest <= Date.parse(String(input.latest)))) throw E.invalid('earliest must not be after latest');
  const st = ctx.st;
  const records: Json[] = [];
  let more = false;
  outer: for (const d of resolveDevices(ctx, a, input)) {
    const from = Math.max(earliest, st.devices.created(d.n));
    for (let day = startOfDay(from); day < latest; day += DAY_MS) {
      if (records.length === MAX_USAGE_RECORDS) {
        more = true;
        break outer;
      }
      const lo = Math.max(day, from);
      const hi = Math.min(day + DAY_MS, latest);
      records.push({
        deviceId: d.named,
        timestamp: iso(day),
        bytesUsed: Math.round(st.devices.usage(d.n, lo, hi)),
        smsUsed: d.n < st.world.total ? st.world.smsOnDay(d.n, day / DAY_MS) : 0,
      });
    }
  }
  return { body: { hasMoreData: more, usageHistory: records } };
}

function sms(ctx: Ctx): Answer {
  const input = validInput(ctx);
  const a = account(ctx, input.accountName);
  const requestId = uuid();
  for (const d of resolveDevices(ctx, a, input)) ctx.st.mutated(d.n, 'sms.send', requestId);
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
};
