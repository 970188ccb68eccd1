/**
 * What one line of YAML holds at a column, for the fast reader (fast-yaml.ts): indicators, where an implicit
 * key or a plain scalar ends, and the value of a plain scalar by the core schema. Anything outside the subset
 * throws OUT_OF_SUBSET, which the reader turns into "not sure".
 */

/** Thrown inside the reader when the text leaves the subset; never escapes it. */
export const OUT_OF_SUBSET: unique symbol = Symbol('out of subset');

export function out(): never {
  throw OUT_OF_SUBSET;
}

/**
 * Characters that cannot start a plain scalar (or make it ambiguous), by char code. The scanning leans
 * on regular expressions and `indexOf`, which run at full speed before the JIT has warmed up.
 */
const INDICATOR = new Uint8Array(128);
for (const c of '-?:,[]{}#&*!|>\'"%@`') INDICATOR[c.charCodeAt(0)] = 1;
export const isIndicator = (code: number) => code < 128 && INDICATOR[code] === 1;

/** In block context: the end of an implicit key (`: ` or `:` at the end) or the start of a comment. */
export const BLOCK_STOP = /:(?: |$)| #/g;
/** In a flow collection: a flow indicator, the end of an implicit key, or the start of a comment. */
export const FLOW_STOP = /[,[\]{}]|:(?=[ ,[\]{}]|$)| #/g;
export const NOT_SPACE = /[^ ]/;
export const DOUBLE_QUOTED_STOP = /["\\]/g;
export const HEX = /^[0-9a-fA-F]+$/;

/** Where `re` (global) first matches in `line` at or after `from`, or -1. */
export function find(re: RegExp, line: string, from: number): number {
  re.lastIndex = from;
  const m = re.exec(line);
  return m ? m.index : -1;
}

export const ESCAPES: Record<string, string> = {
  '0': '\0',
  a: '\x07',
  b: '\b',
  e: '\x1b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  N: '\u0085',
  _: '\u00a0',
  L: '\u2028',
  P: '\u2029',
  ' ': ' ',
  '"': '"',
  '/': '/',
  '\\': '\\',
};

/** True when `line` has a sequence entry indicator at `col`: `-` then a space or the end of the line. */
export function isDash(line: string, col: number): boolean {
  return line[col] === '-' && (col + 1 === line.length || line[col + 1] === ' ');
}

/**
 * When `line` holds an implicit key at `p` (a plain scalar, or a one-line quoted one, then `:` and a space or
 * the end of the line), the index of that `:`; else -1.
 */
export function keyEnd(line: string, p: number): number {
  if (p >= line.length) return -1;
  const c = line.charCodeAt(p);
  if (isQuote(c)) {
    const q = quotedEnd(line, p);
    const next = line.charCodeAt(q + 1);
    return q !== -1 && line.charCodeAt(q) === 58 /* : */ && (Number.isNaN(next) || next === 32) ? q : -1;
  }
  if (isIndicator(c)) return -1;
  const stop = find(BLOCK_STOP, line, p + 1);
  return stop !== -1 && line.charCodeAt(stop) === 58 /* : */ ? stop : -1;
}

export const isQuote = (code: number) => code === 39 /* ' */ || code === 34; /* " */

/** Just past the closing quote of the quoted scalar that opens at `p`, or -1 when it does not close on this line. */
function quotedEnd(line: string, p: number): number {
  const quote = line.charCodeAt(p);
  for (let i = p + 1; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 92 /* \ */ && quote === 34 /* " */) i++;
    else if (c === quote) {
      if (quote === 39 /* ' */ && line.charCodeAt(i + 1) === 39) i++;
      else return i + 1;
    }
  }
  return -1;
}

/** Without trailing spaces (only spaces: YAML's other white space, the tab, never gets here). */
export function trimSpaces(s: string): string {
  let end = s.length;
  while (end > 0 && s.charCodeAt(end - 1) === 32) end--;
  return end === s.length ? s : s.slice(0, end);
}

export function skipSpaces(line: string, p: number): number {
  while (line.charCodeAt(p) === 32) p++;
  return p;
}

/** Where a plain scalar starting at `p` inside a flow collection ends (a flow indicator, `: `, ` #`). */
export function flowPlainEnd(line: string, p: number): number {
  const first = line.charCodeAt(p);
  // `-` may start a plain scalar when something other than a space or flow indicator follows (`-1`).
  if (
    Number.isNaN(first) ||
    (isIndicator(first) && !(first === 45 /* - */ && /^[^ ,[\]{}]/.test(line.slice(p + 1, p + 2))))
  )
    out();
  const stop = find(FLOW_STOP, line, p);
  if (stop === -1) out(); // the collection goes on past this line
  if (line.slice(p, stop).trim() === '') out();
  return stop;
}

const NULL = /^(?:~|[Nn]ull|NULL)?$/;
const BOOL = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/;
const INT_OCT = /^0o[0-7]+$/;
const INT = /^[-+]?[0-9]+$/;
const INT_HEX = /^0x[0-9a-fA-F]+$/;
const FLOAT_NAN = /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/;
const FLOAT_EXP = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/;
const FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/;

/** A plain scalar by the YAML 1.2 core schema, in the order `yaml` tries its tags. */
export function plainValue(s: string): unknown {
  const c = s.charCodeAt(0);
  // Most scalars are words: only n/N/t/T/f/F/~, digits, signs and `.` can start anything but a string.
  const letter = (c >= 97 && c <= 122) || (c >= 65 && c <= 90);
  if (letter && !'nNtTfF'.includes(s[0] as string)) return s;
  if (NULL.test(s)) return null;
  if (BOOL.test(s)) return s[0] === 't' || s[0] === 'T';
  if (INT_OCT.test(s)) return parseInt(s.substring(2), 8);
  if (INT.test(s)) return parseInt(s, 10);
  if (INT_HEX.test(s)) return parseInt(s.substring(2), 16);
  if (FLOAT_NAN.test(s))
    return s.slice(-3).toLowerCase() === 'nan'
      ? NaN
      : s[0] === '-'
        ? Number.NEGATIVE_INFINITY
        : Number.POSITIVE_INFINITY;
  if (FLOAT_EXP.test(s) || FLOAT.test(s)) return parseFloat(s);
  return s;
}
