/**
 * The type check of one expression against the types of its variables (types.ts): members a value cannot
 * have (`event.usage` of a DeviceUsage event, `steps.suspend.devices.suceeded`, any of a string), and operators
 * on values of types that do not mix (`inputs.account + 1` on a string input). A list written in the expression
 * has its elements' type, as cel-js gives it, which a part of it keeps: cel-js sees a part as a list of dyn; a
 * map written in it (`{"a": 1}`) is an object of its values' types, closed when its keys are strings.
 * `timestamp()` and `duration()` give a timestamp and a duration, as CEL's arithmetic on them does, so that one
 * given where a string goes is refused (expression-checks.ts). It walks cel-js's syntax tree, so that each
 * problem has its offset and a "did you mean"; evaluation is untouched. Results are cached by expression and
 * environment.
 */
import { syntaxTree } from '../expressions/cel.js';
import { COMPREHENSIONS } from '../expressions/functions.js';
import { SLICES as SLICE_NAMES } from '../expressions/slices.js';
import { closest, nearValues } from '../util/closest.js';
import { DURATION, DYN, join, list, TIMESTAMP, typeName, type T } from './types.js';

export interface TypeProblem {
  offset: number;
  rule: 'member' | 'type';
  message: string;
}

/** The types of an expression's variables; `key` identifies them for the cache. */
export interface TypeEnv {
  key: string;
  vars: Record<string, T>;
}

interface Node {
  op: string;
  args: unknown;
  /** Where the node's operator or member is; `start`, where the whole of it starts. */
  pos: number;
  start?: number;
}

const isNode = (x: unknown): x is Node => x !== null && typeof x === 'object' && 'op' in x;

export interface Typed {
  problems: TypeProblem[];
  /** The type of the expression's value. */
  type: T;
}

const cache = new Map<string, Map<string, Typed>>();

/** Problems of a valid `source` under `env`, and the type of its value. */
export function typeOf(source: string, inLoop: boolean, env: TypeEnv): Typed {
  let byEnv = cache.get(env.key);
  if (!byEnv) {
    if (cache.size >= 1_000) cache.clear();
    byEnv = new Map();
    cache.set(env.key, byEnv);
  }
  // Inside a forEach body the loop variables are in scope: the same text may mean something else there.
  const key = inLoop ? `\u0000${source}` : source;
  let typed = byEnv.get(key);
  if (!typed) {
    const problems: TypeProblem[] = [];
    const type = new Walker(env.vars, problems).type(syntaxTree(source, inLoop) as Node, new Map());
    typed = { problems, type };
    if (byEnv.size >= 10_000) byEnv.clear();
    byEnv.set(key, typed);
  }
  return typed;
}

const NUMERIC = new Set(['int', 'number']);
/** The types of values that have no members: reading one (`inputs.account.id`, `items.id`) is an error. */
const NO_MEMBERS = new Set(['string', 'int', 'number', 'bool', 'list', 'timestamp', 'duration']);
/** Functions whose result type is known, by name. */
const RESULTS: Record<string, T> = {
  size: { k: 'int' },
  startsWith: { k: 'bool' },
  endsWith: { k: 'bool' },
  contains: { k: 'bool' },
  matches: { k: 'bool' },
  has: { k: 'bool' },
  exists: { k: 'bool' },
  all: { k: 'bool' },
  exists_one: { k: 'bool' },
  string: { k: 'string' },
  int: { k: 'int' },
  double: { k: 'number' },
  timestamp: TIMESTAMP,
  duration: DURATION,
};
const MACROS = new Set<string>(COMPREHENSIONS);
/** The functions that take part of a list (expressions/slices.ts): a list of the same elements. */
const SLICES = new Set<string>(SLICE_NAMES);

class Walker {
  constructor(
    private readonly vars: Record<string, T>,
    private readonly problems: TypeProblem[],
  ) {}

