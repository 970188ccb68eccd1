/**
 * Validation of action inputs against their JSON Schemas, with messages a person understands.
 *
 * Keywords of our own, which other validators ignore:
 * - `x-uniqueBy: "id"`: array items are unique by that member, checked in linear time (ajv's `uniqueItems`
 *   compares objects pairwise, which is too slow for 10,000 devices);
 * - `x-message`: the sentence to show when the subschema it sits on fails (for cross-field rules); on a
 *   `pattern`, what follows the value (`is not a duration. ...`);
 * - `x-moved`: on an object, `{ name: where }` for members that are not fields of it but were once written
 *   there (or are elsewhere in the real service's request): their "unknown field" says where to write them;
 * - `x-required`: on a member, what to write when it is missing (`on is required: it names what starts ...`).
 */
import type { CodeOptions, ErrorObject, KeywordCxt, ValidateFunction } from 'ajv';
import type Ajv2020Module from 'ajv/dist/2020.js';
import type { InputProblem } from '../errors.js';
import { closest, nearValues } from '../util/closest.js';
import { onFirstUse } from '../util/on-first-use.js';
import { generated } from './generated.js';

type Ajv = InstanceType<typeof Ajv2020Module.default>;

// ajv, loaded on first use: with the validators the build generates (api/generated.ts), a process that only
// meets valid input (a run, a daemon) never compiles a schema, and does not load ajv's compiler at all.
const ajv2020 = onFirstUse<typeof Ajv2020Module>(import.meta.url, 'ajv/dist/2020.js');
const ajvFormats = onFirstUse<(a: Ajv) => unknown>(import.meta.url, 'ajv-formats');

/**
 * Two ajv instances for the process, JSON Schema 2020-12 (the dialect of every schema in schemas/): a fast
 * one that stops at the first error, and one that collects every error with its schema, used only to explain
 * data the fast one rejected. Valid data, the common case, costs one fast pass.
 *
 * With `code`, an instance like the fast one that can also write its validators out as standalone code
 * (scripts/emit-rules.ts).
 */
export function createAjv(explaining: boolean, code?: CodeOptions): Ajv {
  const instance = new (ajv2020().default)({
    allErrors: explaining,
    strict: false,
    verbose: explaining,
    allowUnionTypes: true,
    // `oneOf` by a tag property (schemas/common.ts idFormats).
    discriminator: true,
    ...(code ? { code } : {}),
  });
  ajvFormats()(instance);
  addKeywords(instance);
  return instance;
}

let explaining: Ajv | undefined;
let fast: Ajv | undefined;

/** The process's instance that collects every error (made on first use). */
export function explainingAjv(): Ajv {
  return (explaining ??= createAjv(true));
}

function fastAjv(): Ajv {
  return (fast ??= createAjv(false));
}

/**
 * `x-uniqueBy`: no two items of the array have the same `member` (items without it, or not objects, by value).
 * Written as code, so that compiled and standalone validators (scripts/emit-rules.ts) check it alike.
 */
function uniqueByCode(cxt: KeywordCxt): void {
  const { _ } = ajv2020();
  const { gen, data, schemaCode } = cxt;
  const valid = gen.let('valid', true);
  const seen = gen.const('seen', _`new Set()`);
  gen.forOf('item', data, (item) => {
    const key = gen.const('key', _`${item} && typeof ${item} == "object" ? ${item}[${schemaCode}] : ${item}`);
    gen.if(_`${key} !== undefined`, () => {
      gen.if(_`${seen}.has(${key})`, () => gen.assign(valid, false).break());
      gen.code(_`${seen}.add(${key})`);
    });
  });
  cxt.pass(valid);
}

function addKeywords(ajv: Ajv): void {
  ajv.addKeyword({
    keyword: 'x-uniqueBy',
    type: 'array',
    schemaType: 'string',
    error: { message: (cxt) => `has a duplicate ${String(cxt.schema)}` },
    code: uniqueByCode,
  });
  ajv.addKeyword({ keyword: 'x-message', schemaType: 'string' });
  ajv.addKeyword({ keyword: 'x-moved', schemaType: 'object' });
  ajv.addKeyword({ keyword: 'x-required', schemaType: 'string' });
  ajv.addKeyword({ keyword: 'x-expr', schemaType: 'boolean' });
  ajv.addKeyword({ keyword: 'x-rule', schemaType: 'string' });
}

