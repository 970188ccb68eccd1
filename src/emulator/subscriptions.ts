/**
 * `/subsc/v1`: location usage triggers and managed accounts.
 *
 * Both need a session of the primary account's user (spec section 5). Usage triggers are checked once per
 * simulated day against the account's location transactions in its billing cycle; a trigger alerts at most
 * once per cycle, by a Location callback and by the SMS and e-mail it names (recorded, not sent).
 *
 * Managed accounts follow spec 2.5 and 7.2: `add` puts accounts on the primary's list and answers the TxId;
 * the managed account then provisions the service quoting that TxId (`actions/provision`), and ends it quoting
 * the txid provisioning answered (`actions/cancel`); the primary lists both kinds (7.2 `Txd Mismatch`,
 * `Acct Not Provisioned …`).
 */
import { MANAGED_SERVICE } from '../api/limits.js';
import { ACCOUNT_PATTERN, account, uuid, validInput, type Answer, type Ctx, type Json } from './context.js';
import { E } from './errors.js';
import { notify } from './listeners.js';
import { locationUsed } from './location.js';
import { LOCATION_SKU, type AccountInfo } from './seed-tables.js';
import { iso, isoDate, startOfBillCycle } from './sim-clock.js';
import type { Core, UsageTrigger } from './state.js';

// ── usage triggers ──────────────────────────────────────────────────────────────────────────────

/** The account of a usage-trigger request: the session must be the primary account's user. */
function primaryAccount(ctx: Ctx, name: unknown): AccountInfo {
  const a = account(ctx, name);
  if (!ctx.user.primary) throw E.noAccess();
  if (!ctx.st.locationRegistered.has(a.name)) throw E.unregisteredAccount();
  return a;
}

function resource(t: UsageTrigger): Json {
  const out: Json = {
    triggerId: t.triggerId,
    accountName: t.accountName,
    serviceName: t.serviceName,
    triggerName: t.triggerName,
    thresholdValue: t.thresholdValue,
    allowExcess: t.allowExcess,
    sendSmsNotification: t.sendSmsNotification,
  };
  if (t.smsPhoneNumbers !== undefined) out.smsPhoneNumbers = t.smsPhoneNumbers;
  if (t.sendEmailNotification !== undefined) out.sendEmailNotification = t.sendEmailNotification;
  if (t.emailAddresses !== undefined) out.emailAddresses = t.emailAddresses;
  out.createDate = t.createDate;
  out.updateDate = t.updateDate;
  return out;
}

/** The members of a usage trigger a request sets: text, and flags. */
const TEXTS = ['serviceName', 'triggerName', 'thresholdValue', 'smsPhoneNumbers', 'emailAddresses'] as const;
const FLAGS = ['allowExcess', 'sendSmsNotification', 'sendEmailNotification'] as const;

/**
 * The trigger with the members a request gives: a creation gives them all, an update those it changes (merged,
 * the real service's partial update). Refused (400, nothing changed) when its notifications then lack the
 * phone numbers or addresses they need.
 */
function merged(input: Json, t: UsageTrigger): UsageTrigger {
  const next = { ...t };
  for (const k of TEXTS) if (input[k] !== undefined) next[k] = String(input[k]);
  for (const k of FLAGS) if (input[k] !== undefined) next[k] = input[k] === true;
  if (next.sendSmsNotification && !next.smsPhoneNumbers)
    throw E.invalid('smsPhoneNumbers is required when sendSmsNotification is true');
  if (next.sendEmailNotification && !next.emailAddresses)
    throw E.invalid('emailAddresses is required when sendEmailNotification is true');
  return next;
}

function createUsageTrigger(ctx: Ctx): Answer {
  const input = validInput(ctx);
  const a = primaryAccount(ctx, input.accountName);
  const day = isoDate(ctx.now);
  const t: UsageTrigger = {
    triggerId: uuid(),
    accountName: a.name,
    serviceName: '',
    triggerName: '',
    thresholdValue: '',
    allowExcess: false,
    sendSmsNotification: false,
    createDate: day,
    updateDate: day,
    alerted: new Set(),
  };
  const made = merged(input, t);
  ctx.st.usageTriggers.set(made.triggerId, made);
  return { body: resource(made) };
}