  /** The type of `n`, with `bound` the comprehension variables in scope. */
  type(n: Node, bound: Map<string, T>): T {
    switch (n.op) {
      case 'value':
        return literal(n.args);
      case 'list': {
        // As cel-js types one: its elements' type when they have one, which a part of it keeps (slices.ts).
        const elements = (n.args as Node[]).map((e) => this.type(e, bound));
        return list(elements.length ? elements.reduce(join) : DYN);
      }
      case 'map':
        return this.map(n.args as [Node, Node][], bound);
      case 'id': {
        const name = n.args as string;
        return bound.get(name) ?? this.vars[name] ?? DYN;
      }
      case '.':
      case '.?': {
        const [of, name] = n.args as [Node, string];
        return this.member(this.type(of, bound), name, of, n.pos, n.op === '.');
      }
      case '[]':
      case '[?]': {
        const [of, at] = n.args as [Node, Node];
        const t = this.type(of, bound);
        this.type(at, bound);
        if (t.k === 'list') return t.of;
        // A key written in the expression (`m["b"]`) is the member `m.b`: the same check, at the key.
        if (t.k === 'object' && at.op === 'value' && typeof at.args === 'string')
          return this.member(t, at.args, of, at.pos, n.op === '[]');
        return DYN;
      }
      case 'rcall': {
        const [name, recv, args] = n.args as [string, Node, Node[]];
        const r = this.type(recv, bound);
        if (MACROS.has(name) && args.length >= 2 && args[0]?.op === 'id') {
          const inner = new Map(bound).set(args[0].args as string, r.k === 'list' ? r.of : DYN);
          const body = args.slice(1).map((a) => this.type(a, inner));
          return name === 'map'
            ? { k: 'list', of: body.at(-1) ?? DYN }
            : name === 'filter'
              ? r
              : { k: 'bool' };
        }
        if (SLICES.has(name)) return this.slice(name, recv, r, args, bound);
        for (const a of args) this.type(a, bound);
        return RESULTS[name] ?? DYN;
      }
      case 'call': {
        const [name, args] = n.args as [string, Node[]];
        const [field] = args;
        if (name === 'has' && field?.op === '.') {
          // Whether a map written in the expression holds the key: false when not, no mistake.
          const [of, member] = field.args as [Node, string];
          const t = this.type(of, bound);
          this.member(t, member, of, field.pos, !(t.k === 'object' && t.written));
          return RESULTS.has as T;
        }
        for (const a of args) this.type(a, bound);
        return RESULTS[name] ?? DYN;
      }
      case '+':
      case '-':
      case '*':
      case '/':
      case '%':
      case '<':
      case '<=':
      case '>':
      case '>=':
        return this.binary(n, bound);
      case '==':
      case '!=':
        return this.equality(n, bound);
      case 'in':
        return this.within(n, bound);
      case '&&':
      case '||':
      case '!_':
        this.children(n, bound);
        return { k: 'bool' };
      default:
        this.children(n, bound);
        return DYN;
    }
  }

  private children(n: Node, bound: Map<string, T>): void {
    const visit = (x: unknown): void => {
      if (isNode(x)) this.type(x, bound);
      else if (Array.isArray(x)) x.forEach(visit);
    };
    visit(n.args);
  }

  /**
   * A map written in the expression: with string literals for keys, a closed object of its values' types (a
   * member it does not have is no key of it); with another key, an open one.
   */
  private map(entries: [Node, Node][], bound: Map<string, T>): T {
    const fields: Record<string, T> = {};
    let open = false;
    for (const [key, value] of entries) {
      const v = this.type(value, bound);
      if (key.op === 'value' && typeof key.args === 'string') fields[key.args] = v;
      else {
        this.type(key, bound);
        open = true;
      }
    }
    return { k: 'object', fields, open, written: true };
  }

