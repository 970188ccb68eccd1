/**
 * `matches()` on RE2 (issue 15): cel-js matches with JavaScript's backtracking RegExp, on which
 * `"^([a-z]+-?)+$"` took 51 s over a 31-character name. RE2 (re2js, a port of Go's regexp) matches in time
 * linear in the text, and has the syntax CEL specifies for `matches()`: no backreferences, no lookaround.
 *
 * - A literal pattern is compiled once, when the expression is parsed; one RE2 cannot run is a ParseError at
 *   the pattern's position, so `fleetbook validate` reports it at its line and column.
 * - A pattern computed at run time is compiled when evaluated (the last few hundred are kept); one RE2 cannot run
 *   fails the evaluation with an EvaluationError saying why.
 * - `text.matches(re)` and `matches(text, re)` are true when the pattern matches any part of the text, as in CEL.
 *
 * cel-js refuses a second `string.matches(string)` overload, but it finds a macro by name and argument count
 * alone, whatever the receiver's type; so `matches` is declared as a macro on a receiver that has no
 * `matches` (bool) and takes the place of cel-js's function for every receiver.
 */
import { EvaluationError, ParseError, type Environment } from '@marcbachmann/cel-js';
import type * as Re2 from 're2js';
import type { RE2JS } from 're2js';
import { onFirstUse } from '../util/on-first-use.js';
import { charge } from './budget.js';
import { evaluatorSeen, probing } from './evaluator.js';

/** The parts of cel-js's AST nodes, type checker and evaluator a macro uses (its documented macro API). */
interface Node {
  op: string;
  args: unknown;
  pos?: number;
}
interface CelType {
  name: string;
  kind: string;
}
interface Checker {
  check(node: Node, ctx: unknown): CelType;
  getType(name: string): CelType;
  formatType(t: CelType): string;
  createError(code: string, message: string, node: Node): Error;
}
interface Evaluator {
  run(node: Node, ctx: unknown): unknown;
}

interface MatchesMacro {
  ast: Node;
  text: Node;
  pattern: Node;
  /** The compiled pattern, when it is a literal. */
  re?: RE2JS;
  async: false;
  typeCheck(checker: Checker, macro: MatchesMacro, ctx: unknown): CelType;
  evaluate(ev: Evaluator, macro: MatchesMacro, ctx: unknown): boolean;
}

/** re2js, loaded by the first expression that uses matches(): most playbooks have none (its 260 KB cost every run). */
const re2 = onFirstUse<typeof Re2>(import.meta.url, 're2js');

const HINT = 'RE2 matches in linear time: it has no backreferences and no lookaround';

/** The compiled pattern, or why RE2 cannot run it (with a hint where the reason is a feature RE2 lacks). */
function compileRe2(pattern: string): RE2JS | string {
  try {
    return re2().RE2JS.compile(pattern);
  } catch (e) {
    const reason = (e as Error).message.replace(/^error parsing regexp: /, '');
    return /Perl syntax|escape sequence|named capture/.test(reason) ? `${reason} (${HINT})` : reason;
  }
}

/** matches()'s refusal of a pattern RE2 cannot run, `reason` as compileRe2 gives it. */
const refusal = (pattern: string, reason: string) =>
  `matches() takes RE2 syntax, which cannot run the pattern \`${pattern}\`: ${reason}`;

/** Literal patterns, compiled once whatever the number of expressions and environments that hold them. */
const literals = new Map<string, RE2JS | string>();
/** Patterns computed at run time, the most recent ones. */
const computed = new Map<string, RE2JS | string>();
const KEEP = 10_000;
const KEEP_COMPUTED = 500;

/**
 * A pattern written in a playbook, compiled once (a `matches()` literal, an input's `pattern`): the compiled
 * pattern, or why RE2 cannot run it.
 */
export function re2Pattern(pattern: string): RE2JS | string {
  let re = literals.get(pattern);
  if (re === undefined) {
    re = compileRe2(pattern);
    if (literals.size >= KEEP) literals.clear();
    literals.set(pattern, re);
  }
  return re;
}

function literal(pattern: string): RE2JS | string {
  const re = re2Pattern(pattern);
  return typeof re === 'string' ? refusal(pattern, re) : re;
}

function atRunTime(pattern: string, ast: Node): RE2JS {
  let re = computed.get(pattern);
  if (re === undefined) {
    re = compileRe2(pattern);
    if (computed.size >= KEEP_COMPUTED) computed.delete(computed.keys().next().value as string);
    computed.set(pattern, re);
  }
  if (typeof re === 'string') throw new EvaluationError(refusal(pattern, re), ast as never);
  return re;
}

/** The CEL name of a value's type, for an error. */
function typeName(v: unknown): string {
  switch (typeof v) {
    case 'bigint':
      return 'int';
    case 'number':
      return 'double';
    case 'boolean':
      return 'bool';
    case 'string':
      return 'string';
    default:
      if (v === null) return 'null';
      if (Array.isArray(v)) return 'list';
      return v instanceof Uint8Array ? 'bytes' : 'map';
  }
}

const stringish = (t: CelType) => t.name === 'string' || t.kind === 'dyn' || t.kind === 'param';

function typeCheck(checker: Checker, m: MatchesMacro, ctx: unknown): CelType {
  const text = checker.check(m.text, ctx);
  const pattern = checker.check(m.pattern, ctx);
  if (!stringish(text) || !stringish(pattern))
    throw checker.createError(
      'no_matching_overload',
      `found no matching overload for '${checker.formatType(text)}.matches(${checker.formatType(pattern)})'`,
      m.ast,
    );
  return checker.getType('bool');
}

function evaluate(ev: Evaluator, m: MatchesMacro, ctx: unknown): boolean {
  evaluatorSeen(ev);
  if (probing()) return false;
  const text = ev.run(m.text, ctx);
  const pattern = m.re ?? ev.run(m.pattern, ctx);
  const compiled = pattern instanceof re2().RE2JS;
  if (typeof text !== 'string' || !(compiled || typeof pattern === 'string'))
    throw new EvaluationError(
      `found no matching overload for '${typeName(text)}.matches(${compiled ? 'string' : typeName(pattern)})'`,
      m.ast as never,
    );
  const re = compiled ? (pattern as RE2JS) : atRunTime(pattern as string, m.ast);
  // RE2 is linear in the text: the scan is work of its size.
  charge(text.length);
  return re.test(text);
}

function macro(ast: Node, text: Node, pattern: Node): MatchesMacro {
  const m: MatchesMacro = { ast, text, pattern, async: false, typeCheck, evaluate };
  if (pattern.op === 'value' && typeof pattern.args === 'string' && !probing()) {
    const re = literal(pattern.args);
    if (typeof re === 'string') throw new ParseError(re, pattern as never);
    m.re = re;
  }
  return m;
}

/** Makes `matches()` of `env` run on RE2, in both its forms. */
export function registerRe2Matches(env: Environment): void {
  env.registerFunction(
    'bool.matches(ast): bool',
    (({ ast, args, receiver }) => macro(ast as Node, receiver as Node, (args as Node[])[0] as Node)) as (o: {
      ast: unknown;
      args: unknown;
      receiver: unknown;
    }) => MatchesMacro,
    { params: [{ name: 'regex' }] },
  );
  env.registerFunction(
    'matches(ast, ast): bool',
    (({ ast, args }) => macro(ast as Node, (args as Node[])[0] as Node, (args as Node[])[1] as Node)) as (o: {
      ast: unknown;
      args: unknown;
    }) => MatchesMacro,
    { params: [{ name: 'text' }, { name: 'regex' }] },
  );
}
