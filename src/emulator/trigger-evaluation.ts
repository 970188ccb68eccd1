/**
 * The evaluation of price plan pay-as-you-go triggers on the simulated clock (triggers.ts stores them): at every
 * day boundary the clock passes and wherever it stops, which devices or accounts pass a trigger's condition,
 * the action it applies (suspend, plan change), and the spec section 6 alert it sends to the account's
 * DeviceUsage listener when `notification.callback` is true.
 */
import { groupOf } from './connectivity.js';
import { uuid, type Json } from './context.js';
import { ACTIVE, DEACTIVE, PENDING, SUSPENDED } from './devices.js';
import { notify } from './listeners.js';
import { MB, type AccountInfo, type Plan } from './seed-tables.js';
import {
  DAY_MS,
  HOUR_MS,
  iso,
  nextBillCycle,
  startOfBillCycle,
  startOfDay,
  startOfWeek,
} from './sim-clock.js';
import type { Core, EmulatorState, PricePlanTrigger } from './state.js';
import { payAsYouGo } from './triggers.js';

const UNITS: Record<string, number> = { KB: 1024, MB, GB: 1024 * MB, TB: 1024 * 1024 * MB };

// ── evaluation ──────────────────────────────────────────────────────────────────────────────────

function cycleStart(cycleType: string, t: number, a: AccountInfo): number {
  if (cycleType === 'Weekly') return startOfWeek(t);
  if (cycleType === 'Monthly') return startOfBillCycle(t, a.billCycleDay);
  return startOfDay(t);
}

function cycleEnd(cycleType: string, t: number, a: AccountInfo): number {
  if (cycleType === 'Weekly') return startOfWeek(t) + 7 * DAY_MS;
  if (cycleType === 'Monthly') return nextBillCycle(t, a.billCycleDay);
  return startOfDay(t) + DAY_MS;
}

function compare(comparator: string, value: number, threshold: number): boolean {
  if (comparator === 'lt') return value < threshold;
  if (comparator === 'eq') return Math.floor(value) === threshold;
  return value > threshold;
}

/**
 * Devices of an account in service on a plan (pending and deactivated devices are not), and in the trigger's
 * device group when it names one.
 */
function onPlan(st: EmulatorState, a: AccountInfo, code: string, group?: string): number[] {
  const out: number[] = [];
  const store = st.devices;
  for (const n of store.inOrder(a.index)) {
    const s = store.stateCode(n);
    if (s === PENDING || s === DEACTIVE || store.planOf(n) !== code) continue;
    if (group === undefined || groupOf(st, n) === group) out.push(n);
  }
  return out;
}

interface Activation {
  trigger: PricePlanTrigger;
  account: AccountInfo;
  devices: number[];
  at: number;
  cycleType: string;
  threshold: number;
  unit: string;
  /**
   * "Value at which the trigger activates, set by the threshold" (spec 6): the threshold, in `unit`; for an
   * aging trigger the number of bill cycles on the plan, since it activates by time, not usage.
   */
  triggerValue: number;
  message: string;
}

/**
 * Evaluates every active pay-as-you-go trigger at simulated time `at`, for the cycles that contain the
 * instant just before it; `since` is the previous evaluation, the earliest an activation can be dated.
 */
export function evaluateTriggers(core: Core, since: number, at: number): void {
  const st = core.state;
  for (const t of st.triggers.values()) {
    const p = payAsYouGo(t);
    if (!t.active || !p) continue;
    for (const act of evaluate(st, t, p, since, at)) activate(core, act);
  }
}

