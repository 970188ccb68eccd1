/**
 * The action catalog: every API operation fleetbook can call, once. The client, `fleetbook call`, the
 * playbook validator, dry-run and the emulator all read this table; nothing else lists operations.
 *
 * An action takes one JSON object: the request body's fields plus the path parameters (product.md 3).
 * The entries live by area in catalog/; this module merges them and is the one every importer uses.
 */
import type Type from 'typebox';
import { ACCOUNTS } from './catalog/accounts.js';
import { CALLBACKS } from './catalog/callbacks.js';
import { DEVICES } from './catalog/devices.js';
import { GROUPS } from './catalog/groups.js';
import { HISTORY } from './catalog/history.js';
import { LOCATION } from './catalog/location.js';
import { LOCATION_QUOTA } from './catalog/location-quota.js';
import { enc, type Json, type Operation } from './catalog/operation.js';
import { REQUESTS } from './catalog/requests.js';
import { SENSORS } from './catalog/sensors.js';
import { SESSION } from './catalog/session.js';
import { SMS } from './catalog/sms.js';
import { TRIGGERS } from './catalog/triggers.js';
import { USAGE_TRIGGERS } from './catalog/usage-triggers.js';

export { normalizeDevices } from './catalog/normalize.js';
export {
  AREAS,
  type Area,
  type ErrorShape,
  type Method,
  type Operation,
  type Strategy,
} from './catalog/operation.js';

export const CATALOG = {
  ...SESSION,
  ...TRIGGERS,
  ...LOCATION,
  ...USAGE_TRIGGERS,
  ...ACCOUNTS,
  ...CALLBACKS,
  ...SENSORS,
  ...DEVICES,
  ...SMS,
  ...REQUESTS,
  ...LOCATION_QUOTA,
  ...GROUPS,
  ...HISTORY,
} as const satisfies Record<string, Operation>;

export type ActionName = keyof typeof CATALOG;
export type ActionInput<A extends ActionName> = Type.Static<(typeof CATALOG)[A]['input']>;
export type ActionOutput<A extends ActionName> = Type.Static<(typeof CATALOG)[A]['output']>;
export const ACTIONS = Object.keys(CATALOG) as ActionName[];

export function isAction(name: string): name is ActionName {
  return Object.hasOwn(CATALOG, name);
}

export function operation(name: ActionName): Operation {
  return CATALOG[name];
}

/** The path parameters an operation's template names, e.g. `['accountName', 'txid']`. */
export function pathParams(op: Operation): string[] {
  let names = paramNames.get(op.path);
  if (!names) {
    names = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
    paramNames.set(op.path, names);
  }
  return names;
}
/** The parameters of each path template, found once: every request asks. */
const paramNames = new Map<string, string[]>();

/** The path for an input, every `{param}` filled and encoded, and the `query` members that are given after it. */
export function resolvePath(op: Operation, input: Json): string {
  if (op.route) return op.route(input);
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => enc(input[name] ?? ''));
  const query = op.query?.filter((name) => input[name] !== undefined) ?? [];
  return query.length ? `${path}?${query.map((name) => `${name}=${enc(input[name])}`).join('&')}` : path;
}
