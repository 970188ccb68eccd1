/** Problems found in a playbook, positioned `file:line:col`, printed like actionlint. */

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

/** Every rule, with what it checks (README, "Validation rules"). */
export const RULES = {
  yaml: 'The file is not valid YAML, or is not one mapping.',
  'duplicate-key': 'A mapping has the same key twice.',
  schema: 'A value is missing, unknown or of the wrong shape.',
  'unknown-action': 'A step uses an action that does not exist.',
  with: "A step's `with` does not fit the action's request schema.",
  'step-kind': 'A step has none, or more than one, of uses, forEach, parallel, set, fail, wait.',
  'duplicate-step-id': 'Two steps have the same id.',
  'step-reference': 'An expression refers to a step that does not run before it.',
  expression: 'An expression does not parse or type-check.',
  'undeclared-input': 'An expression uses an input that `inputs` does not declare.',
  'loop-variable': '`item` or `index` used outside a forEach body.',
  'retry-on': 'A retry names an error the action cannot return.',
  cron: 'A schedule has an invalid cron expression.',
  'schedule-frequency': 'A schedule fires more often than once a minute.',
  timezone: 'A schedule names an unknown time zone.',
  duration: 'A duration is not valid.',
  input: 'An input declaration is inconsistent (a default of the wrong type).',
  unreachable: 'A step can never run.',
} as const;
export type Rule = keyof typeof RULES;

/** `file:line:col: message [rule]`, the source line, and a caret under the column. */
export function formatText(d: Diagnostic, source: string | undefined): string {
  const head = `${d.file}:${d.line}:${d.column}: ${d.severity === 'warning' ? 'warning: ' : ''}${d.message} [${d.rule}]`;
  const line = source?.split(/\r?\n/)[d.line - 1];
  if (line === undefined) return head;
  const gutter = `${String(d.line).padStart(4)} | `;
  const caret = `${' '.repeat(gutter.length - 2)}| ${line.slice(0, d.column - 1).replace(/[^\t]/g, ' ')}^`;
  return `${head}\n${gutter}${line}\n${caret}`;
}

export function sortDiagnostics(ds: Diagnostic[]): Diagnostic[] {
  return ds.sort(
    (a, b) =>
      a.file.localeCompare(b.file) || a.line - b.line || a.column - b.column || a.rule.localeCompare(b.rule),
  );
}
