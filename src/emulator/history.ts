/**
 * What happened to one device (`/m2m/v1/devices/connections/actions/listHistory`, `/devices/history/actions/
 * list`): its data sessions and its provisioning events.
 *
 * Sessions are not stored: device `n` has 0 to 3 sessions on each simulated day, a hash of `(seed, n, day)`,
 * each at a hashed time in its third (half, whole) of the day, of 5 minutes to 2 hours, and only while the device
 * was active. A session is two connection events, `Start` and `Stop`; the Stop carries the bytes the device used
 * in it (the same usage as devices.usage reads). The aggregated usage report counts the same sessions.
 *
 * Provisioning events are the seed's (activation at creation; a device seeded suspended or deactivated changed
 * state at a seeded time) and every change of state or plan since, by the API or by a price plan trigger.
 */
import { account, validInput, type Answer, type Ctx, type Json } from './context.js';
import { ACTIVE, DEACTIVE, PENDING, SUSPENDED, type Change } from './devices.js';
import { E } from './errors.js';
import { hash32, unit } from './random.js';
import type { DeviceIdPair } from './seed.js';
import { DAY_MS, MINUTE_MS, iso } from './sim-clock.js';
import type { EmulatorState } from './state.js';

/** Events per answer of connection history (spec section 8). */
export const MAX_CONNECTION_EVENTS = 500;
const SESSION_SALT = 0x5e5;

export interface Session {
  start: number;
  stop: number;
}

/** The data sessions of device `n` that start on simulated day `day` (days since the epoch), in time order. */
export function sessionsOn(st: EmulatorState, n: number, day: number): Session[] {
  const h = st.world.h;
  const count = hash32(h, n, SESSION_SALT, day) % 4;
  const out: Session[] = [];
  const slot = DAY_MS / Math.max(count, 1);
  for (let i = 0; i < count; i++) {
    // In the first half of its slot, at most 2 hours long: sessions never overlap or cross midnight.
    const start = day * DAY_MS + Math.floor(slot * i + unit(h, n, SESSION_SALT + 1 + i, day) * slot * 0.5);
    const minutes = 5 + unit(h, n, SESSION_SALT + 8 + i, day) * 115;
    if (st.devices.activeAt(n, start)) out.push({ start, stop: start + Math.floor(minutes * MINUTE_MS) });
  }
  return out;
}

/** The device a history request names, which the session user must be allowed to see. */
export function namedDevice(ctx: Ctx, d: DeviceIdPair): number {
  const n = ctx.st.devices.find(d.kind, d.id);
  if (n < 0) throw E.invalid(`Device not found: ${d.kind.toLowerCase()} ${d.id}`);
  account(ctx, ctx.st.world.accounts[ctx.st.devices.account(n)]!.name);
  return n;
}

/** `earliest` and `latest` of a request, in simulated ms. */
function period(input: Json): { earliest: number; latest: number } {
  const earliest = Date.parse(String(input.earliest));
  const latest = Date.parse(String(input.latest));
  if (!(earliest <= latest)) throw E.invalid('earliest must not be after latest');
  return { earliest, latest };
}

function connectionEvent(st: EmulatorState, n: number, t: number, event: string, bytes: number): Json {
  return {
    occurredAt: iso(t),
    connectionEventAttributes: [
      { key: 'Event', value: event },
      { key: 'BytesUsed', value: String(bytes) },
      { key: 'Msisdn', value: st.devices.idOf(n, 'msisdn') ?? '' },
      { key: 'ServiceType', value: 'Data' },
    ],
    extendedAttributes: [],
  };
}

/** Events within [earliest, latest] (and not after now), oldest first, at most 500; 202 while there are more. */
function connectionHistory(ctx: Ctx): Answer {
  const input = validInput(ctx);
  const st = ctx.st;
  const n = namedDevice(ctx, input.deviceId as DeviceIdPair);
  const { earliest, latest } = period(input);
  const to = Math.min(latest, ctx.now);
  const events: Json[] = [];
  let more = false;
  const first = Math.floor(Math.max(earliest, st.devices.created(n)) / DAY_MS);
  outer: for (let day = first; day * DAY_MS <= to; day++) {
    for (const s of sessionsOn(st, n, day)) {
      const bytes = st.devices.bytes(n, s.start, s.stop);
      for (const [t, event, used] of [
        [s.start, 'Start', 0],
        [s.stop, 'Stop', bytes],
      ] as const) {
        if (t < earliest || t > to) continue;
        if (events.length === MAX_CONNECTION_EVENTS) {
          more = true;
          break outer;
        }
        events.push(connectionEvent(st, n, t, event, used));
      }
    }
  }
  return { status: more ? 202 : 200, body: { hasMoreData: more, connectionHistory: events } };
}

/** The state and plan of a device over time: what the seed gave it, then every change since, in time order. */
export function timeline(st: EmulatorState, n: number): Change[] {
  const w = st.world;
  const out: Change[] = [];
  if (n < w.total) {
    const initial = w.initialState(n);
    const plan = w.plans[w.initialPlan(n)]!.code;
    if (initial !== PENDING) out.push({ t: w.created(n), state: ACTIVE, plan });
    if (initial === SUSPENDED || initial === DEACTIVE) out.push({ t: w.stateSince(n), state: initial, plan });
  }
  out.push(...st.devices.changes(n));
  return out;
}

function eventType(from: Change | undefined, to: Change): string | undefined {
  const before = from?.state ?? PENDING;
  if (to.state !== before) {
    if (to.state === ACTIVE) return before === SUSPENDED ? 'Restore' : 'Activate';
    if (to.state === SUSPENDED) return 'Suspend';
    if (to.state === DEACTIVE) return 'Deactivate';
    return undefined;
  }
  return from && to.plan !== from.plan ? 'Change Plan' : undefined;
}

/** Provisioning events within [earliest, latest], as the one-element array the published SDK reads. */
function provisioningHistory(ctx: Ctx): Answer {
  const input = validInput(ctx);
  const st = ctx.st;
  const n = namedDevice(ctx, input.deviceId as DeviceIdPair);
  const { earliest, latest } = period(input);
  const activation = st.activations.get(n);
  const events: Json[] = [];
  let prev: Change | undefined;
  for (const c of timeline(st, n)) {
    const type = eventType(prev, c);
    prev = c;
    if (!type || c.t < earliest || c.t > latest) continue;
    events.push({
      occurredAt: iso(c.t),
      status: 'Success',
      ...(type === 'Activate' && activation?.at === c.t ? { eventBy: activation.by } : {}),
      eventType: type,
      mdn: st.devices.idOf(n, 'mdn') ?? '',
      msisdn: st.devices.idOf(n, 'msisdn') ?? '',
      servicePlan: c.plan,
      extendedAttributes: [],
    });
  }
  return { body: [{ hasMoreData: false, provisioningHistory: events }] };
}

export const historyHandlers = {
  'devices.connectionHistory': connectionHistory,
  'devices.provisioningHistory': provisioningHistory,
};
