/**
 * Price plan usage triggers (`/m2m/v2/triggers`): stored, listed and overwritten; their evaluation on the
 * simulated clock is trigger-evaluation.ts's.
 *
 * Pay-as-you-go triggers are evaluated against device usage (devices.ts) at every day boundary the clock
 * passes and wherever it stops. `gt` conditions activate as soon as usage in the cycle passes the threshold
 * (the activation time is found exactly, by bisection on the usage curve); `lt` and `eq` are judged when a
 * cycle closes. Each device (Individual, Aging) or account (AccountLevel, UsageAllowance) activates at most
 * once per cycle. An activation applies the trigger's action (suspend or plan change) and, when
 * `notification.callback` is true, sends the spec section 6 payload to the account's DeviceUsage listener.
 *
 * Account-group-share triggers are stored, listed and overwritten but not evaluated: the spec does not show
 * their callback payload (ARCHITECTURE.md). An update is confirmed by a callback, as spec 4.1 says.
 */
import { account, uuid, validInput, type Answer, type Ctx, type Json } from './context.js';
import { E } from './errors.js';
import { type Plan } from './seed-tables.js';
import { DAY_MS, iso } from './sim-clock.js';
import type { EmulatorState, PricePlanTrigger } from './state.js';
import { sendAlert } from './trigger-evaluation.js';

// ── handlers ────────────────────────────────────────────────────────────────────────────────────

export function payAsYouGo(t: PricePlanTrigger): Json | undefined {
  return t.pricePlanTrigger.payAsYouGo as Json | undefined;
}

/** The accounts a trigger acts on: the filter's list, or every account of the profile (group share). */
function accountsOf(st: EmulatorState, t: PricePlanTrigger): string[] {
  const p = payAsYouGo(t);
  if (p) return ((p.filterCriteria as Json).accountNameList as string[]) ?? [];
  return st.world.accounts.map((a) => a.name);
}

function checkEcpd(ctx: Ctx, ecpdId: unknown): void {
  if (ecpdId !== ctx.st.world.profile.ecpdId)
    throw E.invalid(
      `Unknown ecpdId ${String(ecpdId)}: the customer profile is ${ctx.st.world.profile.ecpdId}`,
    );
}

function checkPlan(ctx: Ctx, code: unknown, field: string): void {
  if (code !== undefined && !ctx.st.world.plan(String(code)))
    throw E.invalid(`${field}: ${String(code)} is not a service plan of the profile`);
}

function create(ctx: Ctx): Answer {
  const input = validInput(ctx);
  checkEcpd(ctx, input.ecpdId);
  const p = (input.pricePlanTrigger as Json).payAsYouGo as Json;
  const fc = p.filterCriteria as Json;
  for (const name of fc.accountNameList as string[]) account(ctx, name);
  checkPlan(ctx, fc.carrierServicePlanCode, 'carrierServicePlanCode');
  const action = p.action as Json;
  checkPlan(
    ctx,
    (action.changePlanDetails as Json | undefined)?.toCarrierServicePlanCode,
    'toCarrierServicePlanCode',
  );
  checkPlan(
    ctx,
    (action.agingDetails as Json | undefined)?.toCarrierServicePlanCode,
    'toCarrierServicePlanCode',
  );
  for (const name of ((action.suspendDetails as Json | undefined)?.suspendFromAccounts as
    string[] | undefined) ?? [])
    account(ctx, name);
  const t: PricePlanTrigger = {
    triggerId: uuid(),
    triggerName: String(input.triggerName),
    ecpdId: String(input.ecpdId),
    ...(input.deviceGroupName !== undefined ? { deviceGroupName: String(input.deviceGroupName) } : {}),
    triggerCategory: String(input.triggerCategory),
    pricePlanTrigger: input.pricePlanTrigger as Json,
    notification: input.notification as Json,
    active: input.active === true,
    createdAt: ctx.now,
    modifiedAt: ctx.now,
    fired: new Map(),
    summary: [],
  };
  ctx.st.triggers.set(t.triggerId, t);
  return { body: { triggerId: t.triggerId } };
}

/** PUT: overwrites a trigger with an account-group-share definition; needs access to every account. */
function update(ctx: Ctx): Answer {
  const input = validInput(ctx);
  const st = ctx.st;
  const t = st.triggers.get(String(input.triggerId));
  if (!t) throw E.invalid(`Trigger not found: ${String(input.triggerId)}`);
  checkEcpd(ctx, input.ecpdId);
  if (st.world.accounts.some((a) => !ctx.user.accounts.includes(a.name))) throw E.noAccess();
  const ags = (input.pricePlanTrigger as Json).accountGroupShare as Json;
  const variant = (ags.accountGroupShareIndividual ?? ags.accountGroupSharePool) as Json;
  const group = (variant.filterCriteria as Json).ratePlanGroupId;
  if (!st.world.ratePlanGroups.some((g) => g.id === group))
    throw E.invalid(`ratePlanGroupId: ${String(group)} is not a rate plan group of the profile`);
  t.triggerName = String(input.triggerName);
  if (input.deviceGroupName !== undefined) t.deviceGroupName = String(input.deviceGroupName);
  else delete t.deviceGroupName;
  t.triggerCategory = String(input.triggerCategory);
  t.pricePlanTrigger = input.pricePlanTrigger as Json;
  t.notification = input.notification as Json;
  t.active = input.active === true;
  t.modifiedAt = ctx.now;
  // Spec 4.1: the update answers `{ triggerId }` "and an asynchronous callback", sent when
  // `notification.callback` is true (spec 6). Its payload is not shown: the alert's envelope, with the
  // `accountShare` member spec 6 names for these triggers holding the definition now in force, to each
  // account of the profile the trigger covers.
  if (t.notification.callback === true)
    for (const name of accountsOf(st, t))
      sendAlert(ctx.core, name, {
        triggerId: t.triggerId,
        triggerName: t.triggerName,
        triggerCategory: 'PricePlanDataUsage',
        accountName: name,
        accountShare: ags,
      });
  return { body: { triggerId: t.triggerId } };
}

