/**
 * The boundary between a run's data (plain JSON values) and cel-js's values, both ways.
 *
 * In: JSON numbers that are integers behave as CEL ints (`event.count + 1`), so objects and lists are wrapped in
 * proxies that read integer-valued numbers as BigInt, lazily: a large context is never copied. Reading a list
 * or map, or a long string, grants the evaluation its share of the budget (budget.ts).
 *
 * Any key is data, whatever its name (issue 15). cel-js tells a map from other values by `value.constructor`,
 * so an object whose own `constructor` key would hide Object's goes in as a Map of its entries (which cel-js
 * reads by `get`, never by property): `constructor`, `__proto__`, `toString`... read as the data they hold.
 *
 * Out: results as plain JSON values: BigInt and uint as numbers, proxies unwrapped to the very objects of the
 * context, Maps as objects, bytes as base64, a type as its name, a duration as a playbook writes one (durationText).
 */
import { Environment } from '@marcbachmann/cel-js';
import { Duration, UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import { EnvWithheldError } from '../errors.js';
import { envWithheld } from '../util/secrets.js';
import { charge, grantElements, grantString } from './budget.js';

/** What a proxy of the context answers with its target. */
const TARGET = Symbol('fleetbook.target');

/** cel-js's class of type values (`int`, `type(x)`), which it does not export. */
const TypeClass = (new Environment().evaluate('int') as object).constructor as new (...a: never[]) => {
  name: string;
};

/** Values cel-js reads as they are (its own classes). */
const native = (v: object) =>
  v instanceof Date ||
  v instanceof Uint8Array ||
  v instanceof Map ||
  v instanceof UnsignedInt ||
  v instanceof Duration ||
  v instanceof TypeClass;

const objectHandler: ProxyHandler<Record<string | symbol, unknown>> = {
  get(target, prop) {
    if (prop === TARGET) return target;
    const v = target[prop];
    return typeof prop === 'symbol' ? v : toCel(v);
  },
  ownKeys(target) {
    const keys = Reflect.ownKeys(target);
    grantElements(target, keys.length);
    return keys;
  },
};

const arrayHandler: ProxyHandler<Record<string | symbol, unknown> & unknown[]> = {
  get(target, prop) {
    if (prop === TARGET) return target;
    // An array's length is the engine's, not data: CEL's list operations read it as a JS number.
    if (prop === 'length') {
      grantElements(target, target.length);
      return target.length;
    }
    const v = target[prop];
    return typeof prop === 'symbol' ? v : toCel(v);
  },
};

/** Lists sliced from lists of the context: of the context's data, but theirs was granted already (sliceList). */
const partHandler: ProxyHandler<Record<string | symbol, unknown> & unknown[]> = {
  get(target, prop) {
    if (prop === TARGET) return target;
    const v = target[prop];
    return typeof prop === 'symbol' || prop === 'length' ? v : toCel(v);
  },
};

/**
 * The elements of `list` from `from` up to `to` (valid indexes). A list of the context is sliced as it is, not
 * element by element through its proxy: the part holds the data's very elements (what fromCel returns), and
 * reading its size grants nothing more, as its elements are the list's, whose read granted them. Either way the
 * part is a copy of its references only, never of the list.
 */
export function sliceList(list: unknown[], from: number, to: number): unknown[] {
  const target = (list as { [TARGET]?: unknown[] })[TARGET];
  if (target === undefined) return list.slice(from, to);
  grantElements(target, target.length);
  return new Proxy(target.slice(from, to) as never, partHandler);
}

/**
 * The handler of `env`: a variable fleetbook withholds (util/secrets.ts) is never there, and asking for one
 * (`env.NAME`, `env[inputs.name]`, `in`: cel-js asks by hasOwn) fails with its own error, not `No such key`.
 */
const envHandler: ProxyHandler<Record<string | symbol, unknown>> = {
  ...objectHandler,
  getOwnPropertyDescriptor(target, prop) {
    const why = typeof prop === 'string' && !Object.hasOwn(target, prop) ? envWithheld(prop) : undefined;
    if (why) throw new EnvWithheldError(prop as string, why);
    return Reflect.getOwnPropertyDescriptor(target, prop);
  },
};

/** The Maps that stand for objects of the context, and those objects. */
const originals = new WeakMap<object, object>();

function asMap(o: Record<string, unknown>): Map<string, unknown> {
  const keys = Object.keys(o);
  // Built at each read: the work is the evaluation's.
  charge(keys.length);
  grantElements(o, keys.length);
  const m = new Map<string, unknown>();
  for (const k of keys) m.set(k, toCel(o[k]));
  originals.set(m, o);
  return m;
}

export function toCel(v: unknown): unknown {
  switch (typeof v) {
    case 'number':
      return Number.isInteger(v) ? BigInt(v) : v;
    case 'string':
      grantString(v);
      return v;
    case 'undefined':
      return null;
    case 'object':
      if (v === null || native(v)) return v;
      if (Array.isArray(v)) return new Proxy(v as never, arrayHandler);
      if (Object.hasOwn(v, 'constructor')) return asMap(v as Record<string, unknown>);
      return new Proxy(v as never, objectHandler);
    default:
      return v;
  }
}

/** The context of an evaluation: its variables, each wrapped; `env` refusing the variables fleetbook withholds. */
export function wrapContext(context: Record<string, unknown>): Record<string, unknown> {
  const out = Object.create(null) as Record<string, unknown>;
  for (const k of Object.keys(context)) {
    const v = context[k];
    // An env with a variable named `constructor` goes in as a Map, as any such object does (toCel).
    out[k] =
      k === 'env' && v !== null && typeof v === 'object' && !Object.hasOwn(v, 'constructor')
        ? new Proxy(v as never, envHandler)
        : toCel(v);
  }
  return out;
}

/** A CEL result as plain JSON. */
export function fromCel(v: unknown): unknown {
  switch (typeof v) {
    case 'bigint':
      return Number(v);
    case 'object':
      break;
    default:
      return v;
  }
  if (v === null || v instanceof Date) return v;
  const target = (v as { [TARGET]?: object })[TARGET];
  if (target !== undefined) return target;
  if (Array.isArray(v)) return v.map(fromCel);
  if (v instanceof Map)
    return originals.get(v) ?? Object.fromEntries([...v].map(([k, x]) => [String(k), fromCel(x)]));
  if (v instanceof UnsignedInt) return Number(v.valueOf());
  if (v instanceof TypeClass) return v.name;
  if (v instanceof Duration) return durationText(v);
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fromCel(x)]));
}

/**
 * A duration as a playbook's durations are written (playbook/duration.ts), so that every argument that takes a
 * duration takes it: its seconds, as CEL writes whole ones (`5400s`), with the milliseconds of a fraction
 * (`1s500ms`, `500ms`). One below zero or with a part below a millisecond is no playbook duration: CEL's text
 * (`-90s`, `0.0005s`), which such an argument refuses (FB_INPUT).
 */
export function durationText(d: Duration): string {
  const { seconds, nanos } = d;
  if (seconds < 0n || nanos < 0 || nanos % 1_000_000 !== 0) return d.toString();
  const ms = nanos / 1_000_000;
  if (!ms) return `${seconds}s`;
  return `${seconds ? `${seconds}s` : ''}${ms}ms`;
}
