/**
 * The fast path of the loader (load.ts): a playbook in the everyday subset of YAML, checked without positions,
 * and given up on at its first problem, which the full path then finds and positions.
 */
import { Checker, type LoadedPlaybook, type Locator, type PlaybookRules } from './checker.js';
import type { Diagnostic } from './diagnostics.js';
import { readSimpleYaml } from './fast-yaml.js';
import { protectExpressions, restoreScalar } from './protect.js';
import type { Playbook } from './schema.js';
import { unquotedWarning } from './unquoted.js';

/** Thrown by the checks of quickLoad at the first problem, which only the full path can position. */
const FOUND: unique symbol = Symbol('problem found');

/**
 * Makes quickLoad give up on the playbook, so that the full path checks it: what its Locator does at the
 * first problem, and what rules that can only vouch for valid data (generated-rules.ts) call instead of
 * returning a problem. Such rules are for quickLoad only.
 */
export function unsure(): never {
  throw FOUND;
}

const NO_POSITIONS: Locator = { position: unsure, linePos: unsure, stringOffset: unsure };

/**
 * The common case, fast: a playbook in the everyday subset of YAML (fast-yaml.ts) with nothing to report.
 * Its data is read without positions and checked; at the first diagnostic, or when the YAML is outside the
 * subset, this gives up (undefined) and the caller takes the full path (load.ts), which finds and positions
 * every diagnostic. The data and the checks are the same either way, so the outcome is too.
 */
export function quickLoad(source: string, file: string, rules: PlaybookRules): LoadedPlaybook | undefined {
  const safe = protectExpressions(source);
  const unquoted: Diagnostic[] = [];
  const data = readSimpleYaml(
    safe.text,
    (value, style) => restoreScalar(safe, value, style),
    (line, column, inFlow) => unquoted.push(unquotedWarning(file, line, column, inFlow)),
  );
  if (!data) return undefined;
  try {
    new Checker(file, rules, NO_POSITIONS).checkPlaybook(data);
  } catch (e) {
    if (e === FOUND) return undefined;
    throw e;
  }
  return { file, source, diagnostics: unquoted, playbook: data as unknown as Playbook };
}
