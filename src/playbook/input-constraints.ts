/**
 * The constraints of a declared input, with the JSON Schema keywords: `pattern`, `minLength` and `maxLength`
 * (string), `minimum` and `maximum` (integer, number), `items` (an array's element type and its constraints),
 * `minItems`, `maxItems` and `uniqueItems` (array).
 *
 * Two uses, one wording: `fleetbook validate` refuses a declaration that contradicts itself (a `pattern` on a
 * number, `minimum` above `maximum`, a pattern RE2 cannot run, a default that breaks the constraints), and every
 * start of a run (coerceInputs) refuses a value that breaks one, before anything is sent.
 *
 * A `pattern` is an RE2 expression matched as `matches()` matches in an expression (expressions/regex.ts): on
 * RE2, against any part of the text (anchor it with ^ and $ for the whole), so validate and the run agree.
 */
import { re2Pattern } from '../expressions/regex.js';
import { isObject } from '../util/json.js';

type Seg = string | number;
type Json = Record<string, unknown>;

/** Whether `v` is a value of the declared `type`. */
export function ofType(type: string, v: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof v === 'string';
    case 'integer':
      return Number.isInteger(v);
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    case 'boolean':
      return typeof v === 'boolean';
    case 'array':
      return Array.isArray(v);
    case 'object':
      return isObject(v);
    default:
      return true;
  }
}

/**
 * A JSON value as text, one for all the values JSON Schema holds equal (`enum`, `uniqueItems`): an object's
 * keys in one order, at any depth; numbers as JSON writes them (1 and 1.0 alike, as a number is one number).
 */
