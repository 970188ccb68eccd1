/**
 * What an argument that takes one of a list of values (an `enum` in its schema: `log`'s `level`, `cacheMode`,
 * `currentState`) is given by an expression whose value `validate` can know before the run: a string or number
 * literal (`${{ 'warn' }}`, `${{ 3 }}`), either branch of a conditional (`c ? 'warn' : 'error'`), strings joined
 * with `+`, and a template of them with text around (`"very ${{ 'warn' }}"`, where a number is its text). A
 * plain literal is checked by the schema; these were not, and failed at run time. An expression that reads
 * anything gives what validate cannot know: a conditional's other branch is still checked, as the run may take
 * it.
 */
import { syntaxTree } from '../expressions/cel.js';
import type { Span } from '../expressions/template.js';

/** A value (a text or a number) an expression may give, and where in its source the part that gives it starts. */
interface Known {
  value: string | number;
  at: number;
}

/** The texts a node may give that are known; `all`, whether it gives no other. */
interface Values {
  known: Known[];
  all: boolean;
}

interface Node {
  op: string;
  args: unknown;
  start?: number;
  pos: number;
}

/** Past this many texts (conditionals joined), nothing is said. */
const MOST = 64;

const UNKNOWN: Values = { known: [], all: false };

function valuesOf(node: Node): Values {
  const args = node.args as unknown[];
  switch (node.op) {
    case 'value': {
      const v = node.args;
      const value = typeof v === 'bigint' ? Number(v) : v;
      return typeof value === 'string' || typeof value === 'number'
        ? { known: [{ value, at: node.start ?? node.pos }], all: true }
        : UNKNOWN;
    }
    case '?:': {
      const a = valuesOf(args[1] as Node);
      const b = valuesOf(args[2] as Node);
      return { known: [...a.known, ...b.known], all: a.all && b.all };
    }
    case '+': {
      const a = valuesOf(args[0] as Node);
      const b = valuesOf(args[1] as Node);
      if (!a.all || !b.all || a.known.length * b.known.length > MOST) return UNKNOWN;
      // Texts joined; the sum of numbers is left to the run.
      const texts = (v: Values) => v.known.every((k) => typeof k.value === 'string');
      if (!texts(a) || !texts(b)) return UNKNOWN;
      const at = node.start ?? node.pos;
      return {
        known: a.known.flatMap((x) => b.known.map((y) => ({ value: `${x.value}${y.value}`, at }))),
        all: true,
      };
    }
    default:
      return UNKNOWN;
  }
}

/** The values of one expression that parses; none known when it does not. */
function spanValues(span: Span, inLoop: boolean): Values {
  try {
    return valuesOf(syntaxTree(span.source, inLoop) as Node);
  } catch {
    return UNKNOWN;
  }
}

/**
 * The values of `text` (its expressions `spans`, each of which parses) that are not among `allowed`, each with
 * its offset in `text`: one whole expression, at the literal that gives it (a number is a number: `3` is not
 * `"3"`); a template, at its start, and only when every one of its expressions gives known values.
 */
export function notAllowed(
  text: string,
  spans: readonly Span[],
  allowed: readonly unknown[],
  inLoop: boolean,
): Known[] {
  const first = spans[0];
  if (spans.length === 1 && first && first.start === 0 && first.end === text.length) {
    const seen = new Set<string>();
    const key = (k: Known) => `${k.at} ${JSON.stringify(k.value)}`;
    return spanValues(first, inLoop)
      .known.filter((k) => !allowed.includes(k.value))
      .map((k) => ({ value: k.value, at: first.offset + k.at }))
      .filter((k) => !seen.has(key(k)) && seen.add(key(k)));
  }
  let texts = [''];
  let from = 0;
  for (const span of spans) {
    const v = spanValues(span, inLoop);
    if (!v.all || texts.length * v.known.length > MOST) return [];
    const before = text.slice(from, span.start);
    texts = texts.flatMap((t) => v.known.map((k) => `${t}${before}${k.value}`));
    from = span.end;
  }
  const after = text.slice(from);
  return [...new Set(texts.map((t) => t + after))]
    .filter((t) => !allowed.includes(t))
    .map((t) => ({ value: t, at: 0 }));
}
