/** Problems found in a playbook, positioned `file:line:col`, printed like actionlint. */
import { compareText } from '../util/text-order.js';

export type Severity = 'error' | 'warning';

export interface Diagnostic {
  file: string;
  /** 1-based. */
  line: number;
  /** 1-based. */
  column: number;
  message: string;
  /** The rule that found it, e.g. `unknown-action`; stable, for filtering and docs. */
  rule: string;
  severity: Severity;
}

/** Every rule, with what it checks (docs/playbook.md, "Validation rules"). */
export const RULES = {
  yaml: 'The file cannot be read, is not UTF-8, is not valid YAML, or is not one mapping.',
  'duplicate-key': 'A mapping has the same key twice.',
  schema: 'A value is missing, unknown or of the wrong shape.',
  'unknown-action': 'A step uses an action that does not exist.',
  with: "A step's `with` does not fit the action's request schema.",
  'step-kind': 'A step has none, or more than one, of uses, forEach, parallel, set, fail, wait.',
  'duplicate-step-id': 'Two steps have the same id.',
  'duplicate-name':
    "Two playbooks checked together (a directory, the daemon's playbooks) have the same `name`.",
  'step-reference': 'An expression refers to a step that does not run before it.',
  expression:
    'An expression does not parse or type-check, or reads a variable that has no value where it is rendered (a concurrency key, a callback filter).',
  'undeclared-input': 'An expression uses an input that `inputs` does not declare.',
  member:
    "An expression reads a member its value cannot have: of the event of the `on.callback` service (or of none; in an entry's `if`, of that entry's service), a step output (or, after a forEach, the output of a step inside it: each iteration had its own), an input, a var, a variable `env` withholds.",
  type: 'An expression applies an operator to values of types that do not mix (a string plus an int), or compares a member whose schema lists its values with a literal none of them (never true, or always).',
  'loop-variable': '`item` or `index` used outside a forEach body.',
  'retry-on': 'A retry names an error the action cannot return.',
  'ledger-playbook':
    'A ledger.query `playbook` names none of the playbooks checked together (a directory, several files): the query finds no run of it. One file checked alone is not judged.',
  'error-type':
    'A ledger.query `error` names a type fleetbook never records (a misspelling, a vendor prefix in place of SVC): the query finds no device with it.',
  'items-kind':
    '`items: { kind }` on a step whose action is not a device listing (devices.list, groups.get), or an unknown identifier kind.',
  'step-items':
    'An expression reads `steps.<id>.items` of a step that never has per-device items (an engine action other than `ledger.query`, a call that names no devices, a control step): always an empty list. Or `report.write { step }` names a step that records no per-device results (a listing, a ledger query, a call that names no devices): a report with no rows. Or reads, after a forEach, items of a step inside it that are not known there: those of a listing or ledger query (each iteration found its own), any after a forEach inside another.',
  'listing-records':
    "An expression reads a device listing's whole records (`steps.<id>.output.devices`), held in memory for every listed device: use `steps.<id>.items`.",
  confirm: '`confirm` on a step whose action is not carried out later (only device-state actions are).',
  completion:
    '`wait: { for: completion }` on a step whose result does not come later (only location reports come later).',
  poll: 'A wait polls an action that changes things, or no API call: a poll can only read.',
  cron: 'A schedule has an invalid cron expression.',
  'schedule-frequency': 'A schedule fires more often than once a minute.',
  'schedule-duplicate':
    'A playbook gives the same schedule (expression and time zone) twice: it fires once. Or two schedules written differently fire at the same times in the same time zone (`@daily` and `0 0 * * *`): two runs at each.',
  timezone: 'A schedule names an unknown time zone.',
  duration: 'A duration is not valid.',
  input:
    'An input declaration is inconsistent (a default of the wrong type), or is required with no default where a schedule or a callback starts runs, which get no inputs.',
  unreachable: 'A step can never run.',
  'shared-vars':
    'A `set` in steps that run side by side (a forEach with concurrency above 1, a parallel step): they share `vars`.',
  'report-path':
    'A report.write path is absolute or climbs out of the reports directory (a warning when it starts with reports/).',
  'webhook-header':
    'A notify.webhook header that fleetbook sets itself: Host, Content-Length, hop-by-hop headers.',
  'unquoted-expression':
    'An unquoted `${{ }}` that only fleetbook reads as YAML (inside `{ }` or `[ ]`, or holding `: ` or ` #`): quote it, or run `fleetbook fmt`.',
} as const;
export type Rule = keyof typeof RULES;

