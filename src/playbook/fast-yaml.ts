/**
 * A fast reader for the everyday subset of YAML that playbooks are written in, for the loader's common case:
 * a file that is valid. It returns exactly the data `yaml` would (`parseDocument(...).toJS()`, core schema,
 * after the expressions are restored), or `undefined` as soon as the text leaves the subset, and the loader
 * then takes the full path through `yaml`, which also positions every problem. It never reports anything.
 *
 * The subset: block mappings with plain or quoted keys, block sequences (compact mappings and sequences in
 * their items), literal and folded block scalars (clipped or stripped), and on one line each: plain scalars,
 * single- and double-quoted scalars, and flow mappings and sequences of those. Anything else (tabs, CR,
 * anchors, aliases, tags, multi-line plain or quoted scalars or flow collections, non-string or multi-line
 * keys, directives, several documents, duplicate keys, empty flow values, ...) gives `undefined`.
 * test/playbook checks it against `yaml` on generated and mutated input.
 */

import {
  BLOCK_STOP,
  DOUBLE_QUOTED_STOP,
  ESCAPES,
  find,
  flowPlainEnd,
  HEX,
  isDash,
  isIndicator,
  isQuote,
  keyEnd,
  NOT_SPACE,
  out,
  OUT_OF_SUBSET,
  plainValue,
  skipSpaces,
  trimSpaces,
} from './fast-yaml-lexical.js';
import { needsQuotes } from './protect.js';

type Json = Record<string, unknown>;

/** The scalar styles whose expressions are restored differently (see protect.ts). */
export type ScalarStyle = 'PLAIN' | 'QUOTE_SINGLE' | 'QUOTE_DOUBLE' | 'BLOCK_LITERAL' | 'BLOCK_FOLDED';

/** Turns the placeholders in a scalar back into the expressions (identity when nothing was protected). */
export type RestoreScalar = (value: string, style: ScalarStyle) => string;

/** Characters that rule the whole text out: tabs, CR, other controls, BOM, Unicode line breaks. */
// eslint-disable-next-line no-control-regex
const UNSUPPORTED = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\ufeff]/;

/** Deepest nesting read here; deeper documents go to `yaml`. */
const MAX_DEPTH = 64;

/** Longest line read here (`yaml` limits implicit keys to 1024 characters). */
const MAX_LINE = 1000;

/** The data of `text` (a protected playbook source), or undefined when it is not in the subset. */
/**
 * Told of each plain scalar whose expressions only fleetbook reads as YAML (protect.ts, needsQuotes), at its
 * 1-based line and column; without one, such a text is out of the subset.
 */
export type OnUnquoted = (line: number, column: number, inFlow: boolean) => void;

export function readSimpleYaml(
  text: string,
  restore: RestoreScalar,
  onUnquoted?: OnUnquoted,
): Json | undefined {
  if (UNSUPPORTED.test(text)) return undefined;
  try {
    return new Reader(text, restore, onUnquoted).document();
  } catch (e) {
    // Out of the subset, or nested deeper than the stack allows: the full parser decides.
    if (e === OUT_OF_SUBSET || e instanceof RangeError) return undefined;
    throw e;
  }
}

class Reader {
  private readonly lines: string[];
  /** Indentation of each line; -1 for a blank or comment-only line. */
  private readonly indent: Int32Array;
  /** After a block node: the first content line after it, or -1 at the end. */
  private after = -1;
  /** After an inline value: the index in its line just past it. */
  private end = 0;
  /** The line of the inline value being read. */
  private line = 0;

  constructor(
    text: string,
    private readonly restore: RestoreScalar,
    private readonly onUnquoted?: OnUnquoted,
  ) {
    this.lines = text.split('\n');
    this.indent = new Int32Array(this.lines.length);
    for (let i = 0; i < this.lines.length; i++) {
      const line = this.lines[i] as string;
      if (line.length > MAX_LINE) out();
      const n = line.search(NOT_SPACE);
      this.indent[i] = n === -1 || line.charCodeAt(n) === 35 /* # */ ? -1 : n;
    }
  }