function existing(ctx: Ctx, triggerId: unknown, accountName: string): UsageTrigger {
  const t = ctx.st.usageTriggers.get(String(triggerId));
  if (!t) throw E.invalid(`Trigger not found: ${String(triggerId)}`);
  if (t.accountName !== accountName)
    throw E.invalid(`Trigger ${t.triggerId} belongs to account ${t.accountName}; a trigger cannot be moved`);
  return t;
}

function updateUsageTrigger(ctx: Ctx): Answer {
  const input = validInput(ctx);
  const a = primaryAccount(ctx, input.accountName);
  const t = merged(input, existing(ctx, input.triggerId, a.name));
  t.updateDate = isoDate(ctx.now);
  ctx.st.usageTriggers.set(t.triggerId, t);
  return { body: resource(t) };
}

function deleteUsageTrigger(ctx: Ctx): Answer {
  const input = validInput(ctx);
  const a = primaryAccount(ctx, input.accountName);
  const t = existing(ctx, input.triggerId, a.name);
  ctx.st.usageTriggers.delete(t.triggerId);
  return { body: { success: true } };
}

/** `GET /subsc/v1/usage/accounts/{accountName}/triggers[/{triggerId}]` (not in the catalog). */
function listUsageTriggers(ctx: Ctx): Answer {
  const a = primaryAccount(ctx, ctx.params.accountName);
  if (ctx.params.triggerId !== undefined)
    return { body: resource(existing(ctx, ctx.params.triggerId, a.name)) };
  return { body: [...ctx.st.usageTriggers.values()].filter((t) => t.accountName === a.name).map(resource) };
}

/** The daily usage check (spec section 8: once per day), run at each simulated midnight `at`. */
export function checkUsageTriggers(core: Core, at: number): void {
  const st = core.state;
  for (const t of st.usageTriggers.values()) {
    const a = st.world.account(t.accountName);
    if (!a) continue;
    const cycle = startOfBillCycle(at - 1, a.billCycleDay);
    const used = locationUsed(st, a.index, at - 1);
    const pct = (used / a.locationSubscription) * 100;
    if (pct < Number(t.thresholdValue) || t.alerted.has(cycle)) continue;
    t.alerted.add(cycle);
    const alert = {
      triggerId: t.triggerId,
      triggerName: t.triggerName,
      accountName: t.accountName,
      serviceName: t.serviceName,
      thresholdValue: t.thresholdValue,
      usagePercentage: Math.floor(pct),
      usedTransactions: used,
      subscribedTransactions: a.locationSubscription,
      checkedAt: iso(at),
    };
    if (t.sendSmsNotification || t.sendEmailNotification)
      st.notification({
        ...alert,
        sms: t.sendSmsNotification ? (t.smsPhoneNumbers ?? '') : '',
        email: t.sendEmailNotification ? (t.emailAddresses ?? '') : '',
      });
    notify(core, t.accountName, 'Location', 'usageTriggerResponse', {
      requestId: uuid(),
      usageTriggerResponse: alert,
    });
  }
}

// ── managed accounts ────────────────────────────────────────────────────────────────────────────

/**
 * The primary account of a managed-account request, checked in the order of 7.2: the user's access
 * ("UWS account validation failed…"), that it is a primary account ("Primary account not registered"), the
 * service name, then the SKU ("Acct Not Provisioned With Provided Parameters…").
 */
function primary(ctx: Ctx, name: unknown, serviceName: unknown, type: unknown): AccountInfo {
  if (typeof name !== 'string' || !ACCOUNT_PATTERN.test(name)) throw E.invalidAccountName();
  const a = ctx.st.world.account(name);
  if (!a) throw E.accountNotFound(name);
  if (!ctx.user.accounts.includes(name) || !ctx.user.primary) throw E.contactNoAccess(name);
  if (!a.primary) throw E.primaryNotRegistered();
  if (serviceName !== MANAGED_SERVICE) throw E.invalidServiceName();
  if (type !== LOCATION_SKU) throw E.notProvisioned();
  return a;
}

