/**
 * A chunk of a step's items as both stores keep it (step_items): its runs of one kind, `[kind, ids]`, in
 * runs_json; and, for a list of devices sent again (runner/strategies/stored-retries.ts), the error each run's
 * devices were sent again for, in a column of its own, errors_json: a JSON array in the order of the runs. It is
 * NULL for every other list (a listing's pages, a ledger query's devices).
 */
import type { ItemRuns } from './store.js';

/** The columns of a chunk. */
export function itemColumns(runs: ItemRuns): { runsJson: string; errorsJson: string | null } {
  if (!runs.some((r) => r[2] !== undefined)) return { runsJson: JSON.stringify(runs), errorsJson: null };
  return {
    runsJson: JSON.stringify(runs.map(([kind, ids]) => [kind, ids])),
    errorsJson: JSON.stringify(runs.map((r) => r[2] ?? null)),
  };
}

/**
 * A chunk read back from its columns. A list of devices sent again that a version before errors_json wrote (the
 * error in each run's kind, `["imei","SVC CACHE UNAVAILABLE"]`) is never read: only the step that writes its lists
 * reads them, in the same execution, after removing those an earlier one wrote (stored-retries.ts), and the store
 * drops them as the run ends.
 */
export function itemRuns(runsJson: string, errorsJson: string | null): ItemRuns {
  const runs = JSON.parse(runsJson) as ItemRuns;
  if (errorsJson !== null) {
    const errors = JSON.parse(errorsJson) as (string | null)[];
    runs.forEach((r, i) => {
      const error = errors[i];
      if (typeof error === 'string') r[2] = error;
    });
  }
  return runs;
}
