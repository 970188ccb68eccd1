/**
 * The budget of an evaluation (issue 15). An expression cannot loop, but nested macros multiply: a cubic
 * `l.map(a, l.map(b, l.map(c, a + b + c)))` over 200 elements took 5 s and 363 MB, and held the daemon's event
 * loop all along. So every evaluation counts its work in units:
 *
 * - one per step of evaluation (an operator, a function call, a field read, each iteration's step of a macro);
 * - one per element or character of what a step builds (`+` of strings, lists or bytes, a function's result);
 * - one per character of the text `matches()` scans (RE2 is linear in it).
 *
 * It may use the budget (FLEETBOOK_EXPRESSION_BUDGET, {@link DEFAULT_EXPRESSION_BUDGET} by default), plus what the
 * run's data grants: reading a list or a map of the context (its size, or iterating it) adds
 * {@link UNITS_PER_ELEMENT} per element, once per list per evaluation, and reading a long string adds
 * {@link UNITS_PER_CHARACTER} per character. Work in proportion to the data passes (a `.filter().map()` over a
 * million devices), while a blow-up, which multiplies the same data, is stopped: past the budget the evaluation
 * throws ExpressionBudgetError, in a few milliseconds with the default.
 *
 * The steps are counted in cel-js's evaluator (evaluator.ts).
 */
import { ExpressionBudgetError } from '../errors.js';

/**
 * Units of work an evaluation may use before what the run's data grants. @default 50_000 (a few milliseconds)
 */
export const DEFAULT_EXPRESSION_BUDGET = 50_000;
/** Units each element of a list or map of the context grants, once per evaluation. */
export const UNITS_PER_ELEMENT = 100;
/** Units each character of a string of the context grants, once per evaluation (strings of 256 or more). */
export const UNITS_PER_CHARACTER = 4;
const LONG_STRING = 256;

let budget = DEFAULT_EXPRESSION_BUDGET;

/**
 * Sets the budget of every evaluation that starts from now on: the CLI and the daemon call it with
 * `config.expressionBudget` (FLEETBOOK_EXPRESSION_BUDGET).
 * @param units an integer from 1,000 up. @default 50_000
 * @example setExpressionBudget(loadConfig().expressionBudget)
 */
export function setExpressionBudget(units: number): void {
  if (!Number.isSafeInteger(units) || units < 1_000)
    throw new TypeError(`Expected the expression budget to be an integer from 1,000 up, got \`${units}\``);
  budget = units;
}

/** The budget of the evaluations that start now. */
export function expressionBudget(): number {
  return budget;
}

/** The work of the evaluation under way. */
class Meter {
  used = 0;
  limit = budget;
  exceeded = false;
  /** The lists, maps and long strings of the context that granted units already. */
  private granted: Set<unknown> | undefined;

  constructor(readonly source: string) {}

  grant(key: unknown, units: number): void {
    const g = (this.granted ??= new Set());
    if (g.has(key)) return;
    g.add(key);
    this.limit += units;
  }

  error(): ExpressionBudgetError {
    return new ExpressionBudgetError(this.source, this.limit, budget, UNITS_PER_ELEMENT);
  }
}

let meter: Meter | undefined;

function exceed(m: Meter): never {
  m.exceeded = true;
  throw m.error();
}

/**
 * Runs one evaluation of `source` under a fresh budget. CEL absorbs an error in one operand of `||` or `&&` and
 * in the steps of `exists()`/`all()`: an evaluation that went over its budget fails even when the rest of it
 * would have given a value.
 */
export function metered<T>(source: string, evaluate: () => T): T {
  const previous = meter;
  const m = new Meter(source);
  meter = m;
  try {
    const v = evaluate();
    if (m.exceeded) throw m.error();
    return v;
  } catch (e) {
    if (m.exceeded && !(e instanceof ExpressionBudgetError)) throw m.error();
    throw e;
  } finally {
    meter = previous;
  }
}

/** Charges `units` to the evaluation under way, if any. */
export function charge(units: number): void {
  const m = meter;
  if (m !== undefined && (m.used += units) > m.limit) exceed(m);
}

/** A list or map of the context with `size` elements is read: it grants its units, once per evaluation. */
export function grantElements(collection: object, size: number): void {
  meter?.grant(collection, size * UNITS_PER_ELEMENT);
}

/** A string of the context is read: a long one grants its units, once per evaluation. */
export function grantString(s: string): void {
  if (s.length >= LONG_STRING) meter?.grant(s, s.length * UNITS_PER_CHARACTER);
}

/** The size of what a step built, in units; 0 for what builds nothing of size. */
function sizeOf(v: unknown): number {
  if (typeof v === 'string') return v.length;
  if (typeof v !== 'object' || v === null) return 0;
  if (Array.isArray(v) || v instanceof Uint8Array) return v.length;
  return v instanceof Map ? v.size : 0;
}

/** One step of the evaluation under way (evaluator.ts counts every node cel-js evaluates). */
export function step(): void {
  const m = meter;
  if (m !== undefined && ++m.used > m.limit) exceed(m);
}

/** A step built `v`: a string, list, map or bytes costs its size. */
export function built(v: unknown): void {
  const m = meter;
  if (m !== undefined && (m.used += sizeOf(v)) > m.limit) exceed(m);
}
