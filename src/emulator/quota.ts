/**
 * The location quota of an account (`/loc/v1/subscriptions/{accountName}`, `/loc/v1/usage`): its location
 * subscription, and the location transactions it used over a period, counted per simulated day as locate and
 * reports use them (location.ts). Usage triggers check the same count (subscriptions.ts).
 */
import { LOCATION_SKU, type AccountInfo } from './seed-tables.js';
import { account, validInput, type Answer, type Ctx, type Json } from './context.js';
import { E } from './errors.js';
import { DAY_MS, iso, startOfBillCycle, utcDay } from './sim-clock.js';
import type { EmulatorState } from './state.js';

function registered(ctx: Ctx, name: unknown): AccountInfo {
  const a = account(ctx, name);
  if (!ctx.st.locationRegistered.has(a.name)) throw E.unregisteredAccount();
  return a;
}

/** `2017-05-10 06:25:25.171 +0000 UTC`, the time format of the service's example. */
function serviceTime(ms: number): string {
  return `${iso(ms).replace('T', ' ').replace('Z', '')} +0000 UTC`;
}

function subscription(a: AccountInfo, st: EmulatorState): Json {
  return {
    accountName: a.name,
    locType: LOCATION_SKU,
    maxAllowance: String(a.locationSubscription),
    // Bought at the start of the billing cycle the world began in.
    purchaseTime: serviceTime(startOfBillCycle(st.world.start, a.billCycleDay)),
  };
}

/** Days since the epoch of an `mm-dd-yyyy` date. */
function day(text: string, field: string): number {
  const [m, d, y] = text.split('-').map(Number) as [number, number, number];
  const t = utcDay(y, m - 1, d);
  if (new Date(t).getUTCDate() !== d) throw E.invalid(`${field} is not a date: ${text}`);
  return t / DAY_MS;
}

function used(st: EmulatorState, a: AccountInfo, from: number, to: number): number {
  let count = 0;
  for (const [d, n] of st.locationDaily.get(a.index) ?? []) if (d >= from && d <= to) count += n;
  return count;
}

function usage(ctx: Ctx): Answer {
  const input = validInput(ctx);
  const a = registered(ctx, input.accountName);
  const st = ctx.st;
  const from = day(String(input.startDate), 'startDate');
  const to = day(String(input.endDate), 'endDate');
  if (from > to) throw E.invalid('startDate must not be after endDate');
  const { accountName: _a, ...sub } = subscription(a, st);
  const body: Json = {
    accountName: a.name,
    ...sub,
    startDate: input.startDate,
    endDate: input.endDate,
    transactions: used(st, a, from, to),
  };
  // A primary account sees its managed accounts too: the transactions it is billed for.
  if (input.usageForAllAccounts === true && a.primary) {
    const accounts = st.world.accounts
      .filter((m) => m.index === a.index || (st.managed.has(m.name) && st.locationRegistered.has(m.name)))
      .map((m) => ({ accountName: m.name, transactions: used(st, m, from, to) }));
    body.accounts = accounts;
    body.totalTransactions = accounts.reduce((sum, m) => sum + m.transactions, 0);
  }
  return { body };
}

export const quotaHandlers = {
  'location.subscription': (ctx: Ctx): Answer => ({
    body: subscription(registered(ctx, validInput(ctx).accountName), ctx.st),
  }),
  'location.usage': usage,
};
