/**
 * How a playbook's steps nest: each step with the step (forEach, parallel, onError) it is in. Apart from the
 * runner's plan, so that reading a stored run's playbook version (`runs show`) loads nothing else.
 */
import type { Step } from './schema.js';

/** Calls `f` on each step of `list` and those nested in them, each after its parent, with the step it is in. */
export function eachStep(list: readonly Step[] | undefined, f: (s: Step, within?: Step) => void): void {
  const add = (steps: unknown, within?: Step): void => {
    if (!Array.isArray(steps)) return;
    for (const s of steps as Step[]) {
      f(s, within);
      if ('forEach' in s) add(s.forEach.steps, s);
      if ('parallel' in s) add(s.parallel, s);
      if (Array.isArray(s.onError)) add(s.onError, s);
    }
  };
  add(list);
}
