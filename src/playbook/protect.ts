/**
 * Expressions inside YAML flow collections: `with: { accountName: ${{ inputs.account }} }` is how people
 * write playbooks, but `{`, `}`, `,` and `: ` inside the expression break YAML's flow syntax. Before parsing,
 * each one-line `${{ ... }}` is replaced by a placeholder of exactly the same length made of characters YAML
 * treats as plain text, so that every line and column stays where it was; after parsing, the placeholders in
 * values, keys and messages are turned back into the expressions.
 */
import { findExpressions } from '../expressions/template.js';

const MARK = '\u00a7'; // §: plain text to YAML, and not something playbooks write.

export interface Protected {
  text: string;
  restore(s: string): string;
  /** True when at least one expression was replaced. */
  changed: boolean;
}

export function protectExpressions(source: string): Protected {
  if (!source.includes('${{')) return { text: source, restore: (s) => s, changed: false };
  const { spans } = findExpressions(source);
  const originals = new Map<string, string>();
  let text = '';
  let at = 0;
  let n = 0;
  for (const s of spans) {
    const original = source.slice(s.start, s.end);
    const tag = `${MARK}${(n++).toString(36)}${MARK}`;
    if (original.includes('\n') || original.length < tag.length || source.includes(MARK)) continue;
    const placeholder = tag.padEnd(original.length, MARK);
    originals.set(placeholder, original);
    text += source.slice(at, s.start) + placeholder;
    at = s.end;
  }
  if (!originals.size) return { text: source, restore: (s) => s, changed: false };
  text += source.slice(at);
  const pattern = new RegExp(`${MARK}[0-9a-z]+${MARK}+`, 'g');
  const restore = (s: string) => (s.includes(MARK) ? s.replace(pattern, (p) => originals.get(p) ?? p) : s);
  return { text, restore, changed: true };
}

/** Restores every string and key of `value` in place (it was just built by the parser, so nothing shares it). */
export function restoreDeep(value: unknown, restore: (s: string) => string): unknown {
  if (typeof value === 'string') return restore(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = restoreDeep(value[i], restore);
    return value;
  }
  if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      const v = restoreDeep(o[k], restore);
      const key = restore(k);
      if (key !== k) {
        delete o[k];
        Object.defineProperty(o, key, { value: v, enumerable: true, writable: true, configurable: true });
      } else o[k] = v;
    }
  }
  return value;
}
