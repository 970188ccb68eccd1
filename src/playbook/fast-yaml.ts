/**
 * A fast reader for the everyday subset of YAML that playbooks are written in, for the loader's common case:
 * a file that is valid. It returns exactly the data `yaml` would (`parseDocument(...).toJS()`, core schema,
 * after the expressions are restored), or `undefined` as soon as the text leaves the subset, and the loader
 * then takes the full path through `yaml`, which also positions every problem. It never reports anything.
 *
 * The subset: block mappings with plain keys, block sequences (compact mappings and sequences in their
 * items), and on one line each: plain scalars, single- and double-quoted scalars, and flow mappings and
 * sequences of those. Anything else (tabs, CR, anchors, aliases, tags, block scalars, multi-line scalars or
 * flow collections, quoted or non-string keys, directives, several documents, duplicate keys, empty flow
 * values, ...) gives `undefined`. test/playbook checks it against `yaml` on generated and mutated input.
 */

type Json = Record<string, unknown>;

/** The scalar styles whose expressions are restored differently (see protect.ts). */
export type ScalarStyle = 'PLAIN' | 'QUOTE_SINGLE' | 'QUOTE_DOUBLE';

/** Turns the placeholders in a scalar back into the expressions (identity when nothing was protected). */
export type RestoreScalar = (value: string, style: ScalarStyle) => string;

/** Thrown inside the reader when the text leaves the subset; never escapes it. */
const OUT_OF_SUBSET: unique symbol = Symbol('out of subset');

/** Characters that rule the whole text out: tabs, CR, other controls, BOM, Unicode line breaks. */
// eslint-disable-next-line no-control-regex
const UNSUPPORTED = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\ufeff]/;

/** Deepest nesting read here; deeper documents go to `yaml`. */
const MAX_DEPTH = 64;

/** Longest line read here (`yaml` limits implicit keys to 1024 characters). */
const MAX_LINE = 1000;

/** The data of `text` (a protected playbook source), or undefined when it is not in the subset. */
export function readSimpleYaml(text: string, restore: RestoreScalar): Json | undefined {
  if (UNSUPPORTED.test(text)) return undefined;
  try {
    return new Reader(text, restore).document();
  } catch (e) {
    // Out of the subset, or nested deeper than the stack allows: the full parser decides.
    if (e === OUT_OF_SUBSET || e instanceof RangeError) return undefined;
    throw e;
  }
}

function out(): never {
  throw OUT_OF_SUBSET;
}

/** First characters that make a token something other than a plain scalar (or make it ambiguous). */
const INDICATOR = new Set('-?:,[]{}#&*!|>\'"%@`');

class Reader {
  private readonly lines: string[];
  /** Indentation of each line; -1 for a blank or comment-only line. */
  private readonly indent: Int32Array;

  constructor(
    text: string,
    private readonly restore: RestoreScalar,
  ) {
    this.lines = text.split('\n');
    this.indent = new Int32Array(this.lines.length);
    for (let i = 0; i < this.lines.length; i++) {
      const line = this.lines[i] as string;
      if (line.length > MAX_LINE) out();
      let n = 0;
      while (line.charCodeAt(n) === 32) n++;
      this.indent[i] = n === line.length || line[n] === '#' ? -1 : n;
    }
  }

  document(): Json | undefined {
    const first = this.next(0);
    if (first === -1 || this.indent[first] !== 0) return undefined;
    const line = this.lines[first] as string;
    // Directives and document markers.
    if (line[0] === '%' || line.startsWith('---') || line.startsWith('...')) return undefined;
    const [map, after] = this.map(first, 0, 0);
    if (after !== -1) out();
    return map;
  }

  /** The first content line at or after `i`, or -1. */
  private next(i: number): number {
    for (; i < this.lines.length; i++) if ((this.indent[i] as number) >= 0) return i;
    return -1;
  }

  private ind(i: number): number {
    return this.indent[i] as number;
  }

  /** A block node starting at line `i`, column `col`: a sequence or a mapping. */
  private node(i: number, col: number, depth: number): [unknown, number] {
    if (depth > MAX_DEPTH) out();
    const line = this.lines[i] as string;
    if (isDash(line, col)) return this.seq(i, col, depth);
    if (keyEnd(line, col) !== -1) return this.map(i, col, depth);
    return out();
  }

