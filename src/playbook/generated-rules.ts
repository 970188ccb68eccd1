/**
 * The PlaybookRules of `fleetbook validate`, from the files scripts/emit-rules.ts writes to
 * dist/playbook/generated/ at build time: standalone ajv validators and the data the checks need from the
 * action catalog. Using them loads neither TypeBox nor ajv's compiler. They only ever say "valid" or "not
 * sure" (unsure(), for quickLoad only): then the full path (load.ts) finds and explains the problem.
 *
 * Absent (running from src/, or a build without the step) or stale (dist/ rebuilt since: the fingerprint of
 * the modules they were made from differs), they are not used.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { InputProblem } from '../errors.js';
import { unsure, type PlaybookRules } from './checker.js';

/** The modules of dist/ the generated rules are made from (with what they import). */
export const RULES_SOURCES = [
  'playbook/schema.js',
  'playbook/step-kinds.js',
  'api/catalog.js',
  'api/validate.js',
  'actions/engine.js',
  'actions/selectors.js',
  'api/device-errors.js',
  'playbook/generated-rules.js',
] as const;

/** dist/playbook/generated/rules.json. */
export interface GeneratedRulesFile {
  note: string;
  /** RULES_SOURCES and what they import, relative to dist/. */
  inputs: string[];
  fingerprint: string;
  actions: string[];
  /** The argument names of each action that has an argument schema. */
  argKeys: Record<string, string[]>;
  /** Validator name (`top`, `step:<kind>`, `with:<action>`) → file in generated/. */
  validators: Record<string, string>;
  /** Selectors known to be fine: `step[action]` and `device[action]` index `sets` ('' is no action). */
  selectors: { sets: string[][]; step: Record<string, number>; device: Record<string, number> };
}

/** SHA-256 of the files' contents, in order. */
export function fingerprint(files: readonly string[]): string {
  const hash = createHash('sha256');
  for (const f of files) hash.update(readFileSync(f)).update('\0');
  return hash.digest('hex');
}

type Validate = (data: unknown) => boolean;

let cached: PlaybookRules | null | undefined;

/** The generated rules, or undefined when there are none or they are stale. */
export function generatedRules(): PlaybookRules | undefined {
  if (cached === undefined) cached = readRules() ?? null;
  return cached ?? undefined;
}

function readRules(): PlaybookRules | undefined {
  const dir = new URL('./generated/', import.meta.url);
  const dist = new URL('../', import.meta.url);
  let file: GeneratedRulesFile;
  try {
    file = JSON.parse(readFileSync(new URL('rules.json', dir), 'utf8')) as GeneratedRulesFile;
    if (fingerprint(file.inputs.map((f) => fileURLToPath(new URL(f, dist)))) !== file.fingerprint)
      return undefined;
  } catch {
    return undefined;
  }
  const require = createRequire(dir);
  const load = (name: string): Validate | undefined => {
    const f = file.validators[name];
    return f === undefined ? undefined : (require(`./${f}`) as Validate);
  };
  /** The validators by step kind and by action, loaded as first used (null: none). */
  const steps = new Map<string, Validate | null>();
  const args = new Map<string, Validate | null>();
  let top: Validate | undefined;
  // Anything they cannot vouch for makes quickLoad give up (unsure), and the full path says what it is.
  const run = (v: Validate | null | undefined, data: unknown): InputProblem[] => (v?.(data) ? [] : unsure());
  const argKeys = new Map(
    Object.entries(file.argKeys).map(([a, keys]) => [a, Object.fromEntries(keys.map((k) => [k, true]))]),
  );
  const sets = file.selectors.sets.map((s) => new Set(s));
  const { step, device } = file.selectors;
  const fine = (table: Record<string, number>, action: string | undefined, selector: string) => {
    const i = Object.hasOwn(table, action ?? '') ? table[action ?? ''] : undefined;
    return i !== undefined && sets[i]?.has(selector) ? undefined : unsure();
  };
  return {
    actions: file.actions,
    top: (playbook) => run((top ??= load('top')), playbook),
    step(kind, data) {
      let v = steps.get(kind);
      if (v === undefined) steps.set(kind, (v = load(`step:${kind}`) ?? null));
      return run(v, data);
    },
    args(action, data) {
      let v = args.get(action);
      if (v === undefined) args.set(action, (v = load(`with:${action}`) ?? null));
      // No validator: the action has no argument schema, and takes anything (as in load.ts).
      return v === null ? [] : run(v, data);
    },
    argKeys: (action) => argKeys.get(action),
    stepSelectorProblem: (action, selector) => fine(step, action, selector),
    deviceSelectorProblem: (action, type) => fine(device, action, type),
  };
}
