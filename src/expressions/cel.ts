/**
 * Expressions: `${{ ... }}` in CEL (product.md section 2).
 *
 * - A string that is one whole expression keeps the expression's type; expressions inside a longer string
 *   are interpolated into it.
 * - Expressions are parsed and type-checked once, at load, with the position of any error.
 * - JSON numbers that are integers behave as CEL ints (`event.count + 1`): values are wrapped at the boundary
 *   in a proxy that reads integer-valued numbers as BigInt, lazily, so a large context is never copied.
 *   Results come back as plain JSON values (BigInt → number).
 * - JSON does not say int or double: `usage * 2` must not work for 3 and fail for 2.5. So int and double mix in
 *   `+ - * /` and give a double, where plain CEL would refuse the expression.
 * - CEL is sandboxed: no I/O, no loops, bounded size. Nothing reachable from an expression can escape.
 */
import { Environment } from '@marcbachmann/cel-js';

/** The variables every expression may use, and the two only a forEach body may use. */
export const CONTEXT_VARIABLES = ['event', 'inputs', 'vars', 'steps', 'run', 'secrets', 'env'] as const;
export const LOOP_VARIABLES = ['item', 'index'] as const;

const LIMITS = {
  maxAstNodes: 2_000,
  maxDepth: 64,
  maxListElements: 1_000,
  maxMapEntries: 1_000,
  maxCallArguments: 16,
};

/** Arithmetic on an int and a double, as doubles. */
const MIXED: [string, (a: number, b: number) => number][] = [
  ['+', (a, b) => a + b],
  ['-', (a, b) => a - b],
  ['*', (a, b) => a * b],
  ['/', (a, b) => a / b],
];

function environment(loop: boolean): Environment {
  const env = new Environment({
    unlistedVariablesAreDyn: false,
    homogeneousAggregateLiterals: false,
    limits: LIMITS,
  });
  for (const v of CONTEXT_VARIABLES) env.registerVariable(v, 'dyn');
  for (const [op, f] of MIXED) {
    env.registerOperator(`double ${op} int: double`, (a: number, b: bigint) => f(a, Number(b)));
    env.registerOperator(`int ${op} double: double`, (a: bigint, b: number) => f(Number(a), b));
  }
  if (loop) env.registerVariable('item', 'dyn').registerVariable('index', 'int');
  return env;
}
const baseEnv = environment(false);
const loopEnv = environment(true);

export interface ExpressionError {
  /** Offset of the error within the expression source. */
  offset: number;
  message: string;
}

export interface Compiled {
  source: string;
  evaluate(context: Record<string, unknown>): unknown;
}

type Program = ReturnType<Environment['parse']>;
const cache = new Map<string, Program>();

const checked = new Map<string, ExpressionError | null>();

/** Parses and type-checks `source`; the error carries its offset within the source. Results are cached. */
export function checkExpression(source: string, inLoop: boolean): ExpressionError | undefined {
  const key = `${inLoop ? 'L' : 'B'}${source}`;
  let r = checked.get(key);
  if (r === undefined) {
    r = typeCheck(source, inLoop) ?? null;
    if (checked.size > 10_000) checked.clear();
    checked.set(key, r);
  }
  return r ?? undefined;
}

function typeCheck(source: string, inLoop: boolean): ExpressionError | undefined {
  const env = inLoop ? loopEnv : baseEnv;
  let result: { valid: boolean; error?: { message: string; node?: { pos?: number; start?: number } } };
  try {
    result = env.check(source) as typeof result;
  } catch (e) {
    return { offset: 0, message: firstLine((e as Error).message) };
  }
  if (result.valid) return undefined;
  const node = result.error?.node;
  return {
    offset: node?.pos ?? node?.start ?? 0,
    message: firstLine(result.error?.message ?? 'invalid expression'),
  };
}

/** A compiled expression; its program is parsed once per distinct source. */
export function compile(source: string, inLoop = false): Compiled {
  const key = `${inLoop ? 'L' : 'B'}${source}`;
  let program = cache.get(key);
  if (!program) {
    program = (inLoop ? loopEnv : baseEnv).parse(source);
    cache.set(key, program);
  }
  const p = program;
  const path = MEMBER_PATH.test(source) ? source.split('.').map((name) => name.trim()) : undefined;
  return {
    source,
    evaluate: (context) => {
      // `item`, `inputs.account`: read directly when CEL would read the same value (see lookup).
      const direct = path && lookup(context, path);
      return direct !== undefined ? direct : fromCel(p(wrapContext(context)));
    },
  };
}

/** A variable and member names, `a.b.c`, and nothing else. */
const MEMBER_PATH = /^[A-Za-z_]\w*(\s*\.\s*[A-Za-z_]\w*)*$/;

/**
 * The value at `path` when each step of it is an own field of an object (not a list) and the value is JSON
 * data: what CEL gives for it, as fromCel returns it (the same object, the same number), without the context
 * being wrapped and read through proxies, as each iteration of a fan-out reads `item`. Anything else (a missing
 * or inherited field, a field of a list, null, a function, a word CEL reserves) is undefined, and left to CEL,
 * which says what is wrong or what it means.
 */
function lookup(context: Record<string, unknown>, path: string[]): unknown {
  let v: unknown = context;
  for (const name of path) {
    if (v === null || typeof v !== 'object' || Array.isArray(v) || !Object.hasOwn(v, name)) return undefined;
    v = (v as Record<string, unknown>)[name];
  }
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return v;
    case 'number':
      // CEL reads an integer as an int and gives it back as a number: -0 comes back as 0.
      return Object.is(v, -0) ? undefined : v;
    case 'object':
      return v ?? undefined;
    default:
      return undefined;
  }
}

function firstLine(message: string): string {
  return message.split('\n')[0]?.trim() ?? message;
}

// ── the integer boundary ────────────────────────────────────────────────────────────────────────
const proxies = new WeakMap<object, object>();
const targets = new WeakMap<object, object>();

function toCel(v: unknown): unknown {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (v === undefined) return null;
  if (v === null || typeof v !== 'object' || v instanceof Date || v instanceof Uint8Array) return v;
  let p = proxies.get(v);
  if (!p) {
    p = new Proxy(v, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        // An array's length is the engine's, not data: CEL's list operations read it as a JS number.
        return typeof prop === 'symbol' || (prop === 'length' && Array.isArray(target))
          ? value
          : toCel(value);
      },
    });
    proxies.set(v, p);
    targets.set(p, v);
  }
  return p;
}

function wrapContext(context: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(context)) out[k] = toCel(v);
  return out;
}

/** A CEL result as plain JSON: BigInt → number, proxies unwrapped, Maps → objects. */
export function fromCel(v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (v === null || typeof v !== 'object' || v instanceof Date) return v;
  const target = targets.get(v);
  if (target) return target;
  if (Array.isArray(v)) return v.map(fromCel);
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [String(k), fromCel(x)]));
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = fromCel(x);
  return out;
}
