/**
 * What fleetbook adds to cel-js's evaluator, in the one place every node passes: `run(ast, ctx)`, which
 * evaluates each node of an expression but the root.
 *
 * - The budget (budget.ts): each node is a step, and what `+` and function calls build costs its size.
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
  evaluate(ev: Evaluator, ast: Node, ctx: unknown): unknown;
}
interface Evaluator {
  run(node: Node, ctx: unknown): unknown;
}

const instrumented = new WeakSet<object>();
let capture: ((ev: Evaluator) => void) | undefined;

/** Called by the `matches()` macro with the evaluator cel-js hands it: see {@link instrument}. */
export function evaluatorSeen(ev: unknown): void {
  capture?.(ev as Evaluator);
}

/** Wraps `run` of the evaluator of `env`: the budget's count. */
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
    }
    return ast.evaluate(this, ast, ctx);
  };
}