const compiled = new WeakMap<object, ValidateFunction>();
const compiledFast = new WeakMap<object, ValidateFunction>();

function compileOnce(
  cache: WeakMap<object, ValidateFunction>,
  instance: Ajv,
  schema: object,
): ValidateFunction {
  let v = cache.get(schema);
  if (!v) {
    v = instance.compile(schema);
    cache.set(schema, v);
  }
  return v;
}

/** The compiled validator of a schema (collecting every error), compiled once. */
export function validatorFor(schema: object): ValidateFunction {
  return compileOnce(compiled, explainingAjv(), schema);
}

/**
 * Problems of `data` against `schema`; empty when valid. `generatedName` names the validator the build
 * generated from this very schema (api/generated.ts), which then answers the common case, valid data, without
 * compiling anything. `schema` may be a function that gives it, called only when it is needed.
 */
export function check(
  schema: object | (() => object),
  data: unknown,
  generatedName?: string,
  name: ValueName = lastSegment,
  said: Said = {},
): InputProblem[] {
  if (isValid(schema, data, generatedName)) return [];
  const v = validatorFor(typeof schema === 'function' ? schema() : schema);
  return v(data) ? [] : explain(v.errors ?? [], name, said);
}

/**
 * Whether `data` is valid against `schema`, as check says, by the quick validator alone: no explaining one is
 * compiled when it is not, for a caller that needs no reason (the caller waits for a compile).
 */
export function isValid(schema: object | (() => object), data: unknown, generatedName?: string): boolean {
  const quick =
    (generatedName === undefined ? undefined : generated()?.validator(generatedName)) ??
    compileOnce(compiledFast, fastAjv(), typeof schema === 'function' ? schema() : schema);
  return quick(data);
}

/**
 * How the problems speak of the values. `rendered`: the data was computed at run time (a step's arguments,
 * rendered from expressions), which the reader has not seen: a value of the wrong type says what it is.
 */
export interface Said {
  rendered?: boolean;
}

/** The name of the validator the build generates for an action's request schema (scripts/emit-rules.ts). */
export function inputValidatorName(action: string): string {
  return `input:${action}`;
}

/** Problems of an action's input against its request schema, checked by the validator the build made for it. */
export function checkInput(
  op: { action: string; input: object },
  data: unknown,
  said: Said = {},
): InputProblem[] {
  // `input` is read only when the generated validator is missing or says no: reading it loads the schemas.
  return check(() => op.input, data, inputValidatorName(op.action), lastSegment, said);
}

const warmed = new Set<string>();

/**
 * Loads the checks the build made for these actions' inputs and has V8 compile their code, one action per turn
 * of the event loop, ahead of their first calls (ApiClient.warm). Each action is prepared once per process, so
 * the runs of a daemon after the first schedule nothing. Without generated validators there is nothing cheap
 * to prepare, and nothing is done.
 */
export function warmInputChecks(actions: readonly string[]): void {
  const todo = actions.filter((a) => !warmed.has(a));
  for (const a of todo) warmed.add(a);
  const next = (i: number): void => {
    const action = todo[i];
    if (action === undefined) return;
    // A function's code is compiled at its first call: this one returns at once, on the first missing field.
    generated()?.validator(inputValidatorName(action))?.({});
    setImmediate(next, i + 1);
  };
  if (todo.length) setImmediate(next, 0);
}

/**
 * How a problem names the value it is about, from its JSON pointer: by default its last key (`calls`, `item 2
 * of devices`); a test file names it by its whole place (`expect.calls.devices.suspend`).
 */
export type ValueName = (pointer: string) => string;