function evaluate(st: EmulatorState, t: PricePlanTrigger, p: Json, since: number, at: number): Activation[] {
  const fc = p.filterCriteria as Json;
  const cond = p.condition as Json;
  const code = String(fc.carrierServicePlanCode);
  const plan = st.world.plan(code);
  if (!plan) return [];
  const type = (cond.conditionType as string | undefined) || 'Individual';
  const cycleType = (cond.cycleType as string | undefined) ?? 'Daily';
  const comparator = (cond.comparator as string | undefined) ?? 'gt';
  const unitName = (cond.thresholdUnit as string | undefined) ?? 'MB';
  const unitBytes = UNITS[unitName] ?? MB;
  const threshold = Number(cond.threshold ?? 0);
  const accounts = ((fc.accountNameList as string[]) ?? [])
    .map((n) => st.world.account(n))
    .filter((a): a is AccountInfo => a !== undefined);
  const out: Activation[] = [];
  const base = { trigger: t, cycleType, threshold, unit: unitName, triggerValue: threshold };
  const probe = at - 1;

  if (type === 'Aging') {
    const cycles = Number(
      (((p.action as Json).agingDetails as Json | undefined)?.onNumberOfBillCycle as number) ?? 1,
    );
    for (const a of accounts) {
      for (const n of onPlan(st, a, code, t.deviceGroupName)) {
        const since_ = st.devices.planSinceOf(n);
        let due = since_;
        for (let i = 0; i < cycles; i++) due = nextBillCycle(due, a.billCycleDay);
        const key = `age:${n}:${since_}`;
        if (due > at || t.fired.has(key)) continue;
        // Kept for as long as the device stays on the plan: it activates once per plan assignment.
        t.fired.set(key, Infinity);
        out.push({
          ...base,
          account: a,
          devices: [n],
          at: Math.max(due, since, t.createdAt),
          triggerValue: cycles,
          message: `Device has been on plan ${plan.name} for ${cycles} bill cycle(s)`,
        });
      }
    }
    return out;
  }

  if (type === 'UsageAllowance') {
    const levels = [50, 75, 90, 100].filter((l) => cond[`percentage${l}`] === true);
    for (const a of accounts) {
      const devices = onPlan(st, a, code, t.deviceGroupName);
      if (devices.length === 0) continue;
      const cs = startOfBillCycle(probe, a.billCycleDay);
      const used = devices.reduce((s, n) => s + st.devices.usage(n, cs, at), 0);
      const pool = plan.allowanceBytes * devices.length;
      for (const level of levels) {
        const key = `ua:${a.index}:${level}:${cs}`;
        if (used * 100 < pool * level || t.fired.has(key)) continue;
        t.fired.set(key, cs);
        // The alert's threshold is "in units" of KB, MB, GB or TB (spec 6), not a percentage: the level's
        // share of the pool, in the condition's unit. Both it and the usage are whole units rounded down, so
        // the usage the message gives is never below the threshold it reached.
        const threshold = Math.floor((pool * level) / 100 / unitBytes);
        out.push({
          ...base,
          cycleType: 'Monthly',
          threshold,
          triggerValue: threshold,
          account: a,
          devices,
          at,
          message: `Account usage of ${Math.floor(used / unitBytes)} ${unitName} reached ${level}% of the ${plan.name} pool allowance, ${threshold} ${unitName}`,
        });
      }
    }
    return out;
  }

  if (type === 'AccountLevel') {
    const combined = cond.separateOrCombined === 'Combined';
    const groups: AccountInfo[][] = combined ? [accounts] : accounts.map((a) => [a]);
    for (const group of groups) {
      const lead = group[0];
      if (!lead) continue;
      const cs = cycleStart(cycleType, probe, lead);
      const closing = cycleEnd(cycleType, probe, lead) === at;
      if (comparator !== 'gt' && !closing) continue;
      const devices = group.flatMap((a) => onPlan(st, a, code, t.deviceGroupName));
      const value = devices.reduce((s, n) => s + st.devices.usage(n, cs, at), 0) / unitBytes;
      const key = `acct:${group.map((a) => a.index).join(',')}:${cs}`;
      if (!compare(comparator, value, threshold) || t.fired.has(key)) continue;
      t.fired.set(key, cs);
      out.push({
        ...base,
        account: lead,
        devices,
        at,
        message: `Account usage of ${figure(value, threshold)} ${unitName} is ${comparator} ${threshold} ${unitName} (${cycleType})`,
      });
    }
    return out;
  }

  // Individual
  const thresholdBytes = threshold * unitBytes;
  for (const a of accounts) {
    const cs = cycleStart(cycleType, probe, a);
    const closing = cycleEnd(cycleType, probe, a) === at;
    if (comparator !== 'gt' && !closing) continue;
    for (const n of onPlan(st, a, code, t.deviceGroupName)) {
      const key = `dev:${n}:${cs}`;
      if (t.fired.has(key)) continue;
      const used = st.devices.usage(n, cs, at);
      if (!compare(comparator, used / unitBytes, threshold)) continue;
      t.fired.set(key, cs);
      const when =
        comparator === 'gt' ? crossing(st, n, cs, Math.max(cs, since, t.createdAt), at, thresholdBytes) : at;
      // The usage at the activation, which the message dates, not the larger usage of the evaluation.
      const usage = figure(st.devices.usage(n, cs, when) / unitBytes, threshold);
      out.push({
        ...base,
        account: a,
        devices: [n],
        at: when,
        message: `Device data usage of ${usage} ${unitName} is ${comparator} the threshold of ${threshold} ${unitName} (${cycleType})`,
      });
    }
  }
  return out;
}

