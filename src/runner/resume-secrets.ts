/**
 * The secrets a resumed run can still read, from its checkpoints: a step it finished is restored, not run again
 * (runner.ts `restore`), so a secret only such steps read is not needed to go on. What a resumed run evaluates
 * again is counted: the `if` of each step with no checkpoint, a finished `set`'s values, the items of a `forEach`
 * and the steps of its iterations not finished, the branches of a `parallel`, the rescue steps of a step that
 * failed, every step not finished (one in flight too, but for its `if`, which held when it began), `finally`,
 * `vars` and the rest of the playbook but its triggers; not a step whose skip by `if` is checkpointed
 * (step-marks.ts), which stays skipped. Where the
 * checkpoints cannot tell (a forEach not finished: how many iterations are left), all of it is counted.
 */
import { readsIn } from '../expressions/reads.js';
import type { Step } from '../playbook/schema.js';
import type { Plan } from './plan.js';
import { resumable, skippedByIf } from './step-marks.js';
import { unfinished, type Checkpoint } from './types.js';

/**
 * The secrets of `plan.secrets` that a run with these checkpoints can still read: all of them for a run that
 * has none (it never executed).
 */
export function secretsStillRead(plan: Plan, checkpoints: ReadonlyMap<string, unknown>): Set<string> {
  if (!checkpoints.size) return plan.secrets;
  const read = new Set<string>();
  // The triggers chose the run before it was stored; the rest (vars, concurrency.key) is evaluated again.
  const { on: _on, steps, finally: last, ...rest } = plan.playbook;
  secretsIn(rest, read);
  // As the run resumes from them: a step only begun runs again, and a skip by `if` outside a loop stands.
  const cps = resumable(checkpoints);
  walk(steps, '', cps, read);
  walk(last, '', cps, read);
  // Each only as the plan counts it: a secret whose presence an expression tests is not needed.
  return new Set([...read].filter((name) => plan.secrets.has(name)));
}

/** Adds the secrets of the steps of `list` (their checkpoints under `prefix`) that a resumed run evaluates. */
function walk(
  list: readonly Step[] | undefined,
  prefix: string,
  cps: ReadonlyMap<string, Checkpoint>,
  read: Set<string>,
): void {
  for (const step of list ?? []) {
    const cp = cps.get(`${prefix}${step.id}`);
    // Skipped by its `if`, it stays skipped: nothing of it is evaluated again.
    if (skippedByIf(cp)) continue;
    const finished = cp !== undefined && !unfinished(cp);
    const entered = 'forEach' in step || 'parallel' in step;
    // One with a checkpoint began (its `if` held then): it goes on, or is restored, without its `if`.
    const { if: cond, ...unless } = step;
    if (!cp) secretsIn(cond, read);
    if (!finished && !entered) {
      secretsIn(unless, read);
      continue;
    }
    const { onError, ...own } = unless as Step & { forEach?: unknown; parallel?: unknown };
    if (!entered) {
      // Variables are not checkpointed: a `set` is evaluated again.
      if ('set' in step) secretsIn(step.set, read);
    } else {
      const { forEach: _f, parallel: _p, ...rest } = own;
      secretsIn(rest, read);
    }
    if ('forEach' in step) {
      const { steps: inner, ...fe } = step.forEach;
      secretsIn(fe, read);
      const n = finished ? iterations(cp) : undefined;
      if (n === undefined) secretsIn(inner, read);
      else for (let i = 0; i < n; i++) walk(inner, `${prefix}${step.id}[${i}]/`, cps, read);
    }
    if ('parallel' in step) walk(step.parallel, prefix, cps, read);
    // A failed step's rescue steps run again after its failure is restored; a succeeded one's never ran.
    const failed = !finished || cp.status === 'failed' || cp.status === 'cancelled';
    if (Array.isArray(onError) && failed) walk(onError as Step[], prefix, cps, read);
  }
}

/** How many iterations a finished forEach went over (its output), if its checkpoint says. */
function iterations(cp: Checkpoint): number | undefined {
  const n = (cp.output as { iterations?: unknown } | null | undefined)?.iterations;
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : undefined;
}

/** Adds the secrets the expressions in `v` read by name (as runner/plan.ts finds them). */
function secretsIn(v: unknown, read: Set<string>): void {
  readsIn(v, (r) => {
    for (const name of r.secrets) read.add(name);
  });
}
