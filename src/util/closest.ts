import { distance } from 'fastest-levenshtein';
import { compareText } from './text-order.js';

/**
 * The candidates closest to `name`, for "did you mean" hints: within a fifth of the name's length in edits,
 * or sharing its last segment (`suspend` for `device.suspend`), best first, at most `max`.
 */
export function closest(name: string, candidates: readonly string[], max = 3): string[] {
  const lower = name.toLowerCase();
  const tail = lower.slice(lower.lastIndexOf('.') + 1);
  const limit = Math.max(2, Math.ceil(name.length / 5));
  return (
    candidates
      .map((c) => {
        const lc = c.toLowerCase();
        const d = distance(lower, lc);
        const sameTail = tail.length > 2 && lc.slice(lc.lastIndexOf('.') + 1) === tail;
        return { c, d: sameTail ? Math.min(d, limit) : d };
      })
      // A candidate as far from the name as the name is long shares nothing with it.
      .filter((x) => x.d <= limit && x.d < name.length)
      .sort((a, b) => a.d - b.d || compareText(a.c, b.c))
      .slice(0, max)
      .map((x) => x.c)
  );
}

/**
 * ` (did you mean "active"?)`, after a value not in a list of allowed `values`, for the texts among them closest
 * to a text `v`, one of those that differ only in case; empty when none is close, when one value is allowed (the
 * message names it), or `v` is no text or too short for a near miss to mean anything (`"10"` is as near `"0"` as
 * `"1"`).
 */
export function nearValues(v: unknown, values: readonly unknown[]): string {
  if (typeof v !== 'string' || v.length < 3 || values.length < 2) return '';
  const byCase = new Map<string, string>();
  for (const x of values)
    if (typeof x === 'string' && !byCase.has(x.toLowerCase())) byCase.set(x.toLowerCase(), x);
  const near = closest(v, [...byCase.values()]).map((x) => JSON.stringify(x));
  return near.length ? ` (did you mean ${near.join(' or ')}?)` : '';
}
