/**
 * Mobile-originated SMS (`/m2m/v1/sms/{aname}/history`, `/startCallbacks`): the messages the account's devices
 * sent to the service, listed 100 an answer, and, once an account has started callbacks, each also sent to its
 * EnhancedConnectivityService listener.
 *
 * Messages are not stored: an active device sends one on a simulated day with probability 1/40, at a hashed
 * time, with one of a few texts, all a hash of `(seed, n, day)`. The service keeps the last 7 days. A history
 * read does not remove what it lists, so that a read sent again answers the same (docs/spec-decisions.md).
 */
import { account, nextPage, uuid, validInput, type Answer, type Ctx, type Json } from './context.js';
import { notify } from './listeners.js';
import { hash32, unit } from './random.js';
import type { AccountInfo } from './seed-tables.js';
import { DAY_MS, iso } from './sim-clock.js';
import type { Core, EmulatorState } from './state.js';

/** Messages per answer of the SMS history. */
export const SMS_PAGE = 100;
/** How long the service keeps a device's message. */
export const SMS_RETENTION_MS = 7 * DAY_MS;
const SMS_SALT = 0x3c5;
/** One active device in this many sends a message on a given day. */
const SMS_ONE_IN = 40;
const TEXTS = ['STATUS OK', 'BATTERY LOW', 'DOOR OPEN', 'TEMP HIGH', 'REBOOTED', 'GPS FIX LOST'];

interface Received {
  n: number;
  t: number;
  text: string;
}

/** Past days' messages by account and day: they no longer change. */
const pastDays = new WeakMap<EmulatorState, Map<string, Received[]>>();

/** The messages the service received on `day` from the account's devices, in time order. */
function receivedOn(st: EmulatorState, a: AccountInfo, day: number, now: number): Received[] {
  const past = (day + 1) * DAY_MS <= now;
  let cache = pastDays.get(st);
  if (!cache) pastDays.set(st, (cache = new Map()));
  const key = `${a.index}:${day}`;
  const known = past ? cache.get(key) : undefined;
  if (known) return known;
  const h = st.world.h;
  const out: Received[] = [];
  for (const n of st.devices.inOrder(a.index)) {
    if (hash32(h, n, SMS_SALT, day) % SMS_ONE_IN !== 0) continue;
    const t = day * DAY_MS + Math.floor(unit(h, n, SMS_SALT + 1, day) * DAY_MS);
    if (st.devices.activeAt(n, t))
      out.push({ n, t, text: TEXTS[hash32(h, n, SMS_SALT + 2, day) % TEXTS.length]! });
  }
  out.sort((x, y) => x.t - y.t || x.n - y.n);
  if (past) {
    cache.set(key, out);
    // Days older than the retention are never asked for again.
    cache.delete(`${a.index}:${day - Math.ceil(SMS_RETENTION_MS / DAY_MS) - 1}`);
  }
  return out;
}

/** The messages received in (from, to], oldest first; only the retention window before `now` is kept. */
function received(st: EmulatorState, a: AccountInfo, from: number, to: number, now: number): Received[] {
  const lo = Math.max(from, now - SMS_RETENTION_MS);
  const out: Received[] = [];
  for (let day = Math.floor(lo / DAY_MS); day * DAY_MS <= to; day++)
    for (const m of receivedOn(st, a, day, now)) if (m.t > lo && m.t <= to) out.push(m);
  return out;
}

function deviceIds(st: EmulatorState, n: number): Json[] {
  return ['imei', 'mdn'].flatMap((kind) => {
    const id = st.devices.idOf(n, kind);
    return id === undefined ? [] : [{ id, kind }];
  });
}

function history(ctx: Ctx): Answer {
  const input = validInput(ctx);
  const a = account(ctx, input.accountName);
  const from = (input.next as number | undefined) ?? 0;
  const all = received(ctx.st, a, -Infinity, ctx.now, ctx.now);
  const messages = all.slice(from, from + SMS_PAGE).map((m) => ({
    deviceIds: deviceIds(ctx.st, m.n),
    message: m.text,
    timestamp: iso(m.t),
  }));
  const more = from + messages.length < all.length;
  const path = `/m2m/v1/sms/${encodeURIComponent(a.name)}/history`;
  return nextPage(path, from + messages.length, more, { hasMoreData: more, messages });
}

/**
 * Starts sending the account's messages to its EnhancedConnectivityService listener: those of the retention
 * window at once, later ones as simulated time reaches them. As with every callback, a message is sent only if
 * a listener is registered when it is due. Starting again changes nothing.
 */
function startCallbacks(ctx: Ctx): Answer {
  const input = validInput(ctx);
  const a = account(ctx, input.accountName);
  const st = ctx.st;
  if (!st.smsCallbacks.has(a.index)) {
    st.smsCallbacks.set(a.index, ctx.now - SMS_RETENTION_MS);
    sendSms(ctx.core, ctx.now);
  }
  return { body: { success: true } };
}

/** Sends each account that started callbacks the messages received since the last sending, up to `until`. */
export function sendSms(core: Core, until: number): void {
  const st = core.state;
  for (const [index, from] of st.smsCallbacks) {
    if (from >= until) continue;
    const a = st.world.accounts[index]!;
    for (const m of received(st, a, from, until, until))
      notify(core, a.name, 'EnhancedConnectivityService', 'smsResponse', {
        requestId: uuid(),
        deviceIds: deviceIds(st, m.n),
        deviceResponse: { smsResponse: { accountName: a.name, message: m.text, timestamp: iso(m.t) } },
      });
    st.smsCallbacks.set(index, until);
  }
}

export const smsHistoryHandlers = {
  'sms.history': history,
  'sms.startCallbacks': startCallbacks,
};
