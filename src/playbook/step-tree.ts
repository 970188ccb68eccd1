/**
 * How a playbook's steps nest: each step with the step (forEach, parallel, onError) it is in. Apart from the
 * runner's plan, so that reading a stored run's playbook version (`runs show`) loads nothing else.
 */
import type { Seg } from './checker.js';
import type { Step } from './schema.js';

/** The lists of steps in `s` (a loop's body, a parallel's branches, its rescue), each with its path in `s`. */
function nestedAt(s: Step): [Seg[], Step[]][] {
  return [
    ...('forEach' in s && Array.isArray(s.forEach.steps)
      ? [[['forEach', 'steps'], s.forEach.steps as Step[]] as [Seg[], Step[]]]
      : []),
    ...('parallel' in s && Array.isArray(s.parallel)
      ? [[['parallel'], s.parallel as Step[]] as [Seg[], Step[]]]
      : []),
    ...(Array.isArray(s.onError) ? [[['onError'], s.onError as Step[]] as [Seg[], Step[]]] : []),
  ];
}

/** The lists of steps in `s`: a loop's body, a parallel's branches, its rescue. */
export function nestedLists(s: Step): Step[][] {
  return nestedAt(s).map(([, steps]) => steps);
}

/**
 * Calls `f` on each step of `list` and those nested in them, each after its parent, with the step it is in and its
 * path in the playbook (`at`: the list's own path, `['steps']` for a playbook's steps).
 */
export function eachStep(
  list: readonly Step[] | undefined,
  f: (s: Step, within: Step | undefined, path: Seg[]) => void,
  at: Seg[] = [],
): void {
  const add = (steps: unknown, path: Seg[], within?: Step): void => {
    if (!Array.isArray(steps)) return;
    (steps as Step[]).forEach((s, i) => {
      const here = [...path, i];
      f(s, within, here);
      for (const [sub, nested] of nestedAt(s)) add(nested, [...here, ...sub], s);
    });
  };
  add(list, at);
}
