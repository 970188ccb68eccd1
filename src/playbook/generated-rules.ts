/**
 * The PlaybookRules of `fleetbook validate`, from what scripts/emit-rules.ts writes to dist/generated/ at build
 * time (api/generated.ts reads it): standalone ajv validators and the data the checks need from the action
 * catalog. Using them loads neither TypeBox nor ajv's compiler. They only ever say "valid" or "not sure"
 * (unsure(), for quickLoad only): then the full path (load.ts) finds and explains the problem.
 *
 * Absent or stale, they are not used.
 */
import type { InputProblem } from '../errors.js';
import { generated, type Validate } from '../api/generated.js';
import type { PlaybookRules } from './checker.js';
import { unsure } from './quick-load.js';

let cached: PlaybookRules | null | undefined;

/** The generated rules, or undefined when there are none or they are stale. */
export function generatedRules(): PlaybookRules | undefined {
  if (cached === undefined) cached = readRules() ?? null;
  return cached ?? undefined;
}

function readRules(): PlaybookRules | undefined {
  const g = generated();
  if (!g) return undefined;
  const { file } = g;
  // Anything they cannot vouch for makes quickLoad give up (unsure), and the full path says what it is.
  const run = (v: Validate | undefined, data: unknown): InputProblem[] => (v?.(data) ? [] : unsure());
  const argKeys = new Map(
    Object.entries(file.argKeys).map(([a, keys]) => [a, Object.fromEntries(keys.map((k) => [k, true]))]),
  );
  const sets = file.selectors.sets.map((s) => new Set(s));
  const { step, device } = file.selectors;
  const confirms = new Set(file.confirms);
  const completions = new Set(file.completions);
  const polls = new Set(file.polls);
  const fine = (table: Record<string, number>, action: string | undefined, selector: string) => {
    const i = Object.hasOwn(table, action ?? '') ? table[action ?? ''] : undefined;
    return i !== undefined && sets[i]?.has(selector) ? undefined : unsure();
  };
  return {
    actions: file.actions,
    top: (playbook) => run(g.validator('top'), playbook),
    step: (kind, data) => run(g.validator(`step:${kind}`), data),
    args(action, data) {
      const v = g.validator(`with:${action}`);
      // No validator: the action has no argument schema, and takes anything (as in load.ts).
      return v === undefined ? [] : run(v, data);
    },
    argKeys: (action) => argKeys.get(action),
    stepSelectorProblem: (action, selector) => fine(step, action, selector),
    deviceSelectorProblem: (action, type) => fine(device, action, type),
    confirmProblem: (action) => (confirms.has(action) ? undefined : unsure()),
    completionProblem: (action) => (completions.has(action) ? undefined : unsure()),
    pollProblem: (action) => (polls.has(action) ? undefined : unsure()),
  };
}
