/**
 * Callback listeners: registered, listed and deregistered through the connectivity API (`/m2m/v1/callbacks`)
 * or the location API (`/loc/v1/callbacks`, listed at `/fota/v1/callbacks`). One registry per account and
 * service name; each API lists the listeners registered through it, as the real service documents.
 */
import type { ListenerTarget } from './callbacks.js';
import { E } from './errors.js';
import { account, validInput, type Answer, type Ctx } from './context.js';
import type { Core, Listener } from './state.js';

function register(ctx: Ctx, via: 'm2m' | 'loc'): Answer {
  const input = validInput(ctx);
  const a = account(ctx, input.accountName);
  const serviceName = String(input.name ?? 'Location');
  const listener: Listener = { accountName: a.name, serviceName, url: String(input.url), via };
  if (typeof input.username === 'string') listener.username = input.username;
  if (typeof input.password === 'string') listener.password = input.password;
  let byService = ctx.st.listeners.get(a.name);
  if (!byService) {
    byService = new Map();
    ctx.st.listeners.set(a.name, byService);
  }
  byService.set(serviceName, listener);
  // The location API answers as the real service does; the connectivity one as the spec shows.
  return {
    body: via === 'loc' ? { account: a.name, name: serviceName } : { accountName: a.name, serviceName },
  };
}

function list(ctx: Ctx, via: 'm2m' | 'loc'): Answer {
  const input = validInput(ctx);
  const a = account(ctx, input.accountName);
  const out = [...(ctx.st.listeners.get(a.name)?.values() ?? [])]
    .filter((l) => l.via === via)
    .map((l) => ({
      accountName: l.accountName,
      serviceName: l.serviceName,
      url: l.url,
      ...(l.username !== undefined ? { username: l.username } : {}),
      ...(l.password !== undefined ? { password: l.password } : {}),
    }));
  // Spec 4.2: the location listing's "body is empty if none are registered".
  return via === 'loc' && out.length === 0 ? {} : { body: out };
}

function deregister(ctx: Ctx, via: 'm2m' | 'loc'): Answer {
  const input = validInput(ctx);
  const a = account(ctx, input.accountName);
  const serviceName = String(input.serviceName);
  const byService = ctx.st.listeners.get(a.name);
  if (!byService?.delete(serviceName))
    throw E.invalid(`No ${serviceName} callback listener is registered for account ${a.name}`);
  return { body: via === 'loc' ? { success: true } : { accountName: a.name, serviceName } };
}

export const listenerHandlers = {
  'callbacks.register': (ctx: Ctx) => register(ctx, 'm2m'),
  'callbacks.list': (ctx: Ctx) => list(ctx, 'm2m'),
  'callbacks.deregister': (ctx: Ctx) => deregister(ctx, 'm2m'),
  'locationCallbacks.register': (ctx: Ctx) => register(ctx, 'loc'),
  'locationCallbacks.list': (ctx: Ctx) => list(ctx, 'loc'),
  'locationCallbacks.deregister': (ctx: Ctx) => deregister(ctx, 'loc'),
};

/** The account's listener for `service` as a delivery target; undefined when none is registered. */
export function listenerTarget(core: Core, accountName: string, service: string): ListenerTarget | undefined {
  const l = core.state.listener(accountName, service);
  if (!l) return undefined;
  return {
    url: l.url,
    ...(l.username !== undefined ? { username: l.username } : {}),
    ...(l.password !== undefined ? { password: l.password } : {}),
  };
}

/** Queues a message for a target of `listenerTarget`, with the delivery settings of the faults in force. */
export function deliver(
  core: Core,
  target: ListenerTarget,
  service: string,
  accountName: string,
  kind: string,
  payload: { requestId: string } & Record<string, unknown>,
): void {
  const faults = core.state.faults;
  core.callbacks.send(
    target,
    { service, accountName, kind, payload, sign: service === 'Location' },
    faults.maxCallbackThreshold,
    faults.callbackRetryMs,
  );
}

/**
 * Sends a message to the account's listener for `service`, if one is registered; a message for which no
 * listener is registered is not sent, as with the real service.
 */
export function notify(
  core: Core,
  accountName: string,
  service: string,
  kind: string,
  payload: { requestId: string } & Record<string, unknown>,
): boolean {
  const target = listenerTarget(core, accountName, service);
  if (!target) return false;
  deliver(core, target, service, accountName, kind, payload);
  return true;
}