  /** The member `name` of a value of type `t` (the value written `of`), at offset `pos`. */
  private member(t: T, name: string, of: Node, pos: number, strict: boolean): T {
    if (t.k !== 'object') {
      if (strict && NO_MEMBERS.has(t.k))
        this.problems.push({
          offset: pos,
          rule: 'member',
          message: `\`${pathOf(of)}\` is ${typeName(t)}: it has no member \`${name}\``,
        });
      return DYN;
    }
    const field = t.fields[name];
    if (field) return field;
    if (t.open || !strict) return DYN;
    const names = Object.keys(t.fields);
    const near = closest(name, names);
    const hint = near.length
      ? ` (did you mean ${near.map((x) => `\`${x}\``).join(' or ')}?)`
      : names.length
        ? ` (it has ${names.map((x) => `\`${x}\``).join(', ')})`
        : `: ${t.none ?? 'it has none'}`;
    this.problems.push({
      offset: pos,
      rule: 'member',
      message: `\`${pathOf(of)}\` has no member \`${name}\`${hint}`,
    });
    return DYN;
  }

  /**
   * `slice`, `take` or `drop` of `recv` (of type `r`): a list of its elements. What cel-js's checker sees as dyn
   * (the run's data) may be known here: a receiver that is no list, an argument that is no number, are refused.
   * A double of the data may be whole (a schema's `number`), and a whole JSON number is an int: it passes; a
   * double literal never is.
   */
  private slice(name: string, recv: Node, r: T, args: Node[], bound: Map<string, T>): T {
    for (const a of args) {
      const t = this.type(a, bound);
      // A double written in the expression stays one.
      if ((t.k !== 'dyn' && !NUMERIC.has(t.k)) || (a.op === 'value' && typeof a.args === 'number'))
        this.problems.push({
          offset: a.start ?? a.pos,
          rule: 'type',
          message: `\`${name}\` takes an int; \`${pathOf(a)}\` is ${typeName(t)}`,
        });
    }
    if (r.k === 'list' || r.k === 'dyn') return r;
    this.problems.push({
      offset: recv.start ?? recv.pos,
      rule: 'type',
      message: `\`${name}\` takes part of a list; \`${pathOf(recv)}\` is ${typeName(r)}`,
    });
    return DYN;
  }

  /** `==` and `!=`: values of two types that never compare equal (a string and an int) are a mistake. */
  private equality(n: Node, bound: Map<string, T>): T {
    const [l, r] = n.args as [Node, Node];
    const a = this.type(l, bound);
    const b = this.type(r, bound);
    const unknown = (t: T) => t.k === 'dyn' || t.k === 'null';
    if (!unknown(a) && !unknown(b) && a.k !== b.k && !(NUMERIC.has(a.k) && NUMERIC.has(b.k)))
      this.problems.push({
        offset: n.pos,
        rule: 'type',
        message: `\`${n.op}\` compares ${typeName(a)} \`${pathOf(l)}\` with ${typeName(b)} \`${pathOf(r)}\`: they are never equal`,
      });
    else {
      // A value its schema lists the values of, and a literal not among them: never equal.
      const [valued, of, lit] = l.op === 'value' ? [b, r, l] : [a, l, r];
      const miss = outside(valued, of, lit);
      const result = n.op === '==' ? 'never true' : 'always true';
      if (miss)
        this.problems.push({
          offset: lit.start ?? lit.pos,
          rule: 'type',
          message: `${miss}: this \`${n.op}\` is ${result}`,
        });
    }
    return { k: 'bool' };
  }

  /**
   * `x in list`: an item written in the list that is none of the values `x` can have never matches; a literal
   * `x` that none of the list's elements can be, never in it.
   */
  private within(n: Node, bound: Map<string, T>): T {
    const [l, r] = n.args as [Node, Node];
    const a = this.type(l, bound);
    const b = this.type(r, bound);
    const items = r.op === 'list' ? (r.args as Node[]) : [];
    for (const item of items) {
      const miss = outside(a, l, item);
      if (miss)
        this.problems.push({
          offset: item.start ?? item.pos,
          rule: 'type',
          message: `${miss}: this item of the list never matches`,
        });
    }
    const miss = b.k === 'list' && r.op !== 'list' ? outside(b.of, r, l, true) : undefined;
    if (miss)
      this.problems.push({
        offset: l.start ?? l.pos,
        rule: 'type',
        message: `${miss}: this \`in\` is never true`,
      });
    return { k: 'bool' };
  }

  private binary(n: Node, bound: Map<string, T>): T {
    const [l, r] = n.args as [Node, Node];
    const a = this.type(l, bound);
    const b = this.type(r, bound);
    const cmp = n.op.startsWith('<') || n.op.startsWith('>');
    const result = (): T =>
      cmp ? { k: 'bool' } : a.k === 'dyn' || b.k === 'dyn' ? DYN : a.k === 'int' && b.k === 'int' ? a : b;
    if (a.k === 'dyn' || b.k === 'dyn') return result();
    const time = timeArithmetic(n.op, a, b);
    if (time) return time;
    const numeric = NUMERIC.has(a.k) && NUMERIC.has(b.k);
    const fine =
      numeric ||
      (a.k === b.k && a.k === 'string' && (n.op === '+' || cmp)) ||
      (a.k === b.k && (a.k === 'timestamp' || a.k === 'duration') && cmp) ||
      (a.k === b.k && a.k === 'list' && n.op === '+');
    if (!fine)
      this.problems.push({
        offset: n.pos,
        rule: 'type',
        message: `\`${n.op}\` cannot take ${typeName(a)} \`${pathOf(l)}\` and ${typeName(b)} \`${pathOf(r)}\``,
      });
    return fine ? result() : DYN;
  }
}