/**
 * `value` (a usage, in the condition's unit) as an alert's message gives it: cut, not rounded, at the fewest
 * decimals (two at most) that tell it from `threshold` as the comparison did: `5.4` past a threshold of 5, `30`
 * for 30.2 past 29. A usage past the threshold by less than that, as at the very activation, is `just over 30`:
 * a figure is never the threshold it is said to pass.
 */
export function figure(value: number, threshold: number): string {
  for (let d = 0; d <= 2; d++) {
    const cut = Math.floor(value * 10 ** d) / 10 ** d;
    if (cut !== threshold || value === threshold) return cut.toFixed(d);
  }
  return `just over ${threshold}`;
}

/** The first millisecond in (lo, hi] at which usage since `cs` exceeds `bytes`: usage only grows. */
function crossing(st: EmulatorState, n: number, cs: number, lo: number, hi: number, bytes: number): number {
  if (st.devices.usage(n, cs, lo) > bytes) return lo;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (st.devices.usage(n, cs, mid) > bytes) hi = mid;
    else lo = mid;
  }
  return hi;
}

function activate(core: Core, act: Activation): void {
  const st = core.state;
  const t = act.trigger;
  const p = payAsYouGo(t) as Json;
  const action = p.action as Json;
  const store = st.devices;
  if (action.suspend === true) {
    const from =
      ((action.suspendDetails as Json | undefined)?.suspendFromAccounts as string[] | undefined) ?? [];
    for (const n of act.devices) {
      const acc = st.world.accounts[store.account(n)]!.name;
      if (from.length > 0 && !from.includes(acc)) continue;
      if (store.stateCode(n) !== ACTIVE) continue;
      store.setState(n, SUSPENDED, act.at);
      st.mutated(n, 'triggers.suspend', t.triggerId);
    }
  }
  if (action.changePlan === true) {
    const to =
      ((action.changePlanDetails as Json | undefined)?.toCarrierServicePlanCode as string | undefined) ??
      ((action.agingDetails as Json | undefined)?.toCarrierServicePlanCode as string | undefined);
    if (to)
      for (const n of act.devices)
        if (store.setPlan(n, to, act.at)) st.mutated(n, 'triggers.changePlan', t.triggerId);
  }
  const n = t.notification;
  const alert = alertPayload(st, act);
  if (n.smsNotification === true || n.emailNotification === true)
    st.notification({
      triggerId: t.triggerId,
      at: iso(act.at),
      sms: n.smsNumbers ?? [],
      email: n.externalEmailRecipients ?? '',
      message: act.message,
    });
  if (n.callback !== true) return;
  if (n.notificationType === 'DailySummary') {
    t.summary.push({ account: act.account.name, alert });
    return;
  }
  send(core, act.account.name, alert);
  if (n.reminder === true) {
    const times = Number(n.notificationFrequencyFactor ?? 0);
    const every =
      n.notificationFrequencyInterval === 'Hourly'
        ? HOUR_MS
        : n.notificationFrequencyInterval === 'Weekly'
          ? 7 * DAY_MS
          : DAY_MS;
    for (let i = 1; i <= times; i++) {
      const reminder = { ...alert, message: `Reminder ${i} of ${times}: ${String(alert.message)}` };
      st.schedule(act.at + i * every, () => {
        if (core.state === st && st.triggers.get(t.triggerId) === t && t.active)
          send(core, act.account.name, reminder);
      });
    }
  }
}

