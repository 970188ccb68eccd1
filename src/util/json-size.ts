/**
 * Whether a value's JSON text is at most `limit` characters long, found without writing it: a walk over the
 * value that stops as soon as it is past the limit, so that a list of a million devices costs no more than
 * its first `limit` characters, and never a string too long to exist. Escapes in strings are not counted:
 * a string's length is its characters and its quotes.
 */
export function jsonFits(value: unknown, limit: number): boolean {
  let left = limit;
  const walk = (v: unknown): boolean => {
    if (v === null || v === undefined) left -= 4;
    else if (typeof v === 'string') left -= v.length + 2;
    else if (typeof v === 'number' || typeof v === 'boolean') left -= String(v).length;
    else if (Array.isArray(v)) {
      left -= 2 + Math.max(0, v.length - 1);
      for (const x of v) if (left < 0 || !walk(x)) return false;
    } else if (typeof v === 'object') {
      left -= 2;
      let first = true;
      for (const [k, x] of Object.entries(v as object)) {
        if (x === undefined || typeof x === 'function') continue;
        left -= k.length + 3 + (first ? 0 : 1);
        first = false;
        if (left < 0 || !walk(x)) return false;
      }
    }
    return left >= 0;
  };
  return walk(value);
}