/** ajv's errors as one clear sentence each, without the noise of `if`, `anyOf` and `allOf` wrappers. */
export function explain(all: ErrorObject[], name: ValueName = lastSegment, said: Said = {}): InputProblem[] {
  const errors = oneTypeOrList(bestBranches(all));
  const out: InputProblem[] = [];
  const seen = new Set<string>();
  // An anyOf says only "matches none"; when a branch said why, at the same place or deeper, that is clearer.
  const specific = errors.filter((e) => !isNoise(e) && e.keyword !== 'anyOf' && e.keyword !== 'oneOf');
  for (const e of errors) {
    if (isNoise(e)) continue;
    if (
      (e.keyword === 'anyOf' || e.keyword === 'oneOf') &&
      specific.some((x) => x.instancePath.startsWith(e.instancePath))
    ) {
      continue;
    }
    const p = problem(e, name, said);
    if (!p) continue;
    const key = `${p.path}\u0000${p.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(p);
    }
  }
  return out;
}

/**
 * For a union (anyOf, oneOf) that matched no branch, only the branch that got furthest into the data is
 * worth explaining: a flat `{ id, kind }` device with a bad IMEI is a bad IMEI, not also "deviceIds is
 * required". Furthest: the deepest error; then the fewest errors; never the `${{ }}` alternative.
 */
function bestBranches(errors: ErrorObject[]): ErrorObject[] {
  const drop = new Set<ErrorObject>();
  const joined = new Map<ErrorObject, string>();
  for (const u of errors) {
    if (u.keyword !== 'anyOf' && u.keyword !== 'oneOf') continue;
    const prefix = `${u.schemaPath}/`;
    const branches = new Map<string, ErrorObject[]>();
    for (const e of errors) {
      if (e === u || !e.schemaPath.startsWith(prefix)) continue;
      const n = e.schemaPath.slice(prefix.length).split('/')[0] as string;
      branches.set(n, [...(branches.get(n) ?? []), e]);
    }
    if (branches.size < 2) continue;
    // A branch of another type than the value's (a string, where an object is given) says least of all.
    const otherType = (es: ErrorObject[]) =>
      es.every((e) => e.keyword === 'type' && e.instancePath === u.instancePath);
    const score = (es: ErrorObject[]) => {
      const expr = es.some((e) => (e.parentSchema as Record<string, unknown> | undefined)?.['x-expr']);
      const depth = Math.max(...es.map((e) => e.instancePath.split('/').length));
      return [expr ? 0 : 1, otherType(es) ? 0 : 1, depth, -es.length];
    };
    let best: ErrorObject[] | undefined;
    for (const es of branches.values()) {
      if (!best) best = es;
      else {
        const [a, b] = [score(es), score(best)];
        const better = a[0]! - b[0]! || a[1]! - b[1]! || a[2]! - b[2]! || a[3]! - b[3]!;
        if (better > 0) best = es;
      }
    }
    for (const es of branches.values()) if (es !== best) for (const e of es) drop.add(e);
    // A value of none of the types: each type the union takes (`if: 1`, a string or a boolean).
    const typed = [...branches.values()].filter((es) => !es.some(isNoise));
    if (best?.length === 1 && typed.length === branches.size && typed.every(otherType)) {
      const types = [...new Set(typed.map((es) => String((es[0]!.params as { type: unknown }).type)))];
      if (types.length > 1) joined.set(best[0]!, types.join(','));
    }
  }
  return errors
    .filter((e) => !drop.has(e))
    .map((e) => (joined.has(e) ? { ...e, params: { ...e.params, type: joined.get(e) } } : e));
}

/**
 * A value of another type where a schema takes one of a list of strings fails its `type` and its `enum`: one
 * mistake, one problem. The list, when the value's text is none of it (`level: 3`: quoting it would not help);
 * the type, when it is (`cacheMode: 0`, where the string "0" is wanted: its problem has that text, asText).
 */
function oneTypeOrList(errors: ErrorObject[]): ErrorObject[] {
  const drop = new Set<ErrorObject>();
  for (const e of errors) {
    if (e.keyword !== 'enum' || typeof e.data === 'string') continue;
    const allowed = (e.params as { allowedValues: unknown[] }).allowedValues;
    if (!allowed.every((v) => typeof v === 'string')) continue;
    const type = errors.find(
      (t) => t.keyword === 'type' && t.instancePath === e.instancePath && t.parentSchema === e.parentSchema,
    );
    if (!type) continue;
    drop.add(asText(e.data, e.parentSchema) === undefined ? type : e);
  }
  return drop.size ? errors.filter((e) => !drop.has(e)) : errors;
}

/** The text of a number or a boolean where a string is wanted, when the schema's list (if any) takes it. */
function asText(data: unknown, schema: unknown): string | undefined {
  if (typeof data !== 'number' && typeof data !== 'boolean') return undefined;
  const list = (schema as { enum?: unknown } | undefined)?.enum;
  return !Array.isArray(list) || list.includes(String(data)) ? String(data) : undefined;
}

/**
 * Wrappers that say nothing of their own, and the `${{ expression }}` alternative of playbook values. A
 * `discriminator` error always comes with the clearer `enum` or `type` error of the tag property itself.
 */
function isNoise(e: ErrorObject): boolean {
  if (e.keyword === 'if' || e.keyword === 'allOf' || e.keyword === 'discriminator') return true;
  // A name that propertyNames refuses: its own error (below) names it, with the nearest allowed.
  if (e.propertyName !== undefined) return true;
  return Boolean((e.parentSchema as Record<string, unknown> | undefined)?.['x-expr']);
}

function problem(e: ErrorObject, name: ValueName, said: Said): InputProblem | undefined {
  const parent = (e.parentSchema ?? {}) as Record<string, unknown>;
  const p = describe(e, parent, name(e.instancePath), said);
  return p && typeof parent['x-rule'] === 'string' ? { ...p, rule: parent['x-rule'] } : p;
}

function describe(
  e: ErrorObject,
  parent: Record<string, unknown>,
  name: string,
  said: Said,
): InputProblem | undefined {
  const at = e.instancePath || '/';
  const custom = typeof parent['x-message'] === 'string' ? (parent['x-message'] as string) : undefined;
  switch (e.keyword) {
    case 'required': {
      const missing = (e.params as { missingProperty: string }).missingProperty;
      const path = `${e.instancePath}/${missing}`;
      // What to write there: the object's `x-message`, else the missing member's own `x-required`.
      const member = (parent.properties as Record<string, Record<string, unknown>> | undefined)?.[missing];
      const hint = custom ?? (typeof member?.['x-required'] === 'string' ? member['x-required'] : undefined);
      return { path, message: hint ? `${missing} is required: ${hint}` : `${missing} is required` };
    }
    case 'additionalProperties': {
      const extra = (e.params as { additionalProperty: string }).additionalProperty;
      const moved = parent['x-moved'] as Record<string, string> | undefined;
      // The names this object takes: the `properties` beside `additionalProperties: false`.
      const near = closest(extra, Object.keys((parent.properties as object | undefined) ?? {}));
      const where =
        moved && Object.hasOwn(moved, extra)
          ? `: use ${moved[extra]}`
          : near.length
            ? ` (did you mean ${near.map((n) => `\`${n}\``).join(' or ')}?)`
            : '';
      return {
        path: `${e.instancePath}/${extra}`,
        message: `unknown field \`${extra}\`${where}`,
        name: true,
      };
    }
    case 'enum': {
      const allowed = (e.params as { allowedValues: unknown[] }).allowedValues;
      // A value the reader has not seen, of another type than the list's (whose type problem is not given).
      const got =
        said.rendered && allowed.every((v) => typeof v === 'string') && typeof e.data !== 'string'
          ? `, got ${kindOf(e.data)}`
          : '';
      return {
        path: at,
        message: `${name} must be ${allowed.length === 1 ? '' : 'one of '}${allowed.map((v) => JSON.stringify(v)).join(', ')}${got}${nearValues(e.data, allowed)}`,
      };
    }
    case 'const':
      return {
        path: at,
        message: `${name} must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}`,
      };
    case 'pattern':
    case 'format': {
      const what =
        typeof parent.description === 'string'
          ? parent.description
          : `${e.keyword} ${JSON.stringify(e.schema)}`;
      // `x-message` says what such a value is not, and how to write one.
      return {
        path: at,
        message: `${name} ${JSON.stringify(e.data)} ${custom ?? `is not valid: ${what}`}`,
      };
    }
    case 'type': {
      const type = String((e.params as { type: unknown }).type);
      // `wait: 10`: YAML reads a duration without its unit as a number, and no unit can be assumed.
      if (parent['x-rule'] === 'duration' && typeof e.data === 'number') {
        // The number with a unit is a duration only when it is a whole number (no fraction, no sign).
        const n = e.data;
        const like = Number.isSafeInteger(n) && n >= 0 ? `${n}s or ${n}m` : '10s or 1h30m';
        return {
          path: at,
          message: `${name} must be a duration such as ${like}, not the number ${n}: a number alone has no unit`,
        };
      }
      // A value the reader has not seen: in words, with what it is.
      const message = said.rendered
        ? `${name} must be ${type
            .split(',')
            .map((t) => typeWords(t, parent))
            .join(' or ')}, got ${kindOf(e.data)}`
        : `${name} must be ${type.split(',').join(' or ')}`;
      const text = type === 'string' ? asText(e.data, parent) : undefined;
      return { path: at, message, ...(text === undefined ? {} : { asText: text }) };
    }
    case 'maxItems':
    case 'minItems': {
      const limit = (e.params as { limit: number }).limit;
      const n = Array.isArray(e.data) ? e.data.length : 0;
      return {
        path: at,
        message:
          e.keyword === 'maxItems'
            ? `${name} has ${n} items; at most ${limit} are allowed`
            : `${name} must have at least ${limit} item${limit === 1 ? '' : 's'}`,
      };
    }
    case 'uniqueItems': {
      const { i, j } = e.params as { i: number; j: number };
      const item = Array.isArray(e.data) ? JSON.stringify(e.data[j]) : undefined;
      return {
        path: at,
        message:
          item === undefined
            ? `${name} has items ${j} and ${i} alike`
            : `${name} has ${item} twice (items ${j} and ${i})`,
      };
    }
    case 'propertyNames': {
      const key = (e.params as { propertyName: string }).propertyName;
      const allowed = ((parent.propertyNames as { enum?: unknown[] } | undefined)?.enum ?? []).map(String);
      const [near] = closest(key, allowed, 1);
      return {
        path: `${e.instancePath}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`,
        message: `\`${key}\` ${custom ?? 'is not a name allowed here'}${near ? `: did you mean \`${near}\`?` : ''}`,
        name: true,
      };
    }
    case 'minLength':
      if (custom || (e.params as { limit: number }).limit !== 1) break;
      return { path: at, message: `${name} is empty` };
    case 'minProperties': {
      if (custom || (e.params as { limit: number }).limit !== 1) break;
      // Empty where a member is needed: which ones it may have, rather than ajv's "fewer than 1 properties".
      const names = Object.keys((parent.properties ?? {}) as object);
      const give = names.length ? `give at least one of ${names.join(', ')}` : 'give at least one member';
      return { path: at, message: `${name} is empty: ${give}` };
    }
  }
  return { path: at, message: custom ?? `${name} ${e.message ?? 'is not valid'}` };
}

/** A JSON Schema type in words: `an integer`, `a list`, `a list of objects` (of the `schema` it is the type of). */
function typeWords(type: string, schema: Record<string, unknown>): string {
  if (type === 'null') return 'null';
  if (type !== 'array') return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
  const of = (schema.items as { type?: unknown } | undefined)?.type;
  return typeof of === 'string' && of !== 'array' && of !== 'null' ? `a list of ${of}s` : 'a list';
}

/** `a number`, `a list`, `an object`, `null`: what a value is, in a message. */
export function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

function lastSegment(pointer: string): string {
  if (!pointer) return 'input';
  const seg = pointer
    .slice(pointer.lastIndexOf('/') + 1)
    .replace(/~1/g, '/')
    .replace(/~0/g, '~');
  return /^\d+$/.test(seg)
    ? `item ${seg} of ${lastSegment(pointer.slice(0, pointer.lastIndexOf('/')))}`
    : seg;
}
