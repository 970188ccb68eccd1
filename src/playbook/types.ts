/**
 * The types `validate` gives the variables of expressions (issue 18): `event` by the JSON Schema of the
 * playbook's callback service(s) (schemas/events/), `steps.<id>.output` by its action's output schema
 * (schemas/api/), `.items` and `.devices` by the shapes the runner gives them, `inputs.*` by their declared
 * types, `vars.*` by their values. Anything a schema leaves open (no listed members, additionalProperties, a
 * union of shapes) is `dyn`: read freely, never an error.
 *
 * The schemas are read from the JSON files, each at most once per process, so that the checks load no TypeBox.
 */
import { readFileSync } from 'node:fs';
// eslint-disable-next-line no-restricted-imports -- layer exception: what a playbook may write (engine action declarations, selectors, static checks) still lives in src/actions/; it belongs below src/playbook/
import { isEngineAction, type EngineActionName } from '../actions/engine.js';

/** A type: a JSON value's kind, with the members of an object and the elements of a list. */
export type T =
  | { k: 'dyn' }
  /** What a schema asks of a string it takes (its `enum`, `pattern`, `format`): what fits() checks a text by. */
  | { k: 'string'; enum?: string[]; pattern?: string; format?: string }
  /** `enum`: the numbers a schema takes, when it lists them. */
  | { k: 'int'; enum?: number[] }
  | { k: 'number'; enum?: number[] }
  | { k: 'bool' }
  | { k: 'null' }
  /** A CEL timestamp or duration (`timestamp(...)`, `duration(...)`): no JSON value is one, a string is not. */
  | { k: 'timestamp' }
  | { k: 'duration' }
  | { k: 'list'; of: T }
  /**
   * `open`: members other than `fields` may exist (they are dyn). `none`: why a closed object with no fields
   * has none, for the message that reads one. `written`: a map written in the expression (`{"a": 1}`), whose
   * keys `has()` may ask for freely (`m.b` and `m["b"]` are refused for a key it does not have).
   */
  | { k: 'object'; fields: Record<string, T>; open: boolean; none?: string; written?: boolean };

export const DYN: T = { k: 'dyn' };
const STRING: T = { k: 'string' };
const INT: T = { k: 'int' };
const NUMBER: T = { k: 'number' };
export const BOOL: T = { k: 'bool' };
const NULL: T = { k: 'null' };
export const TIMESTAMP: T = { k: 'timestamp' };
export const DURATION: T = { k: 'duration' };

/** The JSON Schema types that are one CEL type each. */
const PRIMITIVES: Record<string, T> = {
  string: STRING,
  integer: INT,
  number: NUMBER,
  boolean: BOOL,
  null: NULL,
};

const obj = (fields: Record<string, T>, open = false): T => ({ k: 'object', fields, open });
export const list = (of: T): T => ({ k: 'list', of });

/** How a value of a type is written in messages: `a string`, `an int`; `deep`, a list's elements too. */
export function typeName(t: T, deep = false): string {
  const name = kindName(t, deep, false);
  return `${/^[aeiou]/.test(name) ? 'an' : 'a'} ${name}`;
}

/** `map`, `double`, `list of strings`...; `many`, the plural. */
function kindName(t: T, deep: boolean, many: boolean): string {
  const name = t.k === 'object' ? 'map' : t.k === 'number' ? 'double' : t.k;
  const of = deep && t.k === 'list' && t.of.k !== 'dyn' ? ` of ${kindName(t.of, true, true)}` : '';
  return `${name}${many ? 's' : ''}${of}`;
}

type Schema = Record<string, unknown>;

/**
 * The type of values a JSON Schema accepts. An object is closed unless it takes other members
 * (`additionalProperties`, `patternProperties`; the catalog's response schemas list what the service sends
 * without closing them), even one that lists no members: in what is read (an output, an event), reading a
 * member of it is refused, saying where its schema (`at`, a file and a JSON pointer) defines it. `taken`: the
 * type of what an input takes, where an object that lists no members (a map of any keys, as report.write's
 * `rows` are) is an open one, so that a number is no value of it.
 */
