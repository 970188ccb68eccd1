/**
 * Part of a list (canary rollouts: the first 50 devices, then the rest).
 *
 * - `list.slice(from, to)` is cel-go's (its `ext.Lists` library), as strict as `substring`: the elements from
 *   index `from` up to, not including, `to`, with `0 <= from <= to <= size(list)`; anything else fails the
 *   evaluation, saying which.
 * - `list.take(n)` and `list.drop(n)`: the first `n` elements, and those after them; all or none when the list
 *   has fewer than `n`, so that a canary of 50 works on an account of 30. A negative count fails.
 * - The arguments are ints: a double or a string is no overload (refused by validate where its type is known). A
 *   whole JSON number is an int (boundary.ts).
 * - A list of the run's data is sliced as it is (boundary.ts sliceList): the part holds its very elements, and
 *   only the part is copied, a reference per element. What it builds costs its size in the budget, as any
 *   function's result does.
 */
import { EvaluationError, type Environment } from '@marcbachmann/cel-js';
import { sliceList } from './boundary.js';

/** The functions that take part of a list, each giving a list of the same elements. */
export const SLICES = ['slice', 'take', 'drop'] as const;

/** An evaluation error of the call under way: cel-js gives it the call's position. */
const fail = (message: string) => new EvaluationError({ code: 'index_out_of_range', message });

function slice(list: unknown[], from: bigint, to: bigint): unknown[] {
  const call = `slice(${from}, ${to})`;
  if (from < 0n || to < 0n) throw fail(`${call}: an index cannot be negative`);
  if (from > to) throw fail(`${call}: from (${from}) is after to (${to})`);
  const size = list.length;
  if (to > BigInt(size))
    throw fail(
      `${call}: the list has ${size} elements (take(${to}) takes the first ${to}, or all when there are fewer)`,
    );
  return sliceList(list, Number(from), Number(to));
}

/** The count `n` of `take(n)` or `drop(n)`, at most the list's size. */
function count(name: string, list: unknown[], n: bigint): number {
  if (n < 0n) throw fail(`${name}(${n}): a count cannot be negative`);
  const size = list.length;
  return n > BigInt(size) ? size : Number(n);
}

/**
 * Registers `slice`, `take` and `drop` on lists of `env`. Of `list<dyn>`, not `list<A>`: cel-js leaves `A`
 * unbound for a receiver of type dyn, which every list of the run's data is, and then fails to check an index of
 * the result (`Cannot index type 'undefined'`). The element types of the run's data are validate's (types-check.ts).
 */
export function registerListSlices(env: Environment): void {
  const n = { params: [{ name: 'n' }] };
  env.registerFunction('list.slice(int, int): list', slice, { params: [{ name: 'from' }, { name: 'to' }] });
  env.registerFunction(
    'list.take(int): list',
    (list: unknown[], n: bigint) => sliceList(list, 0, count('take', list, n)),
    n,
  );
  env.registerFunction(
    'list.drop(int): list',
    (list: unknown[], n: bigint) => sliceList(list, count('drop', list, n), list.length),
    n,
  );
}
