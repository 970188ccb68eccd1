/**
 * Reports over many devices: the aggregated usage report (`/hyper-precise/v1/report/aggregate`, synchronous, at
 * most 10 devices), aggregated usage by callback (`/m2m/v1/devices/usage/actions/list/aggregate`, DeviceUsage)
 * and suspension status by callback (`/m2m/v1/devices/suspension/status`, DeviceSuspensionStatus).
 *
 * The callback reports answer `{ requestId }` and send one message per device to the account's listener of
 * their service, if one is registered (none is sent otherwise, as for every callback). Usage is the usage
 * devices.usage reads; sessions are those of connection history (history.ts).
 */
import { MAX_SYNC_REPORT_DEVICES } from '../api/limits.js';
import { account, uuid, validInput, type Answer, type Ctx, type Json } from './context.js';
import { selection } from './connectivity.js';
import { targets } from './device-actions.js';
import { STATES, SUSPENDED } from './devices.js';
import { E } from './errors.js';
import { groupsOf } from './groups.js';
import { namedDevice, sessionsOn, timeline } from './history.js';
import { notify } from './listeners.js';
import type { DeviceIdPair } from './seed.js';
import type { AccountInfo } from './seed-tables.js';
import { DAY_MS, iso, startOfDay } from './sim-clock.js';
import type { EmulatorState } from './state.js';

/** The aggregated report covers at most 180 days. */
const MAX_REPORT_DAYS = 180;
/** Aggregated usage by callback: startTime at most 6 months back, endTime within a month of it. */
const MAX_AGE_MS = 183 * DAY_MS;
const MAX_SPAN_MS = 31 * DAY_MS;
/** Suspension days a device may use in any 12 months. */
export const MAX_SUSPEND_DAYS = 180;

function sessionsBetween(st: EmulatorState, n: number, from: number, to: number): number {
  let count = 0;
  for (let day = Math.floor(from / DAY_MS); day * DAY_MS < to; day++)
    for (const s of sessionsOn(st, n, day)) if (s.start >= from && s.start < to) count++;
  return count;
}

// ── the synchronous report ──────────────────────────────────────────────────────────────────────

function aggregateReport(ctx: Ctx): Answer {
  const input = validInput(ctx);
  const a = account(ctx, input.accountNumber);
  const st = ctx.st;
  const store = st.devices;
  const today = startOfDay(ctx.now);
  const from = input.startDate ? Date.parse(String(input.startDate)) : today - MAX_REPORT_DAYS * DAY_MS;
  const to = Math.min(input.endDate ? Date.parse(String(input.endDate)) + DAY_MS : ctx.now, ctx.now);
  if (!(from < to)) throw E.invalid('startDate must be before endDate, and not in the future');
  if (to - from > (MAX_REPORT_DAYS + 1) * DAY_MS)
    throw E.invalid(`The date range of a report is at most ${MAX_REPORT_DAYS} days`);
  const errors: Json[] = [];
  let devices: number[] = [];
  const imeis = input.imei as string[];
  for (const imei of imeis) {
    const n = store.find('imei', imei);
    if (n < 0) errors.push({ imei, errorMessage: 'Device not found' });
    else if (store.account(n) !== a.index)
      errors.push({ imei, errorMessage: `Device does not belong to account ${a.name}` });
    else devices.push(n);
  }
  if (!imeis.length) devices = [...store.inOrder(a.index)];
  devices = devices.filter(selection(st, { groupName: input.deviceGroup, servicePlan: input.dataPlan }));
  if (devices.length > MAX_SYNC_REPORT_DEVICES)
    throw E.invalid(
      `A synchronous report covers at most ${MAX_SYNC_REPORT_DEVICES} devices, and ${devices.length} match: name them in imei, or ask for aggregated usage by callback`,
    );
  const usage = devices
    .map((n) => ({
      imei: store.idOf(n, 'imei') ?? '',
      numberOfSessions: sessionsBetween(st, n, from, to),
      bytesTransferred: store.bytes(n, from, to),
    }))
    .filter((u) => input.noSessionFlag !== true || u.numberOfSessions === 0);
  return { body: { txid: uuid(), usage, ...(errors.length ? { errors } : {}) } };
}

// ── reports by callback ─────────────────────────────────────────────────────────────────────────

interface Target {
  n: number;
  named: DeviceIdPair;
  accountName: string;
}

/**
 * The devices a callback report is for, chosen as device actions choose theirs (`targets`) with `filter`: in
 * `accountName` when it is given, else each named device in its own account, which the user must be allowed to
 * see.
 */
