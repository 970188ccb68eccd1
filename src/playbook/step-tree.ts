/**
 * How a playbook's steps nest: each step with the step (forEach, parallel, onError) it is in. Apart from the
 * runner's plan, so that reading a stored run's playbook version (`runs show`) loads nothing else.
 */
import type { Step } from './schema.js';

/** The lists of steps in `s`: a loop's body, a parallel's branches, its rescue. */
export function nestedLists(s: Step): Step[][] {
  return [
    ...('forEach' in s && Array.isArray(s.forEach.steps) ? [s.forEach.steps as Step[]] : []),
    ...('parallel' in s && Array.isArray(s.parallel) ? [s.parallel as Step[]] : []),
    ...(Array.isArray(s.onError) ? [s.onError as Step[]] : []),
  ];
}

/** Calls `f` on each step of `list` and those nested in them, each after its parent, with the step it is in. */
export function eachStep(list: readonly Step[] | undefined, f: (s: Step, within?: Step) => void): void {
  const add = (steps: unknown, within?: Step): void => {
    if (!Array.isArray(steps)) return;
    for (const s of steps as Step[]) {
      f(s, within);
      for (const nested of nestedLists(s)) add(nested, s);
    }
  };
  add(list);
}