/** Source lines up to this long are printed whole; a longer one is cut to this much around the column. */
const EXCERPT = 120;
/** Of an excerpt, how much comes before the column (when the line has that much). */
const BEFORE = 60;

/**
 * `file:line:col: message [rule]`, the source line, and a caret under the column. A long line (a minified
 * playbook, a huge value) is cut to an excerpt around the column, marked `…` where cut, the caret still under
 * the character it points at.
 */
export function formatText(d: Diagnostic, source: string | undefined): string {
  const head = `${d.file}:${d.line}:${d.column}: ${d.severity === 'warning' ? 'warning: ' : ''}${d.message} [${d.rule}]`;
  const line = source === undefined ? undefined : lineOf(source, d.line);
  if (line === undefined) return head;
  const { text, caret } = excerpt(line, d.column - 1);
  const gutter = `${String(d.line).padStart(4)} | `;
  const under = `${' '.repeat(gutter.length - 2)}| ${text.slice(0, caret).replace(/[^\t]/g, ' ')}^`;
  return `${head}\n${gutter}${text}\n${under}`;
}

/** Line `n` (1-based) of `source`, without splitting the whole file. */
function lineOf(source: string, n: number): string | undefined {
  let start = 0;
  for (let i = 1; i < n; i++) {
    const next = source.indexOf('\n', start);
    if (next === -1) return undefined;
    start = next + 1;
  }
  const end = source.indexOf('\n', start);
  const line = end === -1 ? source.slice(start) : source.slice(start, end);
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}

/** At most EXCERPT characters of `line` around index `at`, and where `at` falls in what is returned. */
export function excerpt(line: string, at: number): { text: string; caret: number } {
  if (line.length <= EXCERPT) return { text: line, caret: at };
  const col = Math.max(0, Math.min(at, line.length));
  let start = Math.max(0, Math.min(col - BEFORE, line.length - EXCERPT));
  let end = Math.min(line.length, start + EXCERPT);
  // Never half of a surrogate pair at either edge.
  if (start > 0 && isLowSurrogate(line.charCodeAt(start))) start++;
  if (end < line.length && isLowSurrogate(line.charCodeAt(end))) end--;
  const before = start > 0 ? '…' : '';
  const after = end < line.length ? '…' : '';
  return { text: `${before}${line.slice(start, end)}${after}`, caret: before.length + col - start };
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

/** Longest run of text without a space a message echoes whole (a key, a value, a name from the playbook). */
const RUN = 60;
const LONG_RUN = new RegExp(`\\S{${RUN + 1},}`, 'g');
/** Longest message. */
const MESSAGE = 400;

/**
 * A message with what it echoes from the playbook bounded: each run of more than RUN characters without a
 * space is cut to its start and end, and the whole to MESSAGE characters.
 */
export function boundMessage(message: string): string {
  const runs = message.replace(
    LONG_RUN,
    (r) => `${cut(r, 0, 40)}…${cut(r, r.length - 12, r.length)} (${r.length} characters)`,
  );
  return runs.length <= MESSAGE ? runs : `${cut(runs, 0, MESSAGE - 1)}…`;
}

/** `s.slice(start, end)`, moved inwards where an edge would split a surrogate pair. */
function cut(s: string, start: number, end: number): string {
  if (start > 0 && isLowSurrogate(s.charCodeAt(start))) start++;
  if (end < s.length && isLowSurrogate(s.charCodeAt(end))) end--;
  return s.slice(start, end);
}

export function sortDiagnostics(ds: Diagnostic[]): Diagnostic[] {
  return ds.sort(
    (a, b) =>
      compareText(a.file, b.file) || a.line - b.line || a.column - b.column || compareText(a.rule, b.rule),
  );
}
