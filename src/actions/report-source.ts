/**
 * Which rows a `report.write` step writes, and in which columns. Exactly one source: `rows` (any list of objects
 * the playbook built) or the ledger (`step`, or every step of the run when neither is given). One rule, applied
 * twice: `fleetbook validate` applies it to the literal arguments (policy.ts's static checks), the action to the
 * arguments computed at run time. Node built-ins only: validate loads this module.
 */
import { InputError } from '../errors.js';
import type { StaticProblem } from './policy.js';

type Json = Record<string, unknown>;

/** Where a report's rows come from. */
export type ReportSource = { rows: Json[] } | { ledger: { step?: string } };

const BOTH =
  "`rows` and `step` are two sources of rows: give `rows` (a list of objects) or `step` (a step's per-device results), not both";

/**
 * The source the rendered arguments of a `report.write` step name, once they have passed the action's schema
 * (executors.ts: `rows` a list of objects, `columns` a list of distinct names). An InputError (FB_INPUT, never
 * retried) when they name two: checked before the file is opened, so that a wrong input leaves any earlier
 * report in place.
 */
export function reportSource(input: Json): ReportSource {
  if (input.rows === undefined) {
    const step = input.step;
    return { ledger: step === undefined ? {} : { step: String(step) } };
  }
  if (input.step !== undefined) throw new InputError('report.write', [{ path: '/', message: BOTH }]);
  return { rows: input.rows as Json[] };
}

/**
 * What validate can tell from the literal arguments, beyond their schema: `rows` beside `step`, and a `rows` or
 * `columns` that is text with an expression inside it (always a string, never a list). One that is a whole
 * expression is judged at run time; the shape of a literal list is the schema's to check.
 */
export function reportSourceStatic(args: Json): StaticProblem[] {
  const problems: StaticProblem[] = [];
  const at = (key: string, where: 'key' | 'value', message: string): void => {
    problems.push({
      path: [key],
      where,
      rule: 'with',
      message: `report.write: ${message}`,
      severity: 'error',
    });
  };
  if (args.rows !== undefined && args.step !== undefined) at('rows', 'key', BOTH);
  for (const [key, list] of [
    ['rows', 'a list of objects'],
    ['columns', 'a list of names'],
  ] as const) {
    const v = args[key];
    // Only a string that starts with `${{` and ends with `}}` can be one whole expression (a list); any other
    // string with an expression in it is text. Two expressions side by side are left to run time.
    if (typeof v === 'string' && v.includes('${{') && !(v.startsWith('${{') && v.endsWith('}}')))
      at(
        key,
        'value',
        `\`${key}\` must be ${list}, but ${JSON.stringify(v)} is text with an expression inside it, always a string: write the whole value as one expression, \${{ ... }}`,
      );
  }
  return problems;
}
