/**
 * Expressions inside YAML flow collections: `with: { accountName: ${{ inputs.account }} }` is how people
 * write playbooks, but `{`, `}`, `,` and `: ` inside the expression break YAML's flow syntax. Before parsing,
 * each one-line `${{ ... }}` is replaced by a placeholder of exactly the same length made of characters YAML
 * treats as plain text, so that every line and column stays where it was; after parsing, the placeholders in
 * values, keys and messages are turned back into the expressions.
 */
import { findExpressions } from '../expressions/template.js';

/** Placeholder characters: plain text to YAML. The first one the source does not contain is used. */
const MARKS = ['\u00a7', '\u00b6', '\u00a4', '\u00b5', '\u00de'];

export interface Protected {
  text: string;
  restore(s: string): string;
  /** `restore`, with each original text passed through `unescape` first. */
  restoreWith(s: string, unescape: (original: string) => string): string;
  isProtected(s: string): boolean;
  /** True when at least one expression was replaced. */
  changed: boolean;
}

const unchanged = (source: string): Protected => ({
  text: source,
  restore: (s) => s,
  restoreWith: (s) => s,
  isProtected: () => false,
  changed: false,
});

export function protectExpressions(source: string): Protected {
  const MARK = MARKS.find((m) => !source.includes(m));
  if (!source.includes('${{') || MARK === undefined) return unchanged(source);
  const originals = new Map<string, string>();
  let text = '';
  let at = 0;
  let n = 0;
  // Line by line: an unterminated `${{` (in a comment, say) must not swallow the expressions after it. Only the
  // lines that hold one are looked at: most lines of a playbook do not.
  for (let i = source.indexOf('${{'); i !== -1;) {
    const lineStart = source.lastIndexOf('\n', i) + 1;
    const newline = source.indexOf('\n', i);
    const lineEnd = newline === -1 ? source.length : newline;
    const line = source.slice(lineStart, lineEnd);
    for (const s of findExpressions(line).spans) {
      const original = line.slice(s.start, s.end);
      const tag = `${MARK}${(n++).toString(36)}${MARK}`;
      if (original.length < tag.length) continue;
      const placeholder = tag.padEnd(original.length, MARK);
      originals.set(placeholder, original);
      text += source.slice(at, lineStart + s.start) + placeholder;
      at = lineStart + s.end;
    }
    i = source.indexOf('${{', lineEnd);
  }
  if (!originals.size) return unchanged(source);
  text += source.slice(at);
  const pattern = new RegExp(`${MARK}[0-9a-z]+${MARK}+`, 'g');
  const restoreWith = (s: string, unescape: (o: string) => string) => {
    if (!s.includes(MARK)) return s;
    // The common case: a value that is one whole expression.
    const whole = originals.get(s);
    if (whole !== undefined) return unescape(whole);
    return s.replace(pattern, (p) => (originals.has(p) ? unescape(originals.get(p) as string) : p));
  };
  return {
    text,
    restore: (s) => restoreWith(s, (o) => o),
    restoreWith,
    isProtected: (s) => s.includes(MARK),
    changed: true,
  };
}

/**
 * One string scalar's value with its expressions restored. A placeholder inside a quoted scalar stands for
 * quoted source text, so YAML's escapes in it are undone (`''` in single quotes, backslash escapes in double
 * quotes); in a plain scalar the text is taken as it was.
 */
export function restoreScalar(p: Protected, value: string, style: string | undefined): string {
  if (!p.changed || !p.isProtected(value)) return value;
  if (style === 'QUOTE_SINGLE') return p.restoreWith(value, (t) => t.replace(/''/g, "'"));
  if (style === 'QUOTE_DOUBLE') return p.restoreWith(value, unescapeDouble);
  return p.restore(value);
}

function unescapeDouble(t: string): string {
  try {
    return JSON.parse(`"${t.replace(/\\\//g, '/')}"`) as string;
  } catch {
    return t;
  }
}

/**
 * Whether a plain (unquoted) scalar, its expressions restored, is fleetbook's YAML only: any `${{ }}` inside a
 * flow collection (`{`, `}` and `,` are flow indicators there), and in block context an expression holding
 * `: ` or ` #`, which other YAML tools read as a mapping or a comment. Quoted, it is YAML to every tool.
 */
export function needsQuotes(text: string, inFlow: boolean): boolean {
  if (!text.includes('${{')) return false;
  if (inFlow) return true;
  return findExpressions(text).spans.some((s) => /: | #/.test(text.slice(s.start, s.end)));
}