function jsonKey(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(jsonKey).join(',')}]`;
  if (isObject(v))
    return `{${Object.keys(v)
      .sort()
      .filter((k) => v[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${jsonKey(v[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

/** Whether two JSON values are equal as JSON Schema holds them: deep, whatever the order of an object's keys. */
const sameJson = (a: unknown, b: unknown) => jsonKey(a) === jsonKey(b);
const show = (v: unknown) => JSON.stringify(v);
/** Characters as JSON Schema counts them: code points. */
const length = (s: string) => [...s].length;

/** A constraint broken: why, and by which element of an array when by one (0-based). */
interface Breach {
  why: string;
  item?: number;
}

/** `1 character`, `8 characters`. */
const characters = (n: number) => `${n} character${n === 1 ? '' : 's'}`;

/**
 * Why `v`, a value of the declaration's type, breaks one of its constraints (`key` prefixes the keyword named,
 * `items.` for an element), or undefined when it breaks none. An array is checked for its length, then each
 * element in order, then for repeats; the first breach is said.
 */
function breach(d: Json, v: unknown, key = ''): Breach | undefined {
  const at = (k: string) => `(${key}${k})`;
  const why = (text: string, item?: number): Breach => ({ why: text, item });
  if (Array.isArray(d.enum) && !d.enum.some((e) => sameJson(e, v)))
    return why(`is not one of ${d.enum.map(show).join(', ')} ${at('enum')}`);
  if (typeof v === 'string') {
    if (typeof d.pattern === 'string') {
      const re = re2Pattern(d.pattern);
      if (typeof re !== 'string' && !re.test(v))
        return why(`does not match \`${d.pattern}\` ${at('pattern')}`);
    }
    if (typeof d.minLength === 'number' && length(v) < d.minLength)
      return why(
        `${v === '' ? 'is empty' : `is shorter than ${characters(d.minLength)}`} ${at('minLength')}`,
      );
    if (typeof d.maxLength === 'number' && length(v) > d.maxLength)
      return why(`is longer than ${characters(d.maxLength)} ${at('maxLength')}`);
  }
  if (typeof v === 'number') {
    if (typeof d.minimum === 'number' && v < d.minimum)
      return why(`is less than ${d.minimum} ${at('minimum')}`);
    if (typeof d.maximum === 'number' && v > d.maximum)
      return why(`is more than ${d.maximum} ${at('maximum')}`);
  }
  return Array.isArray(v) ? arrayBreach(d, v, key, at) : undefined;
}

function arrayBreach(d: Json, v: unknown[], key: string, at: (k: string) => string): Breach | undefined {
  const n = v.length;
  if (typeof d.minItems === 'number' && n < d.minItems)
    return { why: `has ${n} item${n === 1 ? '' : 's'}, fewer than ${d.minItems} ${at('minItems')}` };
  if (typeof d.maxItems === 'number' && n > d.maxItems)
    return { why: `has ${n} items, more than ${d.maxItems} ${at('maxItems')}` };
  /** An element as said: its index (from 0, as `inputs.x[0]` reads it) and its value, a string quoted, anything else in parentheses. */
  const item = (i: number) => `item ${i} ${typeof v[i] === 'string' ? show(v[i]) : `(${show(v[i])})`}`;
  const items = isObject(d.items) ? d.items : undefined;
  if (items)
    for (let i = 0; i < n; i++) {
      if (typeof items.type === 'string' && !ofType(items.type, v[i]))
        return { why: `${item(i)} is not of type ${items.type} ${at('items.type')}`, item: i };
      const b = breach(items, v[i], `${key}items.`);
      if (b) return { why: `${item(i)} ${b.why}`, item: i };
    }
  if (d.uniqueItems === true) {
    const seen = new Set<string>();
    for (let i = 0; i < n; i++) {
      const k = jsonKey(v[i]);
      if (seen.has(k)) return { why: `${item(i)} is given twice ${at('uniqueItems')}`, item: i };
      seen.add(k);
    }
  }
  return undefined;
}

/**
 * Why the value of input `name` breaks its declaration `decl`, said as `input \`name\`: …`; undefined when it
 * keeps every constraint. `v` is of the declared type already (coerceInputs checks that first).
 */
export function inputBreach(name: string, decl: object, v: unknown): string | undefined {
  const why = breach(decl as Json, v)?.why;
  return why && `input \`${name}\`: ${show(v).length <= 60 && !Array.isArray(v) ? `${show(v)} ` : ''}${why}`;
}

/** A problem of a declaration: where under `inputs.<name>`, and what. */
export interface DeclProblem {
  path: Seg[];
  where: 'key' | 'value';
  message: string;
}

/** The keywords that apply to one type only, or to the number types. */
const FOR: [string[], string[], string][] = [
  [['pattern', 'minLength', 'maxLength'], ['string'], 'a string'],
  [['minimum', 'maximum'], ['integer', 'number'], 'an integer or a number'],
  [['items', 'minItems', 'maxItems', 'uniqueItems'], ['array'], 'an array'],
];

/** The pairs of bounds that cannot cross. */
const BOUNDS: [string, string][] = [
  ['minLength', 'maxLength'],
  ['minimum', 'maximum'],
  ['minItems', 'maxItems'],
];

/**
 * What contradicts itself in the declaration of input `name` (the schema has checked the keywords' own types):
 * a keyword its type does not take, crossed bounds, a pattern RE2 cannot run, a default or an enum value that is
 * not of the type or breaks a constraint, an enum value listed twice.
 */
export function declarationProblems(name: string, decl: unknown): DeclProblem[] {
  if (!isObject(decl) || typeof decl.type !== 'string') return [];
  const out: DeclProblem[] = [];
  const problem = (path: Seg[], where: 'key' | 'value', message: string, whole = false) =>
    out.push({ path, where, message: whole ? message : `input \`${name}\`: ${message}` });
  const keywords = (d: Json, base: Seg[], what: string) => {
    const type = d.type as string;
    for (const [keys, types, says] of FOR)
      for (const k of keys)
        if (d[k] !== undefined && !types.includes(type))
          problem([...base, k], 'key', `\`${k}\` is for ${says}; ${what} is of type ${type}`);
    for (const [lo, hi] of BOUNDS)
      if (typeof d[lo] === 'number' && typeof d[hi] === 'number' && d[lo] > d[hi])
        problem([...base, hi], 'value', `\`${hi}\` ${d[hi]} is below \`${lo}\` ${d[lo]}: no value fits`);
    if (typeof d.pattern === 'string') {
      const re = re2Pattern(d.pattern);
      if (typeof re === 'string')
        problem([...base, 'pattern'], 'value', `RE2 cannot run the pattern \`${d.pattern}\`: ${re}`);
    }
  };
  keywords(decl, [], 'the input');
  const items = isObject(decl.items) && typeof decl.items.type === 'string' ? decl.items : undefined;
  if (items && decl.type === 'array') keywords(items, ['items'], 'an item');
  if (out.length) return out.map((p) => ({ ...p, path: ['inputs', name, ...p.path] }));
  // The constraints hold together: does what the declaration gives keep them?
  // A value listed twice, as a run's value is compared with them (jsonKey): the first is named.
  const values = (list: unknown, d: Json, base: Seg[], whose: string) => {
    if (!Array.isArray(list)) return;
    const first = new Map<string, number>();
    list.forEach((e, i) => {
      const k = jsonKey(e);
      const twice = first.get(k);
      if (twice === undefined) first.set(k, i);
      const why = !ofType(d.type as string, e)
        ? `is not of type ${d.type as string}`
        : (breach({ ...d, enum: undefined }, e, base.length ? `${base.join('.')}.` : '')?.why ??
          (twice === undefined
            ? undefined
            : `is given twice (also at ${['inputs', name, ...base, 'enum'].join('.')}[${twice}]): remove one`));
      if (why) problem([...base, 'enum', i], 'value', `${whose} ${show(e)} ${why}`);
    });
  };
  values(decl.enum, decl, [], 'the enum value');
  if (items) values(items.enum, items, ['items'], 'the items.enum value');
  if (decl.default !== undefined) {
    const d = decl.default;
    const b = ofType(decl.type, d) ? breach(decl, d) : { why: `is not of type ${decl.type}` };
    const path = b?.item === undefined ? ['default'] : ['default', b.item];
    const what = b?.why.startsWith('is not one of') ? 'is not one of its enum values' : b?.why;
    const of = `the default of input \`${name}\``;
    if (what) problem(path, 'value', what.startsWith('item ') ? `${of}: ${what}` : `${of} ${what}`, true);
  }
  return out.map((p) => ({ ...p, path: ['inputs', name, ...p.path] }));
}

/** A required input with no default, in a playbook that a schedule or a callback starts with no inputs. */
export function ungivenInputProblems(inputs: Json, on: unknown): DeclProblem[] {
  if (!isObject(on)) return [];
  const starts = ['schedule', 'callback'].filter((k) => on[k] !== undefined);
  if (!starts.length) return [];
  const by = starts.map((k) => `on.${k}`).join(' and ');
  return Object.entries(inputs)
    .filter(([, decl]) => isObject(decl) && decl.required === true && decl.default === undefined)
    .map(([name]) => ({
      path: ['inputs', name, 'required'],
      where: 'value' as const,
      message: `input \`${name}\` is required and has no default, but ${by} start${starts.length > 1 ? '' : 's'} runs with no inputs: each of those runs would fail; give it a default`,
    }));
}