  /**
   * A block mapping whose first key is at line `i`, column `col` (the line's indentation, or just after a
   * sequence item's `- `); the following keys are lines indented exactly `col`. Returns the mapping and the
   * first content line after it (-1 at the end).
   */
  private map(i: number, col: number, depth: number): [Json, number] {
    const obj: Json = {};
    for (;;) {
      const line = this.lines[i] as string;
      const colon = keyEnd(line, col);
      if (colon === -1) out();
      const key = this.key(trimSpaces(line.slice(col, colon)));
      let p = colon + 1;
      while (line.charCodeAt(p) === 32) p++;
      let value: unknown;
      let after: number;
      if (p >= line.length || line[p] === '#') {
        const j = this.next(i + 1);
        if (j !== -1 && this.ind(j) > col) [value, after] = this.node(j, this.ind(j), depth + 1);
        else if (j !== -1 && this.ind(j) === col && isDash(this.lines[j] as string, col))
          [value, after] = this.seq(j, col, depth + 1);
        else [value, after] = [null, j];
      } else {
        value = this.inlineValue(line, p, depth + 1);
        after = this.next(i + 1);
        if (after !== -1 && this.ind(after) > col) out();
      }
      if (Object.hasOwn(obj, key)) out();
      obj[key] = value;
      if (after === -1 || this.ind(after) < col) return [obj, after];
      if (this.ind(after) > col) out();
      i = after;
    }
  }

  /** A block sequence whose first `-` is at line `i`, column `col`; the next items are lines indented `col`. */
  private seq(i: number, col: number, depth: number): [unknown[], number] {
    const arr: unknown[] = [];
    for (;;) {
      const line = this.lines[i] as string;
      if (!isDash(line, col)) out();
      let p = col + 1;
      while (line.charCodeAt(p) === 32) p++;
      let item: unknown;
      let after: number;
      if (p >= line.length || line[p] === '#') {
        const j = this.next(i + 1);
        if (j === -1 || this.ind(j) <= col) out(); // an empty item
        [item, after] = this.node(j, this.ind(j), depth + 1);
      } else if (isDash(line, p)) {
        [item, after] = this.seq(i, p, depth + 1);
      } else if (keyEnd(line, p) !== -1) {
        [item, after] = this.map(i, p, depth + 1);
      } else {
        item = this.inlineValue(line, p, depth + 1);
        after = this.next(i + 1);
      }
      arr.push(item);
      if (after === -1 || this.ind(after) < col) return [arr, after];
      if (this.ind(after) > col) out();
      i = after;
    }
  }

  /** A mapping key: a plain scalar that resolves to a string, without placeholders, `__proto__` or `<<`. */
  private key(text: string): string {
    const key = plainValue(text);
    if (typeof key !== 'string' || key === '' || key === '__proto__' || key === '<<') out();
    if (this.restore(key, 'PLAIN') !== key) out();
    return key;
  }

  /** A value that starts at `p` and ends on this line, followed by nothing but spaces and a comment. */
  private inlineValue(line: string, p: number, depth: number): unknown {
    const ch = line[p] as string;
    let value: unknown;
    let end: number;
    if (ch === '{' || ch === '[' || ch === '"' || ch === "'") {
      [value, end] = this.flowValue(line, p, depth);
    } else {
      // `-` may start a plain scalar when a non-space follows (`-1`).
      if (INDICATOR.has(ch) && !(ch === '-' && p + 1 < line.length && line[p + 1] !== ' ')) out();
      // A plain scalar, to the end of the line or to a comment; `: ` inside is a nested mapping.
      end = p;
      let last = p;
      for (; end < line.length; end++) {
        const c = line.charCodeAt(end);
        if (c === 58 /* : */ && (end + 1 === line.length || line.charCodeAt(end + 1) === 32)) out();
        if (c === 32) {
          if (line.charCodeAt(end + 1) === 35 /* # */) break;
        } else last = end;
      }
      value = this.plain(line.slice(p, last + 1));
    }
    while (line.charCodeAt(end) === 32) end++;
    if (end < line.length && !(line[end] === '#' && line[end - 1] === ' ')) out();
    return value;
  }

  /** A flow collection or quoted scalar starting at `p`, or (in a flow collection) a plain scalar. */
  private flowValue(line: string, p: number, depth: number): [unknown, number] {
    if (depth > MAX_DEPTH) out();
    const ch = line[p];
    if (ch === '{') return this.flowMap(line, p, depth);
    if (ch === '[') return this.flowSeq(line, p, depth);
    if (ch === '"') return this.doubleQuoted(line, p);
    if (ch === "'") return this.singleQuoted(line, p);
    const end = flowPlainEnd(line, p);
    return [this.plain(trimSpaces(line.slice(p, end))), end];
  }

  private flowMap(line: string, p: number, depth: number): [Json, number] {
    const obj: Json = {};
    p = skipSpaces(line, p + 1);
    if (line[p] === '}') return [obj, p + 1];
    for (;;) {
      const end = flowPlainEnd(line, p);
      if (line[end] !== ':' || line[end + 1] !== ' ') out();
      const key = this.key(trimSpaces(line.slice(p, end)));
      p = skipSpaces(line, end + 1);
      const [value, after] = this.flowValue(line, p, depth + 1);
      if (Object.hasOwn(obj, key)) out();
      obj[key] = value;
      p = skipSpaces(line, after);
      if (line[p] === '}') return [obj, p + 1];
      if (line[p] !== ',') out();
      p = skipSpaces(line, p + 1);
      if (line[p] === '}') out(); // a trailing comma
    }
  }

