/**
 * Expressions: `${{ ... }}` in CEL (product.md section 2).
 *
 * - A string that is one whole expression keeps the expression's type; expressions inside a longer string
 *   are interpolated into it.
 * - Expressions are parsed and type-checked once, at load, with the position of any error.
 * - JSON numbers that are integers behave as CEL ints (`event.count + 1`), and results come back as plain JSON
 *   values: boundary.ts, both ways. Any key of the data is data, `constructor` included.
 * - JSON does not say int or double: `usage * 2` must not work for 3 and fail for 2.5. So int and double mix in
 *   `+ - * /` and give a double, where plain CEL would refuse the expression. Where those overloads make an
 *   operation ambiguous to cel-js's checker (arithmetic on an element of an empty literal, `[].map(n, n / 2)`),
 *   the expression is CEL's own: it is checked and run without them.
 * - `matches()` runs on RE2, linear in the text (regex.ts).
 * - Lists have `slice(from, to)`, `take(n)` and `drop(n)` (slices.ts).
 * - `string()` of a timestamp or a duration, which cel-js lacks, gives CEL's text of it.
 * - Every evaluation has a budget of work (budget.ts, FLEETBOOK_EXPRESSION_BUDGET): past it, it fails.
 * - CEL is sandboxed: no I/O, no loops, bounded size. Nothing reachable from an expression can escape.
 */
import { Environment, EvaluationError } from '@marcbachmann/cel-js';
import { fromCel, wrapContext } from './boundary.js';
import { metered } from './budget.js';
import { instrument, prepareMapLiteral } from './evaluator.js';
import { unknownFunction, wrongArguments, wrongReceiver, type Form } from './functions.js';
import { registerRe2Matches } from './regex.js';
import { registerListSlices } from './slices.js';

export { DEFAULT_EXPRESSION_BUDGET, expressionBudget, setExpressionBudget } from './budget.js';
export { fromCel } from './boundary.js';

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

/** An environment with `variables` (name and CEL type); `mixed`: with the int/double arithmetic. */
function environment(variables: readonly (readonly [string, string])[], mixed: boolean): Environment {
  const env = new Environment({
    unlistedVariablesAreDyn: false,
    homogeneousAggregateLiterals: false,
    limits: LIMITS,
  });
  for (const [name, type] of variables) env.registerVariable(name, type);
  if (mixed)
    for (const [op, f] of MIXED) {
      env.registerOperator(`double ${op} int: double`, (a: number, b: bigint) => f(a, Number(b)));
      env.registerOperator(`int ${op} double: double`, (a: bigint, b: number) => f(Number(a), b));
    }
  registerRe2Matches(env);
  registerListSlices(env);
  registerTimeStrings(env);
  instrument(env);
  return env;
}

/**
 * CEL's `string()` of a timestamp (RFC 3339 in UTC, as cel-go writes it: no fraction of a second when it is
 * zero, no trailing zeros) and of a duration (seconds, `5400s`), which cel-js lacks.
 */
function registerTimeStrings(env: Environment): void {
  env.registerFunction('string(google.protobuf.Timestamp): string', (t: Date) =>
    t.toISOString().replace(/\.(\d*?)0*Z$/, (_, f: string) => (f ? `.${f}Z` : 'Z')),
  );
  env.registerFunction('string(google.protobuf.Duration): string', (d: { toString(): string }) =>
    d.toString(),
  );
}

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

/** What the checker says of a source in one environment. */
function typeCheck(env: Environment, source: string): ExpressionError | undefined {
  let result: { valid: boolean; error?: { message: string; node?: { pos?: number; start?: number } } };
  try {
    result = env.check(source) as typeof result;
  } catch (e) {
    return { offset: 0, message: firstLine((e as Error).message) };
  }
  if (result.valid) return undefined;
  const node = result.error?.node;
  const message = firstLine(result.error?.message ?? 'invalid expression');
  return { offset: node?.pos ?? node?.start ?? 0, message: explained(message, node) };
}

let forms: Form[] | undefined;

/**
 * The checker's or the evaluation's first line, as said of a name that is no function, of a getter called on a
 * value of a type that has no such getter, or of a function given more or fewer arguments than it takes
 * (functions.ts); else as it is. `node` is where it was found.
 */
function explained(message: string, node: unknown): string {
  const unknown = unknownFunction(message);
  if (unknown !== undefined) return unknown;
  forms ??= base.functions();
  return wrongReceiver(message, node, forms) ?? wrongArguments(message, node, forms) ?? message;
}

/** An evaluation error whose first line `explained` words otherwise, so worded; its code frame kept. */
function reworded(e: unknown): unknown {
  if (!(e instanceof EvaluationError)) return e;
  const [first = '', ...rest] = e.message.split('\n');
  const better = explained(first, (e as { node?: unknown }).node);
  if (better !== first) e.message = [better, ...rest].join('\n');
  return e;
}

/** cel-js's checker found two overloads for one operation: the mixed arithmetic made it ambiguous. */
const ambiguous = (e: ExpressionError | undefined) =>
  e !== undefined && /^Operator overload '.+' overlaps with '.+'/.test(e.message);

const KEEP = 10_000;

/** The expressions over one set of variables: their environments, checks and programs. */
class Scope {
  private readonly mixed: Environment;
  private strictEnv: Environment | undefined;
  private readonly checks = new Map<string, { env: Environment; error?: ExpressionError }>();
  private readonly programs = new Map<string, Program>();