function addManaged(ctx: Ctx): Answer {
  const input = validInput(ctx, ['serviceName']);
  const p = primary(ctx, input.accountName, input.serviceName, input.type);
  const st = ctx.st;
  const txid = uuid();
  const statusList = (input.managedAccList as string[]).map((id) => {
    const a = st.world.account(id);
    if (!a) return { id, status: 'Fail', reason: 'Invalid account name' };
    if (a.primary) return { id, status: 'Fail', reason: 'A primary account cannot be managed' };
    if (!ctx.user.accounts.includes(id))
      return {
        id,
        status: 'Fail',
        reason: `UWS account validation failed(The contact does not have access to the account ${id}.)`,
      };
    st.managed.add(id);
    st.managedTx.set(id, { txid, primary: p.name, type: String(input.type) });
    return { id, status: 'Success', reason: 'Success' };
  });
  return { body: { TxId: txid, statusList } };
}

/**
 * `POST /subsc/v1/managedaccounts/actions/provision` quotes the TxId of the add and answers a txid of its own;
 * `/cancel` quotes that one ("the last action on the account", 7.2 `Txd Mismatch`). Provisioning again with the
 * same TxId answers the same txid: a provision sent again does no harm.
 */
function provisionOrCancel(ctx: Ctx, provision: boolean): Answer {
  const input = validInput(ctx, ['serviceName']);
  const p = primary(ctx, input.paccountName, input.serviceName, input.type);
  const name = String(input.accountName);
  const st = ctx.st;
  const last = st.managedTx.get(name);
  if (!st.managed.has(name) || !last || last.primary !== p.name || last.type !== input.type)
    throw E.notProvisioned();
  if (!provision && !last.provisioned) throw E.notProvisioned();
  if (input.txid !== (provision ? last.txid : last.provisioned)) throw E.txdMismatch();
  let txid: string;
  if (provision) {
    txid = last.provisioned ??= uuid();
    st.locationRegistered.add(name);
  } else {
    txid = uuid();
    st.locationRegistered.delete(name);
    st.managed.delete(name);
    st.managedTx.delete(name);
  }
  return {
    body: {
      txid,
      accountName: name,
      paccountName: p.name,
      serviceName: input.serviceName,
      status: 'Success',
      reason: 'Success',
    },
  };
}

/**
 * `GET /subsc/v1/managedaccounts/{accountName}/service/{serviceName}`: the accounts added and not yet
 * provisioned, and those provisioned, each with the txid to quote next.
 */
function listManaged(ctx: Ctx): Answer {
  const input = validInput(ctx, ['serviceName']);
  const p = primary(ctx, input.accountName, input.serviceName, LOCATION_SKU);
  const added: Json[] = [];
  const provisioned: Json[] = [];
  for (const [id, tx] of ctx.st.managedTx) {
    if (tx.primary !== p.name || !ctx.st.managed.has(id)) continue;
    if (tx.provisioned) provisioned.push({ id, txid: tx.provisioned });
    else added.push({ id, txid: tx.txid });
  }
  return {
    body: { accountName: p.name, ManagedAccAddedList: added, managedAccProvisionedList: provisioned },
  };
}

export const subscriptionHandlers = {
  'usageTriggers.create': createUsageTrigger,
  'usageTriggers.update': updateUsageTrigger,
  'usageTriggers.delete': deleteUsageTrigger,
  'usageTriggers.list': listUsageTriggers,
  'managedAccounts.add': addManaged,
  'managedAccounts.provision': (ctx: Ctx) => provisionOrCancel(ctx, true),
  'managedAccounts.cancel': (ctx: Ctx) => provisionOrCancel(ctx, false),
  'managedAccounts.list': listManaged,
};
