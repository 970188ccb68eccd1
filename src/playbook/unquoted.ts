/**
 * The expressions of a document parsed by `yaml` from protected text (protect.ts): restored into it, and
 * found where only fleetbook's loader reads them. `with: { accountName: ${{ inputs.account }} }` is accepted,
 * but prettier, yaml-language-server and every other YAML tool see a syntax error there: `fleetbook validate`
 * warns about each one and `fleetbook fmt` quotes it, both finding them here.
 */
import type { Document, visit as Visit } from 'yaml';
import type { Diagnostic } from './diagnostics.js';
import { needsQuotes, restoreScalar, type Protected } from './protect.js';

/** A plain scalar to quote: its source range, whether it is in a flow collection, and its value. */
export interface Unquoted {
  start: number;
  end: number;
  inFlow: boolean;
  value: string;
}

/**
 * The plain scalars of `doc` (parsed from `p.text`, before its expressions are restored) that need quotes.
 * `visit` is the `yaml` package's, passed in so that this module does not load it.
 */
export function findUnquoted(doc: Document, p: Protected, visit: typeof Visit): Unquoted[] {
  if (!p.changed) return [];
  const found: Unquoted[] = [];
  visit(doc, {
    Scalar(_key, node, path) {
      if (node.type !== 'PLAIN' || typeof node.value !== 'string' || !node.range) return;
      if (!p.isProtected(node.value)) return;
      const inFlow = path.some((n) => (n as { flow?: boolean }).flow === true);
      const value = restoreScalar(p, node.value, 'PLAIN');
      if (needsQuotes(value, inFlow)) found.push({ start: node.range[0], end: node.range[1], value, inFlow });
    },
  });
  return found;
}

/**
 * Restores the expressions in the parsed document itself, before it becomes data. A placeholder inside a
 * quoted scalar stands for quoted source text, so YAML's escapes in it are undone (`''` in single quotes,
 * backslash escapes in double quotes); in a plain scalar the text is taken as it was.
 */
export function restoreDocument(doc: Document, p: Protected, visit: typeof Visit): void {
  if (!p.changed) return;
  visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value !== 'string') return;
      const value = restoreScalar(p, node.value, node.type);
      if (value !== node.value) node.value = value;
    },
  });
}

/** The warning `fleetbook validate` gives for one, at its 1-based line and column. */
export function unquotedWarning(file: string, line: number, column: number, inFlow: boolean): Diagnostic {
  const why = inFlow
    ? 'an unquoted `${{ }}` inside `{ }` or `[ ]`'
    : 'an unquoted `${{ }}` with `: ` or ` #` in it';
  return {
    file,
    line,
    column,
    rule: 'unquoted-expression',
    severity: 'warning',
    message: `${why} is not YAML to other tools (prettier, yaml-language-server): quote it ("\${{ ... }}") or run \`fleetbook fmt\``,
  };
}

/** A scalar's text quoted for YAML: double quotes, or single quotes when that needs no escapes. */
export function quoteScalar(value: string): string {
  // eslint-disable-next-line no-control-regex
  const printable = !/[\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff]/.test(value);
  if (printable && !/["\\]/.test(value)) return `"${value}"`;
  if (printable) return `'${value.replace(/'/g, "''")}'`;
  return JSON.stringify(value);
}
