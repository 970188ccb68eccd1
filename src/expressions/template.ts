/**
 * `${{ ... }}` in strings: finding the expressions (with their offsets, for error positions) and rendering a
 * value whose strings may hold them.
 */
import { compile, type Compiled } from './cel.js';

export interface Span {
  /** The CEL source between the braces, trimmed. */
  source: string;
  /** Offset of the source's first character in the string. */
  offset: number;
  /** Offsets of `${{` and just past `}}`. */
  start: number;
  end: number;
}

/** The expressions of a string, in order. `}}` inside a CEL string literal does not end an expression. */
export function findExpressions(text: string): { spans: Span[]; unterminated?: number } {
  const spans: Span[] = [];
  let i = text.indexOf('${{');
  while (i !== -1) {
    let j = i + 3;
    let quote: string | undefined;
    for (; j < text.length; j++) {
      const c = text[j];
      if (quote) {
        if (c === '\\') j++;
        else if (c === quote) quote = undefined;
      } else if (c === '"' || c === "'") quote = c;
      else if (c === '}' && text[j + 1] === '}') break;
    }
    if (j >= text.length) return { spans, unterminated: i };
    const raw = text.slice(i + 3, j);
    const lead = raw.length - raw.trimStart().length;
    spans.push({ source: raw.trim(), offset: i + 3 + lead, start: i, end: j + 2 });
    i = text.indexOf('${{', j + 2);
  }
  return { spans };
}

export function hasExpression(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('${{');
  if (Array.isArray(value)) return value.some(hasExpression);
  if (value && typeof value === 'object') return Object.values(value).some(hasExpression);
  return false;
}

/** A string compiled once: a whole expression keeps its type, otherwise the parts are interpolated. */
export class Template {
  private readonly parts: (string | Compiled)[];
  private readonly whole?: Compiled;

  constructor(text: string, inLoop = false) {
    const { spans } = findExpressions(text);
    const first = spans[0];
    if (spans.length === 1 && first && first.start === 0 && first.end === text.length) {
      this.whole = compile(first.source, inLoop);
      this.parts = [];
      return;
    }
    this.parts = [];
    let at = 0;
    for (const s of spans) {
      if (s.start > at) this.parts.push(text.slice(at, s.start));
      this.parts.push(compile(s.source, inLoop));
      at = s.end;
    }
    if (at < text.length) this.parts.push(text.slice(at));
  }

  render(context: Record<string, unknown>): unknown {
    if (this.whole) return this.whole.evaluate(context);
    return this.parts.map((p) => (typeof p === 'string' ? p : stringify(p.evaluate(context)))).join('');
  }
}

function stringify(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return '';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

const templates = new Map<string, Template>();

/** `value` with every expression in its strings evaluated against `context`. */
export function render(value: unknown, context: Record<string, unknown>, inLoop = false): unknown {
  if (typeof value === 'string') {
    if (!value.includes('${{')) return value;
    const key = `${inLoop ? 'L' : 'B'}${value}`;
    let t = templates.get(key);
    if (!t) {
      t = new Template(value, inLoop);
      templates.set(key, t);
    }
    return t.render(context);
  }
  if (Array.isArray(value)) return value.map((v) => render(v, context, inLoop));
  if (value && typeof value === 'object')
    // fromEntries defines each key, `__proto__` included, as the data it is.
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, render(v, context, inLoop)]));
  return value;
}

/**
 * A rendered condition (`if`, `until`, `match`): true or false. Anything else is an error, not a truth: CEL has
 * no truthiness, and a string "false" that counted as true would run the step it was meant to guard.
 */
export function condition(v: unknown, what: string): boolean {
  if (typeof v === 'boolean') return v;
  throw new Error(
    `${what} gave ${given(v)}, not true or false: compare it (== "yes", > 0, size(...) > 0) to make a condition`,
  );
}

/** A value an expression gave, in a few words, for an error that says it is not of the kind wanted. */
export function given(v: unknown): string {
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') {
    const keys = Object.keys(v);
    return keys.length
      ? `a map (of ${keys.slice(0, 5).join(', ')}${keys.length > 5 ? ', …' : ''})`
      : 'an empty map';
  }
  return `${typeof v === 'number' || typeof v === 'bigint' ? 'the number' : 'the value'} ${String(v)}`;
}

/**
 * A filter over an event (`on.callback.if`, a wait's `match`): an event of another shape, whose members the
 * expression cannot read, is simply not one it selects.
 */
export function selectsEvent(expr: string, context: Record<string, unknown>, inLoop = false): boolean {
  try {
    return condition(render(expr, context, inLoop), '`match`');
  } catch {
    return false;
  }
}