  private flowSeq(line: string, p: number, depth: number): [unknown[], number] {
    const arr: unknown[] = [];
    p = skipSpaces(line, p + 1);
    if (line[p] === ']') return [arr, p + 1];
    for (;;) {
      const [item, after] = this.flowValue(line, p, depth + 1);
      arr.push(item);
      p = skipSpaces(line, after);
      if (line[p] === ']') return [arr, p + 1];
      if (line[p] !== ',') out();
      p = skipSpaces(line, p + 1);
      if (line[p] === ']') out(); // a trailing comma
    }
  }

  /** A plain scalar's value by the core schema, its expressions restored. */
  private plain(text: string): unknown {
    const v = plainValue(text);
    return typeof v === 'string' ? this.restore(v, 'PLAIN') : v;
  }

  private singleQuoted(line: string, p: number): [string, number] {
    let value = '';
    let from = p + 1;
    for (;;) {
      const q = line.indexOf("'", from);
      if (q === -1) out(); // multi-line or unterminated
      value += line.slice(from, q);
      if (line[q + 1] !== "'") return [this.restore(value, 'QUOTE_SINGLE'), q + 1];
      value += "'";
      from = q + 2;
    }
  }

  private doubleQuoted(line: string, p: number): [string, number] {
    let value = '';
    let i = p + 1;
    for (;;) {
      if (i >= line.length) out(); // multi-line or unterminated
      const ch = line[i] as string;
      if (ch === '"') return [this.restore(value, 'QUOTE_DOUBLE'), i + 1];
      if (ch !== '\\') {
        value += ch;
        i++;
        continue;
      }
      const next = line[i + 1];
      if (next === undefined) out(); // an escaped line break
      const simple = ESCAPES[next];
      if (simple !== undefined) {
        value += simple;
        i += 2;
      } else if (next === 'x' || next === 'u' || next === 'U') {
        const length = next === 'x' ? 2 : next === 'u' ? 4 : 8;
        const hex = line.slice(i + 2, i + 2 + length);
        if (hex.length !== length || !/^[0-9a-fA-F]+$/.test(hex)) out();
        const code = parseInt(hex, 16);
        if (code > 0x10ffff) out();
        value += String.fromCodePoint(code);
        i += 2 + length;
      } else out();
    }
  }
}

const ESCAPES: Record<string, string> = {
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
function isDash(line: string, col: number): boolean {
  return line[col] === '-' && (col + 1 === line.length || line[col + 1] === ' ');
}

/**
 * When `line` holds an implicit key at `p` (a plain scalar, then `:` and a space or the end of the line),
 * the index of that `:`; else -1.
 */
function keyEnd(line: string, p: number): number {
  if (p >= line.length || INDICATOR.has(line[p] as string)) return -1;
  for (let i = p + 1; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 58 /* : */ && (i + 1 === line.length || line.charCodeAt(i + 1) === 32)) return i;
    if (c === 32 && line.charCodeAt(i + 1) === 35 /* # */) return -1;
  }
  return -1;
}

/** Without trailing spaces (only spaces: YAML's other white space, the tab, never gets here). */
function trimSpaces(s: string): string {
  let end = s.length;
  while (end > 0 && s.charCodeAt(end - 1) === 32) end--;
  return end === s.length ? s : s.slice(0, end);
}

function skipSpaces(line: string, p: number): number {
  while (line.charCodeAt(p) === 32) p++;
  return p;
}

/** Where a plain scalar starting at `p` inside a flow collection ends (a flow indicator, `: `, ` #`, EOL). */
function flowPlainEnd(line: string, p: number): number {
  const first = line[p];
  if (first === undefined || INDICATOR.has(first)) {
    // `-` may start a plain scalar when something other than a space follows (`-1`).
    if (!(first === '-' && line[p + 1] !== undefined && !' ,[]{}'.includes(line[p + 1] as string))) out();
  }
  let i = p;
  for (; i < line.length; i++) {
    const c = line[i] as string;
    if (c === ',' || c === '[' || c === ']' || c === '{' || c === '}') break;
    if (c === ':') {
      const n = line[i + 1];
      if (n === undefined || n === ' ' || n === ',' || n === '[' || n === ']' || n === '{' || n === '}')
        break;
    }
    if (c === ' ' && line[i + 1] === '#') break;
  }
  if (i === line.length) out(); // the collection goes on past this line
  if (line.slice(p, i).trim() === '') out();
  return i;
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