/**
 * CEL's arithmetic on times: a timestamp plus or minus a duration is a timestamp, the difference of two
 * timestamps a duration, the sum or difference of two durations a duration. Undefined for anything else.
 */
function timeArithmetic(op: string, a: T, b: T): T | undefined {
  const kinds = `${a.k} ${op} ${b.k}`;
  switch (kinds) {
    case 'timestamp + duration':
    case 'duration + timestamp':
    case 'timestamp - duration':
      return TIMESTAMP;
    case 'timestamp - timestamp':
    case 'duration + duration':
    case 'duration - duration':
      return DURATION;
    default:
      return undefined;
  }
}

/**
 * Why the literal `lit` is none of the values of type `t` (the value written `of`) when its schema lists them
 * (an enum of an event's or an output's member), with the one meant for a near miss; undefined when it is one
 * of them, or either side is no such thing. `each`: `of` is a list, and `t` the type of its elements.
 */
function outside(t: T, of: Node, lit: Node, each = false): string | undefined {
  const values = 'enum' in t ? t.enum : undefined;
  if (!values?.length || lit.op !== 'value') return undefined;
  const v = typeof lit.args === 'bigint' ? Number(lit.args) : lit.args;
  if ((typeof v !== 'string' && typeof v !== 'number') || (values as unknown[]).includes(v)) return undefined;
  const shown = values.map((x) => JSON.stringify(x));
  const path = pathOf(of);
  const what = path !== '…' ? `\`${path}\`` : each ? 'the list' : 'the value';
  const holds = each
    ? `${what} holds only ${shown.join(', ')}`
    : shown.length === 1
      ? `${what} is always ${shown[0]}`
      : `${what} is one of ${shown.join(', ')}`;
  return `${holds}, never ${JSON.stringify(v)}${nearValues(v, values)}`;
}

function literal(v: unknown): T {
  switch (typeof v) {
    case 'bigint':
      return { k: 'int' };
    case 'number':
      return { k: 'number' };
    case 'string':
      return { k: 'string' };
    case 'boolean':
      return { k: 'bool' };
    default:
      return v === null ? { k: 'null' } : DYN;
  }
}

/** How a node is written, for messages: `event.deviceResponse`, or `…` for anything else. */
function pathOf(n: Node): string {
  switch (n.op) {
    case 'id':
      return n.args as string;
    case '.':
    case '.?': {
      const [of, name] = n.args as [Node, string];
      return `${pathOf(of)}.${name}`;
    }
    case '[]': {
      const [of, at] = n.args as [Node, Node];
      return `${pathOf(of)}[${pathOf(at)}]`;
    }
    case 'value':
      return typeof n.args === 'bigint' ? String(n.args) : (JSON.stringify(n.args) ?? '…');
    default:
      return '…';
  }
}