function alertPayload(st: EmulatorState, act: Activation): Json {
  const p = payAsYouGo(act.trigger) as Json;
  const code = String((p.filterCriteria as Json).carrierServicePlanCode);
  const plan = st.world.plan(code) as Plan;
  return {
    triggerId: act.trigger.triggerId,
    triggerName: act.trigger.triggerName,
    triggerCategory: 'PricePlanDataUsage',
    accountName: act.account.name,
    carrierServicePlanCode: code,
    servicePlanDescription: plan.name,
    deviceIds: act.devices.map((n) => ({
      id: st.devices.idOf(n, 'imei') ?? st.devices.primaryId(n),
      kind: 'IMEI',
    })),
    triggerDateTime: iso(act.at),
    triggerValue: act.triggerValue,
    cycleType: act.cycleType.toUpperCase(),
    threshold: act.threshold,
    thresholdUnit: act.unit,
    message: act.message,
  };
}

/** An activation's alert, the spec section 6 payload with its `payAsYouGo` member. */
function send(core: Core, accountName: string, alert: Json): void {
  const { triggerId, triggerName, triggerCategory, accountName: acc, ...payAsYouGo } = alert;
  sendAlert(core, accountName, { triggerId, triggerName, triggerCategory, accountName: acc, payAsYouGo });
}

/**
 * A price plan trigger's message, `deviceResponse.alertServiceResponse`, to the account's DeviceUsage listener;
 * each has a request id of its own, since messages without devices are told apart by it alone.
 */
export function sendAlert(core: Core, accountName: string, alertServiceResponse: Json): void {
  notify(core, accountName, 'DeviceUsage', 'alertServiceResponse', {
    requestId: uuid(),
    deviceResponse: { alertServiceResponse },
  });
}

/** Forgets activations of cycles that ended long ago (no cycle is longer than a month). */
export function forgetOldActivations(st: EmulatorState, now: number): void {
  const horizon = now - 40 * DAY_MS;
  for (const t of st.triggers.values())
    for (const [key, cs] of t.fired) if (cs < horizon) t.fired.delete(key);
}

/** Daily-summary triggers send what activated during the day, one message per account. */
export function flushSummaries(core: Core): void {
  for (const t of core.state.triggers.values()) {
    if (t.summary.length === 0) continue;
    const byAccount = new Map<string, Json[]>();
    for (const s of t.summary) {
      const list = byAccount.get(s.account as string) ?? [];
      list.push(s.alert as Json);
      byAccount.set(s.account as string, list);
    }
    t.summary = [];
    for (const [acc, alerts] of byAccount) {
      const first = alerts[0] as Json;
      send(core, acc, {
        ...first,
        deviceIds: alerts.flatMap((x) => x.deviceIds as unknown[]),
        message: `Daily summary: ${alerts.length} activation(s). ${String(first.message)}`,
      });
    }
  }
}