export function fromSchema(s: unknown, taken = false, at = ''): T {
  if (s === null || typeof s !== 'object') return DYN;
  const schema = s as Schema;
  if (schema.$ref) return DYN;
  if (schema.anyOf || schema.oneOf || schema.allOf || schema.if) {
    // The alternatives narrow a value its own `type` already shapes (a device's id format by its kind, a call
    // that takes devices or a group): that kind still holds, while the members an alternative may add are open.
    if (typeof schema.type !== 'string') return alternatives(schema, taken, at);
    const { anyOf: _a, oneOf: _o, allOf: _l, if: _i, then: _t, else: _e, ...own } = schema;
    const t = fromSchema(own, taken, at);
    return t.k === 'object' ? { ...t, open: true } : t;
  }
  if ('const' in schema) return fromValue(schema.const);
  const type = schema.type;
  if (Array.isArray(type)) {
    const kinds = type.filter((x) => x !== 'null');
    return kinds.length === 1 ? fromSchema({ ...schema, type: kinds[0] }, taken, at) : DYN;
  }
  if (type === 'string') return text(schema);
  if ((type === 'integer' || type === 'number') && Array.isArray(schema.enum)) {
    const values = schema.enum.filter((v): v is number => typeof v === 'number');
    return { k: type === 'integer' ? 'int' : 'number', enum: values };
  }
  const primitive = typeof type === 'string' ? PRIMITIVES[type] : undefined;
  if (primitive) return primitive;
  switch (type) {
    case 'array':
      return list(fromSchema(schema.items, taken, `${at}/items`));
    case 'object': {
      const props = (schema.properties ?? {}) as Record<string, unknown>;
      const names = Object.keys(props);
      const extra = schema.additionalProperties;
      const open = (extra !== undefined && extra !== false) || schema.patternProperties !== undefined;
      if (names.length === 0 && (taken || open)) return obj({}, true);
      const fields: Record<string, T> = {};
      for (const n of names) fields[n] = fromSchema(props[n], taken, `${at}/properties/${pointer(n)}`);
      if (names.length || open) return obj(fields, open);
      const where = at.includes('#') ? ` (${at.endsWith('#') ? at.slice(0, -1) : at})` : '';
      return { k: 'object', fields, open: false, none: `its schema lists none and takes no other${where}` };
    }
    default:
      return DYN;
  }
}