function flatten(value: unknown, prefix: string, out: { key: string; value: unknown }[]): void {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value as Json)) flatten(v, prefix ? `${prefix}.${k}` : k, out);
  } else out.push({ key: prefix, value });
}

function listed(st: EmulatorState, t: PricePlanTrigger): Json {
  const attributes: { key: string; value: unknown }[] = [];
  flatten(
    {
      ...(t.deviceGroupName !== undefined ? { deviceGroupName: t.deviceGroupName } : {}),
      pricePlanTrigger: t.pricePlanTrigger,
      notification: t.notification,
      active: t.active,
    },
    '',
    attributes,
  );
  return {
    triggerId: t.triggerId,
    triggerName: t.triggerName,
    accountName: accountsOf(st, t)[0],
    organizationName: st.world.profile.organizationName,
    triggerCategory: t.triggerCategory,
    triggerAttributes: attributes,
    createdAt: iso(t.createdAt),
    modifiedAt: iso(t.modifiedAt),
  };
}

/** GET /m2m/v2/triggers, /triggers/accounts/{accountName}, /triggers/{triggerId}. */
function list(ctx: Ctx): Answer {
  const st = ctx.st;
  const visible = (t: PricePlanTrigger) => accountsOf(st, t).some((a) => ctx.user.accounts.includes(a));
  const { triggerId, accountName } = ctx.params;
  let out: PricePlanTrigger[];
  if (triggerId !== undefined) {
    const t = st.triggers.get(triggerId);
    if (!t) throw E.invalid(`Trigger not found: ${triggerId}`);
    if (!visible(t)) throw E.noAccess();
    out = [t];
  } else if (accountName !== undefined) {
    const a = account(ctx, accountName);
    out = [...st.triggers.values()].filter((t) => accountsOf(st, t).includes(a.name));
  } else out = [...st.triggers.values()].filter(visible);
  return { body: { triggers: out.map((t) => listed(st, t)) } };
}

export const triggerHandlers = {
  'triggers.createPayAsYouGo': create,
  'triggers.updateAccountGroupShare': update,
  'triggers.list': list,
};

/** Account-group-share triggers the profile already has, so that an update has something to overwrite. */
export function seedTriggers(st: EmulatorState): void {
  const w = st.world;
  const notification = {
    notificationType: 'PerEvent',
    callback: true,
    emailNotification: false,
    notificationFrequencyFactor: 0,
    notificationFrequencyInterval: 'Daily',
    reminder: false,
    severity: 'Notice',
  };
  const groups = w.ratePlanGroups;
  const defs: [string, Json][] = [
    [
      'Share plan 80% notice',
      {
        accountGroupShare: {
          accountGroupShareIndividual: {
            filterCriteria: { ratePlanGroupId: groups[0]!.id },
            condition: { action: 'notify' },
            action: {
              notify: {
                alertType: 'individualpriceplan',
                threshold: [
                  { carrierCode: w.plans[1]!.code, percentage: { percentage75: true, percentage90: true } },
                ],
              },
            },
          },
        },
      },
    ],
    [
      'Pool overage plan change',
      {
        accountGroupShare: {
          accountGroupSharePool: {
            filterCriteria: { ratePlanGroupId: groups[1]!.id },
            condition: { action: 'notify' },
            action: { notify: { threshold: [{ percentage: { percentage100: true } }] } },
          },
        },
      },
    ],
  ];
  defs.forEach(([name, ppt], i) =>
    seed(st, w.uuid(7, i), name, ppt, { ...notification }, w.start - 30 * DAY_MS),
  );
}

/** A trigger of the profile that exists before anyone calls the API. */
function seed(st: EmulatorState, id: string, name: string, ppt: Json, notification: Json, at: number): void {
  st.triggers.set(id, {
    triggerId: id,
    triggerName: name,
    ecpdId: st.world.profile.ecpdId,
    triggerCategory: 'PricePlanDataUsage',
    pricePlanTrigger: ppt,
    notification,
    active: true,
    createdAt: at,
    modifiedAt: at,
    fired: new Map(),
    summary: [],
  });
}

/**
 * Activity for the zero-configuration daemon (`fleetbook serve` without FLEETBOOK_API_URL): on each account,
 * two daily pay-as-you-go triggers with a 200 KB threshold and callbacks, so that busy devices pass them within
 * simulated minutes and the example playbooks have callbacks to act on. `overuse-*` names the devices to
 * suspend; `upgrade-*` those to move to the next plan. Neither acts by itself (no suspend, no plan change).
 */
export function seedDemoTriggers(st: EmulatorState): void {
  const w = st.world;
  const names = w.accounts.map((a) => a.name);
  const defs: [string, Plan][] = [
    ['overuse-demo', w.plans[1] as Plan],
    ['upgrade-demo', w.plans[0] as Plan],
  ];
  defs.forEach(([name, plan], i) =>
    seed(
      st,
      w.uuid(8, i),
      name,
      {
        payAsYouGo: {
          filterCriteria: { carrierServicePlanCode: plan.code, accountNameList: names },
          condition: {
            conditionType: 'Individual',
            comparator: 'gt',
            threshold: 200,
            thresholdUnit: 'KB',
            cycleType: 'Daily',
          },
          action: {},
        },
      },
      { notificationType: 'PerEvent', callback: true, emailNotification: false, severity: 'Notice' },
      w.start,
    ),
  );
}