  constructor(private readonly variables: readonly (readonly [string, string])[]) {
    this.mixed = environment(variables, true);
  }

  /** The forms of the functions its expressions may call, as registered (functions.ts wrongArguments). */
  functions(): Form[] {
    return this.mixed.getDefinitions().functions.map((f) => ({
      name: f.name,
      receiver: f.receiverType !== null,
      ...(f.receiverType !== null ? { receiverType: String(f.receiverType) } : {}),
      params: f.params.map((p) => ({ name: p.name, type: p.type })),
    }));
  }

  /** The environment of `source`, and its error if any. Cached. */
  check(source: string): { env: Environment; error?: ExpressionError } {
    let r = this.checks.get(source);
    if (r === undefined) {
      const error = typeCheck(this.mixed, source);
      if (ambiguous(error)) {
        const strict = (this.strictEnv ??= environment(this.variables, false));
        r = { env: strict, error: typeCheck(strict, source) };
      } else r = { env: this.mixed, ...(error ? { error } : {}) };
      if (this.checks.size >= KEEP) this.checks.clear();
      this.checks.set(source, r);
    }
    return r;
  }

  /** The program of `source`, parsed once. */
  program(source: string): Program {
    let p = this.programs.get(source);
    if (!p) {
      p = this.check(source).env.parse(source);
      // The root is evaluated outside the evaluator's run, where other map literals are prepared.
      if (p.ast.op === 'map') prepareMapLiteral(p.ast as never);
      if (this.programs.size >= KEEP) this.programs.clear();
      this.programs.set(source, p);
    }
    return p;
  }

  compile(source: string): Compiled {
    const p = this.program(source);
    const path = MEMBER_PATH.test(source) ? source.split('.').map((name) => name.trim()) : undefined;
    return {
      source,
      evaluate: (context) => {
        // `item`, `inputs.account`: read directly when CEL would read the same value (see lookup).
        const direct = path && lookup(context, path);
        if (direct !== undefined) return direct;
        try {
          return fromCel(metered(source, () => p(wrapContext(context))));
        } catch (e) {
          throw withStepsNotRun(reworded(e), source, context);
        }
      },
    };
  }
}

const base = new Scope(CONTEXT_VARIABLES.map((v) => [v, 'dyn'] as const));
const loop = new Scope([
  ...CONTEXT_VARIABLES.map((v) => [v, 'dyn'] as const),
  ['item', 'dyn'],
  ['index', 'int'],
]);

/** Parses and type-checks `source`; the error carries its offset within the source. Results are cached. */
export function checkExpression(source: string, inLoop: boolean): ExpressionError | undefined {
  return (inLoop ? loop : base).check(source).error;
}

/** The syntax tree of a valid `source` (cel-js's: `{ op, args, pos }` nodes), parsed once per distinct source. */
export function syntaxTree(source: string, inLoop = false): unknown {
  return (inLoop ? loop : base).program(source).ast;
}

/** A compiled expression; its program is parsed once per distinct source. */
export function compile(source: string, inLoop = false): Compiled {
  return (inLoop ? loop : base).compile(source);
}

const scopes = new Map<string, Scope>();

/**
 * An expression over `variables` (each dyn) instead of a playbook's, with everything else of playbook
 * expressions: the integer boundary, the mixed arithmetic, RE2, the budget. The CEL conformance suite runs
 * through it (test/expressions/conformance.test.ts).
 */
export function compileWith(source: string, variables: readonly string[]): Compiled {
  const key = JSON.stringify(variables);
  let scope = scopes.get(key);
  if (!scope) {
    scope = new Scope(variables.map((v) => [v, 'dyn'] as const));
    scopes.set(key, scope);
  }
  return scope.compile(source);
}

/** A variable and member names, `a.b.c`, and nothing else; not a literal (`true`, `false`, `null`). */
const MEMBER_PATH = /^(?!(?:true|false|null)\s*(?:\.|$))[A-Za-z_]\w*(\s*\.\s*[A-Za-z_]\w*)*$/;

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

/** `steps.<id>` in an expression's source. */
const STEP_READ = /\bsteps\s*\.\s*([A-Za-z_]\w*)/g;

/**
 * The error of an evaluation that read a step which did not run to its end (skipped by its `if`, failed, or
 * cancelled: its output is null), saying so after its first line: `No such key: requestId` alone does not tell
 * that the step it reads was skipped.
 */
function withStepsNotRun(e: unknown, source: string, context: Record<string, unknown>): unknown {
  if (!(e instanceof Error) || !source.includes('steps')) return e;
  const steps = context.steps as
    Record<string, { status?: unknown; output?: unknown } | undefined> | undefined;
  const notRun = new Map<string, string>();
  for (const [, id] of source.matchAll(STEP_READ)) {
    const s = id !== undefined && steps && Object.hasOwn(steps, id) ? steps[id] : undefined;
    // An error that names the step already says why (the items of a listing that failed: runner/context.ts).
    if (s && s.output === null && s.status !== 'succeeded' && !e.message.includes(`step \`${id}\``))
      notRun.set(id as string, String(s.status));
  }
  if (!notRun.size) return e;
  const why = [...notRun]
    .map(([id, status]) => `step \`${id}\` ${status === 'failed' ? '' : 'was '}${status}: its output is null`)
    .join('; ');
  const [first, ...rest] = e.message.split('\n');
  e.message = [`${first} (${why})`, ...rest].join('\n');
  return e;
}

function firstLine(message: string): string {
  return message.split('\n')[0]?.trim() ?? message;
}