/** A member's name as a JSON pointer writes it. */
const pointer = (name: string) => name.replace(/~/g, '~0').replace(/\//g, '~1');

/** A string schema's type, with what it asks of the text. */
function text(schema: Schema): T {
  const { enum: values, pattern, format } = schema;
  return {
    k: 'string',
    ...(Array.isArray(values) && values.every((v) => typeof v === 'string') ? { enum: values } : {}),
    ...(typeof pattern === 'string' ? { pattern } : {}),
    ...(typeof format === 'string' ? { format } : {}),
  };
}

/**
 * A schema of alternatives with no `type` of its own: when each is an object (the two shapes a list of devices
 * takes, a device whose id format its kind chooses, the two answers of a call), an object with the members of
 * them all; else dyn. What is taken stays open (an alternative may add members); what is read is closed when
 * every shape is, so that a member no shape has is refused, as it is of one shape.
 */
function alternatives(schema: Schema, taken: boolean, at: string): T {
  const of: [unknown, string][] = [
    ...(Array.isArray(schema.anyOf) ? schema.anyOf : []).map((s, i): [unknown, string] => [s, `anyOf/${i}`]),
    ...(Array.isArray(schema.oneOf) ? schema.oneOf : []).map((s, i): [unknown, string] => [s, `oneOf/${i}`]),
    ...(schema.if
      ? ([
          [schema.then, 'then'],
          [schema.else, 'else'],
        ] as [unknown, string][])
      : []),
  ];
  if (schema.allOf || !of.length || of.some(([s]) => s === undefined)) return DYN;
  const ts = of.map(([x, where]) => fromSchema(x, taken, `${at}/${where}`));
  if (!ts.every((t) => t.k === 'object')) return DYN;
  const t = ts.reduce<T>((a, b) => join(a, b), ts[0] as T);
  return t.k === 'object' ? { ...t, open: taken || t.open } : DYN;
}

/** The type of a value written in the playbook (`vars`); a string holding an expression is dyn. */
export function fromValue(v: unknown): T {
  if (v === null) return NULL;
  switch (typeof v) {
    case 'string':
      return v.includes('${{') ? DYN : STRING;
    case 'boolean':
      return BOOL;
    case 'number':
      return Number.isInteger(v) ? INT : NUMBER;
    case 'object': {
      if (Array.isArray(v)) return list(v.length ? v.map(fromValue).reduce(join) : DYN);
      const fields: Record<string, T> = {};
      for (const [k, x] of Object.entries(v as object)) fields[k] = fromValue(x);
      return obj(fields);
    }
    default:
      return DYN;
  }
}

/** A type that holds values of both: the members of two objects together, dyn where they disagree. */
export function join(a: T, b: T): T {
  if (a.k === 'dyn' || b.k === 'dyn') return DYN;
  if (a.k === 'object' && b.k === 'object') {
    const fields: Record<string, T> = { ...a.fields };
    for (const [k, t] of Object.entries(b.fields)) fields[k] = k in fields ? join(fields[k] as T, t) : t;
    const open = a.open || b.open;
    return a.written || b.written ? { k: 'object', fields, open, written: true } : obj(fields, open);
  }
  if (a.k === 'list' && b.k === 'list') return list(join(a.of, b.of));
  if (a.k === b.k) return joinSame(a, b);
  if ((a.k === 'int' || a.k === 'number') && (b.k === 'int' || b.k === 'number')) return NUMBER;
  return DYN;
}

/**
 * Two types of one kind: the values both list (the schemas' `enum`, one's values then the other's), a
 * `pattern` or `format` only where both ask it. A value of either is a value of the type, so that none of it is
 * refused (nor a comparison with it said to be never true).
 */
function joinSame(a: T, b: T): T {
  if (a.k === 'string' && b.k === 'string') {
    return {
      k: 'string',
      ...(a.enum && b.enum ? { enum: [...new Set([...a.enum, ...b.enum])] } : {}),
      ...(a.pattern !== undefined && a.pattern === b.pattern ? { pattern: a.pattern } : {}),
      ...(a.format !== undefined && a.format === b.format ? { format: a.format } : {}),
    };
  }
  if ((a.k === 'int' || a.k === 'number') && a.k === b.k)
    return a.enum && b.enum ? { k: a.k, enum: [...new Set([...a.enum, ...b.enum])] } : { k: a.k };
  return a;
}

/**
 * An input's type, from its declared `type`; an array's elements are of its `items.type` (an object input's
 * members are not declared: dyn). A string or number input declared with an `enum` holds one of its values (a run
 * given another is refused before it starts), so a comparison with any other value is never true.
 */
export function inputType(decl: unknown): T {
  const type = decl !== null && typeof decl === 'object' ? (decl as Schema).type : undefined;
  if (typeof type !== 'string') return DYN;
  if (type === 'array') return list(inputType((decl as { items?: unknown }).items));
  const t = PRIMITIVES[type] ?? DYN;
  const values = (decl as { enum?: unknown }).enum;
  if (!Array.isArray(values) || !values.length) return t;
  if (t.k === 'string' && values.every((v) => typeof v === 'string')) return { ...t, enum: values };
  if ((t.k === 'int' || t.k === 'number') && values.every((v) => typeof v === 'number'))
    return { ...t, enum: values };
  return t;
}

// ── the schemas, read once per process ──────────────────────────────────────────────────────────

const SCHEMAS = new URL('../../schemas/', import.meta.url);
const files = new Map<string, T | undefined>();

/** The type of a schema file under schemas/, undefined when there is none. Read once. */
function fileType(name: string, pick: (s: Schema) => unknown = (s) => s, taken = false): T | undefined {
  const key = `${name}#${pick.name}#${taken}`;
  if (!files.has(key)) {
    let t: T | undefined;
    try {
      const schema = JSON.parse(readFileSync(new URL(name, SCHEMAS), 'utf8')) as Schema;
      t = fromSchema(pick(schema), taken, `schemas/${name}#`);
    } catch {
      t = undefined;
    }
    files.set(key, t);
  }
  return files.get(key);
}

type IndexEntry = { input?: string; output?: string; strategy?: string; devicesIn?: string };
let index: Record<string, IndexEntry> | undefined;

function actionIndex(): Record<string, IndexEntry> {
  if (!index) {
    try {
      index = JSON.parse(readFileSync(new URL('api/index.json', SCHEMAS), 'utf8')) as typeof index;
    } catch {
      index = {};
    }
  }
  return index ?? {};
}

let listings: readonly string[] | undefined;

/** The device listings: the actions whose catalog strategy is `listing` (devices.list, groups.get). */
export function listingActions(): readonly string[] {
  return (listings ??= Object.entries(actionIndex())
    .filter(([, e]) => e.strategy === 'listing')
    .map(([a]) => a));
}

/**
 * Whether a step of `action` can have per-device items (`steps.<id>.items`): a listing's devices, a ledger
 * query's, the results of a call that names devices (givesResults). Any other step's items are always empty.
 */
export function givesItems(action: string | undefined): boolean {
  if (action === undefined) return false;
  if (isEngineAction(action)) return action === 'ledger.query';
  const entry = actionIndex()[action];
  // An action no one knows has its own error; nothing is said of its items.
  return !entry || entry.strategy === 'listing' || givesResults(action);
}

/**
 * Whether a step of `action` can record per-device results in the ledger (what `report.write { step }` writes):
 * a call that names devices (runner/devices.ts `devicesOf`: `deviceList`, `devices`, or the member its operation
 * names them in). Not a listing (its devices are items, not results), not an engine action.
 */
export function givesResults(action: string | undefined): boolean {
  if (action === undefined || isEngineAction(action)) return false;
  const entry = actionIndex()[action];
  // An action no one knows has its own error; nothing is said of its results.
  if (!entry) return true;
  if (entry.strategy === 'listing') return false;
  if ((entry.strategy ?? 'call') !== 'call' || entry.devicesIn !== undefined) return true;
  const input = inputFieldType(action, []);
  return input.k === 'object' && ('devices' in input.fields || 'deviceList' in input.fields);
}

/**
 * `steps.<id>.output` of a step that uses `action`: its output schema. A listing's output is the runner's own:
 * the devices listed (as its schema has them), or their count and how many were left out for want of an
 * identifier of the `items` kind. An engine action's is what the engine gives (ENGINE_OUTPUTS).
 */
export function outputType(action: string | undefined): T {
  if (action === undefined) return DYN;
  if (isEngineAction(action)) return ENGINE_OUTPUTS[action];
  const entry = actionIndex()[action];
  if (!entry?.output) return DYN;
  const t = fileType(`api/${entry.output}`) ?? DYN;
  if (entry.strategy !== 'listing') return t;
  return obj({ ...(t.k === 'object' ? t.fields : {}), count: INT, leftOut: INT }, t.k !== 'object' || t.open);
}

/**
 * What each engine action gives as its output (actions/executors.ts runEngineAction): no schema file says it.
 * A ledger query's device `error` is null for a device that did not fail: dyn.
 */
const ENGINE_OUTPUTS: Record<EngineActionName, T> = {
  log: obj({ message: DYN }),
  'notify.webhook': obj({ status: INT }),
  'report.write': obj({ path: STRING, file: STRING, rows: INT, format: STRING, replaced: BOOL }),
  'ledger.query': obj({
    count: INT,
    devices: list(
      obj({ id: STRING, kind: STRING, outcome: STRING, error: DYN, runId: STRING, step: STRING }),
    ),
  }),
};

/**
 * The type a member of an action's input takes, at `path` below `with` (names and list indexes), from the
 * action's input schema (an engine action's under schemas/engine/); dyn where the schema leaves it open.
 */
export function inputFieldType(action: string, path: readonly (string | number)[]): T {
  const api = actionIndex()[action]?.input;
  const file = isEngineAction(action)
    ? `engine/${action}.input.schema.json`
    : api === undefined
      ? undefined
      : `api/${api}`;
  let t = file === undefined ? DYN : (fileType(file, undefined, true) ?? DYN);
  for (const seg of path) {
    if (typeof seg === 'number') t = t.k === 'list' ? t.of : DYN;
    else t = t.k === 'object' ? (t.fields[seg] ?? DYN) : DYN;
  }
  return t;
}

/**
 * Whether a value of type `t` can be what a field of type `wanted` takes (dyn on either side can): a list's
 * elements each, an object's members that both know. A duration is sent as a playbook duration (`86400s`,
 * `1s500ms`, expressions/boundary.ts): it fits a string whose schema takes that text.
 */
export function fits(t: T, wanted: T): boolean {
  if (t.k === 'dyn' || wanted.k === 'dyn') return true;
  if (t.k === 'list' && wanted.k === 'list') return fits(t.of, wanted.of);
  if (t.k === 'object' && wanted.k === 'object')
    return Object.entries(t.fields).every(
      ([k, f]) => !(k in wanted.fields) || fits(f, wanted.fields[k] as T),
    );
  if (t.k === 'duration' && wanted.k === 'string') return takesDurationText(wanted);
  if (t.k === wanted.k) return true;
  // A double may be whole, and an int is a number.
  return (t.k === 'int' && wanted.k === 'number') || (t.k === 'number' && wanted.k === 'int');
}

/** How a whole expression's duration is sent: its seconds, with the milliseconds of a fraction. */
export const DURATION_SENT = ['86400s', '1s500ms'] as const;

/** Whether a string field takes a duration's text (`86400s`, `1s500ms`): no value list or format, a pattern it matches. */
export function takesDurationText(t: Extract<T, { k: 'string' }>): boolean {
  const pattern = t.pattern === undefined ? undefined : new RegExp(t.pattern, 'u');
  return !t.enum && !t.format && DURATION_SENT.every((d) => pattern?.test(d) ?? true);
}

/** `event` of a playbook started by callbacks of `services`: the union of their events; dyn with none. */
export function eventType(services: readonly string[]): T {
  const ts = services.map((s) => fileType(`events/${s}.schema.json`) ?? DYN);
  return ts.length ? ts.reduce(join) : DYN;
}

// ── the engine's shapes (runner/context.ts item(), store DeviceCounts) ──────────────────────────

const COUNTS = obj({
  total: INT,
  accepted: INT,
  succeeded: INT,
  failed: INT,
  skipped: INT,
  unconfirmed: INT,
  byError: DYN,
});

/** A device as a listing or a ledger query finds it (strategies/listing.ts, engine.ts queryItems). */
const DEVICE_REF = obj({ id: STRING, kind: STRING });

/** A per-device result of a device action. */
const ITEM = obj({
  id: STRING,
  kind: STRING,
  outcome: STRING,
  error: STRING,
  errorClass: STRING,
  attempts: INT,
  requestId: STRING,
  data: DYN,
});

/** The output of a step that gives none: its members are refused, saying why. */
const none = (why: string): T => ({ k: 'object', fields: {}, open: false, none: why });

/**
 * What a step gives as `steps.<id>.output`, by its kind (runner.ts, fan-out.ts, wait.ts): a `uses` step, its
 * action's; a `forEach`, its iterations counted; a `wait` for a callback, that callback (or a poll's answer);
 * `set`, `parallel` and a time `wait`, none.
 */
export type StepShape =
  | { uses: string }
  | { kind: 'set' | 'parallel' | 'forEach' | 'pause' }
  | { kind: 'wait'; service?: string; poll?: string };

const NO_OUTPUT: Record<'set' | 'parallel' | 'pause', T> = {
  set: none('a `set` step has no output: what it sets is in `vars`'),
  parallel: none('a `parallel` step has no output: read its branches, `steps.<branch id>`'),
  pause: none('a `wait` for a time has no output'),
};

function stepOutputType(shape: StepShape | undefined): T {
  if (shape === undefined) return DYN;
  if ('uses' in shape) return outputType(shape.uses);
  if (shape.kind === 'forEach') return obj({ iterations: INT, failed: INT });
  if (shape.kind !== 'wait') return NO_OUTPUT[shape.kind];
  const took = [
    ...(shape.service !== undefined ? [eventType([shape.service])] : []),
    ...(shape.poll !== undefined ? [outputType(shape.poll)] : []),
  ];
  return took.length ? took.reduce(join) : DYN;
}

/** Whether a step of `shape` finds its items (a listing, a ledger query): `{ id, kind }` each, no result. */
const findsItems = (shape: StepShape | undefined) =>
  shape !== undefined &&
  'uses' in shape &&
  (shape.uses === 'ledger.query' || listingActions().includes(shape.uses));

/** `steps.<id>` of a step of `shape` (undefined: one whose kind is unknown). */
export function stepType(shape: StepShape | undefined): T {
  return obj({
    status: STRING,
    output: stepOutputType(shape),
    items: list(findsItems(shape) ? DEVICE_REF : ITEM),
    devices: COUNTS,
    error: STRING,
    reason: STRING,
  });
}