function reportTargets(ctx: Ctx, input: Json, filter: Json): Target[] {
  const of = (a: AccountInfo, devices: Json) =>
    targets(ctx, a, { ...filter, ...devices }).map((d) => ({ n: d.n, named: d.named, accountName: a.name }));
  if (input.accountName !== undefined)
    return of(account(ctx, input.accountName), input.deviceIds ? { deviceIds: input.deviceIds } : {});
  const out: Target[] = [];
  const seen = new Set<number>();
  for (const d of input.deviceIds as DeviceIdPair[]) {
    const n = namedDevice(ctx, d);
    if (seen.has(n)) throw E.invalid(`Duplicate devices: ${d.kind} ${d.id} is named twice`);
    seen.add(n);
    out.push(...of(ctx.st.world.accounts[ctx.st.devices.account(n)]!, { deviceIds: [d] }));
  }
  return out;
}

/** Sends one message per device to the `service` listener of the device's account; answers the requestId. */
function report(
  ctx: Ctx,
  devices: Target[],
  service: string,
  kind: string,
  body: (t: Target) => unknown,
): Answer {
  const requestId = uuid();
  for (const t of devices)
    notify(ctx.core, t.accountName, service, kind, {
      requestId,
      deviceIds: [t.named],
      deviceResponse: { [kind]: body(t) },
    });
  return { body: { requestId } };
}

function aggregateUsage(ctx: Ctx): Answer {
  const input = validInput(ctx);
  const st = ctx.st;
  const startTime = Date.parse(String(input.startTime));
  const endTime = Date.parse(String(input.endTime));
  if (!(startTime <= endTime)) throw E.invalid('startTime must not be after endTime');
  if (startTime < ctx.now - MAX_AGE_MS) throw E.invalid('startTime cannot be more than 6 months ago');
  if (endTime - startTime > MAX_SPAN_MS) throw E.invalid('endTime must be within one month of startTime');
  // No device carries a usage segmentation label here: the service would find none.
  const label = (input.label as { name: string; value: string }[] | undefined)?.[0];
  if (label) throw E.invalid(`No device has the label ${label.name}=${label.value}`);
  const group = input.groupName as string | undefined;
  if (group !== undefined) {
    const a = account(ctx, input.accountName);
    if (!groupsOf(st, a.index).has(group)) throw E.invalid(`Device group not found: ${group}`);
  }
  const devices = reportTargets(ctx, input, { groupName: group });
  const to = Math.min(endTime, ctx.now);
  return report(ctx, devices, 'DeviceUsage', 'usageResponse', (t) => [
    {
      deviceIds: [t.named],
      bytesUsed: st.devices.bytes(t.n, startTime, Math.max(startTime, to)),
      smsUsed: smsBetween(st, t.n, startTime, to),
      startTime: iso(startTime),
      endTime: iso(endTime),
    },
  ]);
}

function smsBetween(st: EmulatorState, n: number, from: number, to: number): number {
  if (n >= st.world.total) return 0;
  let count = 0;
  for (let day = Math.floor(from / DAY_MS); day * DAY_MS < to; day++) count += st.world.smsOnDay(n, day);
  return count;
}

/** Days (rounded up) a device spent suspended in [from, to), and since when it is suspended, if it is. */
function suspension(st: EmulatorState, n: number, from: number, to: number) {
  let ms = 0;
  let since: number | undefined;
  for (const c of timeline(st, n)) {
    if (since !== undefined && c.state !== SUSPENDED) {
      ms += Math.max(0, Math.min(c.t, to) - Math.max(since, from));
      since = undefined;
    } else if (since === undefined && c.state === SUSPENDED) since = c.t;
  }
  if (since !== undefined) ms += Math.max(0, to - Math.max(since, from));
  return { days: Math.ceil(ms / DAY_MS), since };
}

function suspensionStatus(ctx: Ctx): Answer {
  const input = validInput(ctx);
  const st = ctx.st;
  const store = st.devices;
  const devices = reportTargets(ctx, input, (input.filter ?? {}) as Json);
  return report(ctx, devices, 'DeviceSuspensionStatus', 'suspensionStatusResponse', (t) => {
    const s = suspension(st, t.n, ctx.now - 365 * DAY_MS, ctx.now);
    const state = store.stateCode(t.n);
    return {
      accountName: t.accountName,
      state: STATES[state],
      ...(state === SUSPENDED && s.since !== undefined ? { suspendedSince: iso(s.since) } : {}),
      suspendedDaysInLast12Months: s.days,
      remainingSuspendDays: Math.max(0, MAX_SUSPEND_DAYS - s.days),
    };
  });
}

export const usageReportHandlers = {
  'usage.aggregate': aggregateReport,
  'usage.aggregateAsync': aggregateUsage,
  'devices.suspensionStatus': suspensionStatus,
};
