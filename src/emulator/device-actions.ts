/**
 * The asynchronous requests of connectivity management (`/m2m/v1`): state changes (suspend, restore, activate,
 * deactivate, plan change) and SMS.
 *
 * A request is checked synchronously for what can be known at once (the devices exist and belong to the
 * account, the plan exists) and answered `{ requestId }`. The carrier then carries it out, at once or after the
 * `processingSeconds` fault, and records what it did to each device (requests.ts): devices in a state the action
 * cannot apply to fail with a carrier code, every device the action was applied to gets a mutation record, and
 * each device's outcome goes to the CarrierService listener in a callback of its own (ARCHITECTURE.md).
 */
import type { CarrierErrorType } from '../api/device-errors.js';
import { resolveDevices, selection, type Named } from './connectivity.js';
import { account, uuid, validInput, type Answer, type Ctx, type Json } from './context.js';
import { ACTIVE, DEACTIVE, PENDING, SUSPENDED } from './devices.js';
import { E } from './errors.js';
import { groupsOf } from './groups.js';
import { deliver, listenerTarget } from './listeners.js';
import { unit } from './random.js';
import { CarrierRequest, reasonId, reasonOf } from './requests.js';
import type { DeviceIdPair } from './seed.js';
import type { AccountInfo } from './seed-tables.js';
import type { Core, EmulatorState } from './state.js';

// ── the devices of a request ────────────────────────────────────────────────────────────────────

/** How a request's members select devices (targets). */
interface Selecting {
  /** The member that narrows by service plan: `servicePlan`, or `currentServicePlan` for a plan change. */
  planFilter?: 'servicePlan' | 'currentServicePlan';
  /**
   * Activation: devices not in the account join it; with devices named, `groupName` is the group they join
   * rather than a filter; `servicePlan` is the plan to give and `customFields` are values, neither a filter.
   */
  activation?: boolean;
}

/**
 * The devices a request acts on: those it names (`devices` entries, or a flat `deviceIds` list), else every
 * device of the account in its `groupName`; either way only those that also meet its `groupName`, service plan
 * filter and `customFields`, the real service's "only include devices that ..." (docs/spec-decisions.md).
 * None is 400: a request that reaches no device is a mistake to say at once.
 */
export function targets(ctx: Ctx, a: AccountInfo, input: Json, o: Selecting = {}): Named[] {
  const st = ctx.st;
  const narrow = selection(
    st,
    o.activation
      ? { groupName: input.groupName }
      : {
          groupName: input.groupName,
          servicePlan: input[o.planFilter ?? 'servicePlan'],
          customFields: input.customFields,
        },
  );
  let out: Named[];
  if (input.devices !== undefined || input.deviceIds !== undefined) {
    const devices = input.devices ?? (input.deviceIds as DeviceIdPair[]).map((d) => ({ deviceIds: [d] }));
    out = resolveDevices(ctx, a, { devices }, o.activation);
    if (!o.activation) out = out.filter((d) => narrow(d.n));
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
  /** Not carried out before this simulated time (a plan change's `takeEffect`). */
  notBefore?: number;
}

/**
 * Takes an asynchronous request whose devices are resolved: records every device `Pending`, and carries it out
 * at once, or after `processingSeconds` on the simulated clock (not before `notBefore`). Returns its requestId.
 */
function accept(ctx: Ctx, a: AccountInfo, named: Named[], work: Work): string {
  const st = ctx.st;
  const f = st.faults;
  const requestId = uuid();
  const rec = new CarrierRequest({
    requestId,
    action: ctx.action,
    account: a.index,
    accountName: a.name,
    receivedAt: ctx.now,
    dueAt: Math.max(ctx.now + Math.round(f.processingSeconds * 1000), work.notBefore ?? 0),
    size: named.length,
  });
  for (let i = 0; i < named.length; i++) {
    const d = named[i] as Named;
    // Each device's faults from its own draw: the same whatever other requests came meanwhile.
    const draw = st.draw('deviceState', d.n);
    const dropsCallback = f.dropCallbackRate > 0 && unit(st.world.h, d.n, draw, 0xd9) < f.dropCallbackRate;
    rec.setDevice(i, d.n, d.ids, st.devices, neverFinishes(st, draw, d), dropsCallback);
  }
  st.requests.add(rec);
  const core = ctx.core;
  if (rec.dueAt <= ctx.now) carryOut(core, rec, work);
  else st.schedule(rec.dueAt, () => carryOut(core, rec, work));
  return requestId;
}

function neverFinishes(st: EmulatorState, draw: number, d: Named): boolean {
  const f = st.faults;
  if (f.neverFinishRate > 0 && unit(st.world.h, d.n, draw, 0x5f) < f.neverFinishRate) return true;
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
    if (rec.dropsCallback(i)) {
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
  opts: { responseKey: string; plan?: boolean } & Selecting,
  apply: (input: Json) => Apply,
): Answer {
  const input = validInput(ctx);
  const a = account(ctx, input.accountName);
  if (opts.plan && !ctx.st.world.plan(String(input.servicePlan)))
    throw E.invalid(`Invalid service plan ${String(input.servicePlan)}`);
  const named = targets(ctx, a, input, opts);
  const requestId = accept(ctx, a, named, {
    responseKey: opts.responseKey,
    ...(opts.plan ? { response: { servicePlan: input.servicePlan } } : {}),
    apply: apply(input),
    ...(input.takeEffect !== undefined ? { notBefore: Date.parse(String(input.takeEffect)) } : {}),
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
  change(ctx, { responseKey: 'activateResponse', activation: true, plan: true }, (input) => {
    const inner = stateChange([PENDING, DEACTIVE], ACTIVE, 'A suspended device is restored, not activated');
    const plan = String(input.servicePlan);
    const by = ctx.user.username;
    // With devices named, `groupName` is the group they join, which must exist.
    const joins = input.devices === undefined ? undefined : (input.groupName as string | undefined);
    if (joins !== undefined && !groupsOf(ctx.st, account(ctx, input.accountName).index).has(joins))
      throw E.invalid(`Device group not found: ${joins}`);
    return (st, n, at) => {
      const wasActive = st.devices.stateCode(n) === ACTIVE;
      const reason = inner(st, n, at);
      if (reason) return reason;
      st.devices.setPlan(n, plan, at);
      if (joins !== undefined) st.devices.setGroup(n, joins);
      if (!wasActive) st.activations.set(n, { by, at });
      return 0;
    };
  });

const changePlan = (ctx: Ctx) =>
  change(
    ctx,
    { responseKey: 'changePlanResponse', plan: true, planFilter: 'currentServicePlan' },
    (input) => {
      const plan = String(input.servicePlan);
      return (st, n, at) => {
        const store = st.devices;
        if (store.stateCode(n) === DEACTIVE)
          return reasonId('DEVICE DEACTIVATED', 'The plan of a deactivated device cannot be changed');
        store.setPlan(n, plan, at);
        return 0;
      };
    },
  );

// ── SMS ─────────────────────────────────────────────────────────────────────────────────────────

/** Queued for every device; the spec's callback services include none for SMS delivery, so none is sent. */
function sms(ctx: Ctx): Answer {
  const input = validInput(ctx);
  const a = account(ctx, input.accountName);
  const requestId = accept(ctx, a, targets(ctx, a, input), { apply: () => 0 });
  return { body: { requestId } };
}

export const deviceActionHandlers = {
  'devices.suspend': suspend,
  'devices.restore': restore,
  'devices.activate': activate,
  'devices.deactivate': deactivate,
  'devices.changePlan': changePlan,
  'sms.send': sms,
};
