/**
 * What fleetbook adds to cel-js's evaluator, in the one place every node passes: `run(ast, ctx)`, which
 * evaluates each node of an expression but the root.
 *
 * - The budget (budget.ts): each node is a step, and what `+` and function calls build costs its size.
 * - Map literals keep every key (issue 15): cel-js drops the keys `__proto__`, `constructor` and `prototype`
 *   of a map literal (they would corrupt a plain object), so a literal that may hold one is built here, as a Map
 *   when it does. Literals whose keys are all other string constants, the common case, are cel-js's own.
 *
 * The evaluator is not exported by cel-js; a macro's `evaluate(evaluator, macro, ctx)` receives it (the
 * documented macro API). So {@link instrument} evaluates a `matches()` once, whose macro hands the evaluator
 * over, and wraps `run` on that one object. cel-js itself is not modified.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { built, step } from './budget.js';

/** The parts of cel-js's AST nodes and evaluator used here. */
interface Node {
  op: string;
  args: unknown;
  setMeta(key: string, value: unknown): Node;
  evaluate(ev: Evaluator, ast: Node, ctx: unknown): unknown;
}
interface Evaluator {
  run(node: Node, ctx: unknown): unknown;
}

/** The keys cel-js drops from map literals. */
const DROPPED = new Set<unknown>(['__proto__', 'constructor', 'prototype']);
const PREPARED = Symbol('fleetbook.prepared');

/** A map literal that may hold a key cel-js drops: built here, every key kept. */
function evaluateMapLiteral(ev: Evaluator, ast: Node, ctx: unknown): unknown {
  const entries = ast.args as [Node, Node][];
  const pairs: [unknown, unknown][] = [];
  let dropped = false;
  for (const [k, v] of entries) {
    const key = ev.run(k, ctx);
    pairs.push([key, ev.run(v, ctx)]);
    if (DROPPED.has(key)) dropped = true;
  }
  if (dropped) return new Map(pairs);
  // What cel-js builds: an object, keys as JavaScript writes them.
  const obj: Record<string, unknown> = {};
  for (const [k, v] of pairs) obj[k as string] = v;
  return obj;
}

/** Makes a map literal node keep every key, unless its keys are all constants cel-js keeps. */
export function prepareMapLiteral(ast: Node): void {
  const node = ast as Node & { [PREPARED]?: true };
  if (node[PREPARED]) return;
  node[PREPARED] = true;
  const entries = ast.args as [Node, Node][];
  const safe = entries.every(([k]) => k.op === 'value' && typeof k.args === 'string' && !DROPPED.has(k.args));
  if (!safe) ast.setMeta('evaluate', evaluateMapLiteral);
}

const instrumented = new WeakSet<object>();
let capture: ((ev: Evaluator) => void) | undefined;

/** Called by the `matches()` macro with the evaluator cel-js hands it: see {@link instrument}. */
export function evaluatorSeen(ev: unknown): void {
  capture?.(ev as Evaluator);
}

/**
 * Whether the evaluation under way is instrument()'s probe, which only wants the evaluator: matches() then does
 * no regular-expression work (so that re2js loads with the first expression that uses it, not at start-up).
 */
export function probing(): boolean {
  return capture !== undefined;
}

/** Wraps `run` of the evaluator of `env`: the budget's count, and map literals that keep every key. */
export function instrument(env: Environment): void {
  let seen: Evaluator | undefined;
  capture = (ev) => (seen = ev);
  try {
    env.evaluate('"".matches("")');
  } finally {
    capture = undefined;
  }
  if (!seen)
    throw new Error(
      'cel-js no longer hands its evaluator to macros: the expression budget cannot be counted (src/expressions/evaluator.ts)',
    );
  if (instrumented.has(seen)) return;
  instrumented.add(seen);
  // cel-js's run is `ast.evaluate(this, ast, ctx)`: the wrapper does it itself, a call less per node. Should a
  // new cel-js run nodes otherwise, this says so at once rather than skip what run does.
  if (!/^run\s*\(ast, ctx\)\s*\{\s*return ast\.evaluate\(this, ast, ctx\);?\s*\}$/.test(String(seen.run)))
    throw new Error(`cel-js's evaluator runs nodes in a new way: review src/expressions/evaluator.ts`);
  seen.run = function instrumentedRun(this: Evaluator, ast, ctx) {
    step();
    switch (ast.op) {
      case '+':
      case 'call':
      case 'rcall': {
        const v = ast.evaluate(this, ast, ctx);
        built(v);
        return v;
      }
      case 'map':
        prepareMapLiteral(ast);
    }
    return ast.evaluate(this, ast, ctx);
  };
}