  document(): Json | undefined {
    const first = this.next(0);
    if (first === -1 || this.indent[first] !== 0) return undefined;
    const line = this.lines[first] as string;
    // Directives and document markers.
    if (line[0] === '%' || line.startsWith('---') || line.startsWith('...')) return undefined;
    const map = this.map(first, 0, 0);
    if (this.after !== -1) out();
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
  private node(i: number, col: number, depth: number): unknown {
    if (depth > MAX_DEPTH) out();
    const line = this.lines[i] as string;
    if (isDash(line, col)) return this.seq(i, col, depth);
    if (keyEnd(line, col) !== -1) return this.map(i, col, depth);
    return out();
  }

  /**
   * A block mapping whose first key is at line `i`, column `col` (the line's indentation, or just after a
   * sequence item's `- `); the following keys are lines indented exactly `col`. Sets `after`.
   */
  private map(i: number, col: number, depth: number): Json {
    const obj: Json = {};
    for (;;) {
      const line = this.lines[i] as string;
      const colon = keyEnd(line, col);
      if (colon === -1) out();
      const key = isQuote(line.charCodeAt(col))
        ? this.quotedKey(line, col, colon)
        : this.key(trimSpaces(line.slice(col, colon)));
      const p = skipSpaces(line, colon + 1);
      let value: unknown;
      let after: number;
      if (p >= line.length || line.charCodeAt(p) === 35 /* # */) {
        const j = this.next(i + 1);
        if (j !== -1 && this.ind(j) > col) {
          value = this.node(j, this.ind(j), depth + 1);
          after = this.after;
        } else if (j !== -1 && this.ind(j) === col && isDash(this.lines[j] as string, col)) {
          value = this.seq(j, col, depth + 1);
          after = this.after;
        } else {
          value = null;
          after = j;
        }
      } else {
        const c = line.charCodeAt(p);
        if (c === 124 /* | */ || c === 62 /* > */) {
          value = this.blockScalar(i, p, col);
          after = this.after;
        } else {
          this.line = i;
          value = this.inlineValue(line, p, depth + 1);
          after = this.next(i + 1);
        }
        if (after !== -1 && this.ind(after) > col) out();
      }
      if (Object.hasOwn(obj, key)) out();
      obj[key] = value;
      if (after === -1 || this.ind(after) < col) {
        this.after = after;
        return obj;
      }
      if (this.ind(after) > col) out();
      i = after;
    }
  }

  /** A block sequence whose first `-` is at line `i`, column `col`; the next items are lines indented `col`. */
  private seq(i: number, col: number, depth: number): unknown[] {
    const arr: unknown[] = [];
    for (;;) {
      const line = this.lines[i] as string;
      if (!isDash(line, col)) out();
      const p = skipSpaces(line, col + 1);
      let item: unknown;
      let after: number;
      if (p >= line.length || line.charCodeAt(p) === 35 /* # */) {
        const j = this.next(i + 1);
        if (j === -1 || this.ind(j) <= col) out(); // an empty item
        item = this.node(j, this.ind(j), depth + 1);
        after = this.after;
      } else if (isDash(line, p)) {
        item = this.seq(i, p, depth + 1);
        after = this.after;
      } else if (keyEnd(line, p) !== -1) {
        item = this.map(i, p, depth + 1);
        after = this.after;
      } else if (line.charCodeAt(p) === 124 /* | */ || line.charCodeAt(p) === 62 /* > */) {
        item = this.blockScalar(i, p, col);
        after = this.after;
      } else {
        this.line = i;
        item = this.inlineValue(line, p, depth + 1);
        after = this.next(i + 1);
      }
      arr.push(item);
      if (after === -1 || this.ind(after) < col) {
        this.after = after;
        return arr;
      }
      if (this.ind(after) > col) out();
      i = after;
    }
  }

  /**
   * A literal (`|`) or folded (`>`) block scalar, clipped or stripped (`-`), whose header is at line `i`,
   * column `p`, in a node at column `col`: the lines after it up to the first one (not blank) indented `col`
   * or less. Sets `after`. Out of the subset: an indentation indicator, keeping (`+`), no content, a content
   * line less indented than the first, blank lines around the content longer than its indentation.
   */
  private blockScalar(i: number, p: number, col: number): string {
    const line = this.lines[i] as string;
    const folded = line.charCodeAt(p) === 62; /* > */
    let h = p + 1;
    const strip = line.charCodeAt(h) === 45; /* - */
    if (strip) h++;
    const rest = skipSpaces(line, h);
    if (rest < line.length && !(line.charCodeAt(rest) === 35 /* # */ && rest > h)) out();
    let end = i + 1;
    let first = -1;
    let last = -1;
    let indent = -1;
    for (; end < this.lines.length; end++) {
      const n = (this.lines[end] as string).search(NOT_SPACE);
      if (n === -1) continue;
      if (n <= col) break;
      if (indent === -1) [indent, first] = [n, end];
      else if (n < indent) out();
      last = end;
    }
    if (indent === -1) out();
    for (let k = i + 1; k < end; k++) {
      if ((k < first || k > last) && (this.lines[k] as string).length > indent) out();
    }
    let value = '\n'.repeat(first - i - 1);
    let sep = '';
    let moreIndented = false;
    for (let k = first; k <= last; k++) {
      const l = this.lines[k] as string;
      if (!folded) {
        value += sep + l.slice(indent);
        sep = '\n';
        continue;
      }
      // As `yaml` folds: lines join with a space, an empty line is a line break, more-indented lines keep theirs.
      const n = l.search(NOT_SPACE);
      if ((n === -1 ? l.length : n) > indent) {
        if (sep === ' ') sep = '\n';
        else if (!moreIndented && sep === '\n') sep = '\n\n';
        value += sep + l.slice(indent);
        sep = '\n';
        moreIndented = true;
      } else if (n === -1) {
        if (sep === '\n') value += '\n';
        else sep = '\n';
      } else {
        value += sep + l.slice(n);
        sep = ' ';
        moreIndented = false;
      }
    }
    if (!strip) value += '\n';
    this.after = this.next(end);
    return this.restore(value, folded ? 'BLOCK_FOLDED' : 'BLOCK_LITERAL');
  }

  /** A mapping key: a plain scalar that resolves to a string, without placeholders, `__proto__` or `<<`. */
  private key(text: string): string {
    const key = plainValue(text);
    if (typeof key !== 'string' || this.restore(key, 'PLAIN') !== key) out();
    return checkedKey(key);
  }

  /** A quoted mapping key from `p` to the `:` at `colon` (`'84799': '84800'`), without placeholders. */
  private quotedKey(line: string, p: number, colon: number): string {
    const text = line.slice(p, colon);
    if (this.restore(text, 'PLAIN') !== text) out();
    const key = this.flowValue(line, p, 0) as string;
    if (this.end !== colon) out();
    return checkedKey(key);
  }

  /** A value that starts at `p` and ends on this line, followed by nothing but spaces and a comment. */
  private inlineValue(line: string, p: number, depth: number): unknown {
    const ch = line.charCodeAt(p);
    let value: unknown;
    let end: number;
    if (ch === 123 /* { */ || ch === 91 /* [ */ || ch === 34 /* " */ || ch === 39 /* ' */) {
      value = this.flowValue(line, p, depth);
      end = this.end;
    } else {
      // `-` may start a plain scalar when a non-space follows (`-1`).
      if (isIndicator(ch) && !(ch === 45 /* - */ && p + 1 < line.length && line.charCodeAt(p + 1) !== 32))
        out();
      // A plain scalar, to the end of the line or to a comment; `: ` inside is a nested mapping.
      const stop = find(BLOCK_STOP, line, p);
      if (stop !== -1 && line.charCodeAt(stop) === 58 /* : */) out();
      end = stop === -1 ? line.length : stop;
      value = this.plain(trimSpaces(line.slice(p, end)), false, p);
    }
    end = skipSpaces(line, end);
    if (end < line.length && !(line.charCodeAt(end) === 35 /* # */ && line.charCodeAt(end - 1) === 32)) out();
    return value;
  }

  /** A flow collection or quoted scalar at `p`, or (in a flow collection) a plain scalar. Sets `end`. */
  private flowValue(line: string, p: number, depth: number): unknown {
    if (depth > MAX_DEPTH) out();
    const ch = line.charCodeAt(p);
    if (ch === 123 /* { */) return this.flowMap(line, p, depth);
    if (ch === 91 /* [ */) return this.flowSeq(line, p, depth);
    if (ch === 34 /* " */) return this.doubleQuoted(line, p);
    if (ch === 39 /* ' */) return this.singleQuoted(line, p);
    const end = flowPlainEnd(line, p);
    this.end = end;
    return this.plain(trimSpaces(line.slice(p, end)), true, p);
  }

  private flowMap(line: string, p: number, depth: number): Json {
    const obj: Json = {};
    p = skipSpaces(line, p + 1);
    if (line.charCodeAt(p) === 125 /* } */) {
      this.end = p + 1;
      return obj;
    }
    for (;;) {
      const quoted = isQuote(line.charCodeAt(p));
      const end = quoted ? keyEnd(line, p) : flowPlainEnd(line, p);
      if (line.charCodeAt(end) !== 58 /* : */ || line.charCodeAt(end + 1) !== 32) out();
      const key = quoted ? this.quotedKey(line, p, end) : this.key(trimSpaces(line.slice(p, end)));
      const value = this.flowValue(line, skipSpaces(line, end + 1), depth + 1);
      if (Object.hasOwn(obj, key)) out();
      obj[key] = value;
      p = skipSpaces(line, this.end);
      const c = line.charCodeAt(p);
      if (c === 125 /* } */) {
        this.end = p + 1;
        return obj;
      }
      if (c !== 44 /* , */) out();
      p = skipSpaces(line, p + 1);
      if (line.charCodeAt(p) === 125 /* } */) out(); // a trailing comma
    }
  }

  private flowSeq(line: string, p: number, depth: number): unknown[] {
    const arr: unknown[] = [];
    p = skipSpaces(line, p + 1);
    if (line.charCodeAt(p) === 93 /* ] */) {
      this.end = p + 1;
      return arr;
    }
    for (;;) {
      arr.push(this.flowValue(line, p, depth + 1));
      p = skipSpaces(line, this.end);
      const c = line.charCodeAt(p);
      if (c === 93 /* ] */) {
        this.end = p + 1;
        return arr;
      }
      if (c !== 44 /* , */) out();
      p = skipSpaces(line, p + 1);
      if (line.charCodeAt(p) === 93 /* ] */) out(); // a trailing comma
    }
  }

  /**
   * A plain scalar at column `p` of the current line: its value by the core schema, its expressions
   * restored. One that only fleetbook reads (protect.ts, needsQuotes) is reported to `onUnquoted`.
   */
  private plain(text: string, inFlow: boolean, p: number): unknown {
    const v = plainValue(text);
    if (typeof v !== 'string') return v;
    const restored = this.restore(v, 'PLAIN');
    if (restored !== v && needsQuotes(restored, inFlow)) {
      if (!this.onUnquoted) out();
      this.onUnquoted(this.line + 1, p + 1, inFlow);
    }
    return restored;
  }

  private singleQuoted(line: string, p: number): string {
    let value = '';
    let from = p + 1;
    for (;;) {
      const q = line.indexOf("'", from);
      if (q === -1) out(); // multi-line or unterminated
      value += line.slice(from, q);
      if (line.charCodeAt(q + 1) !== 39 /* ' */) {
        this.end = q + 1;
        return this.restore(value, 'QUOTE_SINGLE');
      }
      value += "'";
      from = q + 2;
    }
  }

  private doubleQuoted(line: string, p: number): string {
    let value = '';
    let i = p + 1;
    for (;;) {
      const stop = find(DOUBLE_QUOTED_STOP, line, i);
      if (stop === -1) out(); // multi-line or unterminated
      value += line.slice(i, stop);
      if (line.charCodeAt(stop) === 34 /* " */) {
        this.end = stop + 1;
        return this.restore(value, 'QUOTE_DOUBLE');
      }
      const next = line[stop + 1];
      if (next === undefined) out(); // an escaped line break
      const simple = ESCAPES[next];
      if (simple !== undefined) {
        value += simple;
        i = stop + 2;
      } else if (next === 'x' || next === 'u' || next === 'U') {
        const length = next === 'x' ? 2 : next === 'u' ? 4 : 8;
        const hex = line.slice(stop + 2, stop + 2 + length);
        if (hex.length !== length || !HEX.test(hex)) out();
        const code = parseInt(hex, 16);
        if (code > 0x10ffff) out();
        value += String.fromCodePoint(code);
        i = stop + 2 + length;
      } else out();
    }
  }
}

/** A key the reader leaves to `yaml`: empty, `__proto__` (an own property there), `<<` (a merge key). */
function checkedKey(key: string): string {
  if (key === '' || key === '__proto__' || key === '<<') out();
  return key;
}
