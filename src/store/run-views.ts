/**
 * A stored run as it is shown: its summary with every step of its playbook version, and its entry in a list of
 * runs. One place for both, so that `runs show --json` and `GET /runs/{id}` (and the console's run page), and
 * `runs list --json` and `GET /runs`, answer alike. It loads neither the runner nor any schema.
 */
import type { Playbook } from '../playbook/schema.js';
import { eachStep } from '../playbook/step-tree.js';
import { redactRun } from '../util/secrets.js';
import {
  emptyCounts,
  type DeviceCounts,
  type RunRecord,
  type RunSummary,
  type StepSummary,
  type Store,
} from './store.js';

/**
 * `steps`, a run's, with every step of its playbook `pb`, in the playbook's order (`steps`, then `finally`, each
 * nested step after the one it is in): a step the run never entered is `unreached`, with `within` as a step
 * entered has it, no attempt, no call and no device. A step `steps` has that `pb` does not name stays, last.
 */
export function everyStep(
  steps: readonly StepSummary[],
  pb: Pick<Playbook, 'steps' | 'finally'>,
): StepSummary[] {
  const recorded = new Map(steps.map((s) => [s.id, s]));
  const placed = new Set<string>();
  const out: StepSummary[] = [];
  for (const list of [pb.steps, pb.finally])
    eachStep(list, (s, within) => {
      if (typeof s.id !== 'string' || placed.has(s.id)) return;
      placed.add(s.id);
      out.push(
        recorded.get(s.id) ?? {
          id: s.id,
          ...(within ? { within: within.id } : {}),
          status: 'unreached',
          attempts: 0,
          calls: 0,
          devices: emptyCounts(),
        },
      );
    });
  return [...out, ...steps.filter((s) => !placed.has(s.id))];
}

/**
 * The summary of `run` as shown, with every step of the playbook version it ran (everyStep); undefined while it
 * has not ended. One whose version the store does not keep (a run older than versions) lists the steps it entered.
 * So does a run cancelled with no step listed: one `fleetbook runs cancel` ended while no process held it, which
 * knows nothing of the steps its dead process ran, and which `unreached` would misstate.
 */
export async function shownSummary(store: Store, run: RunRecord): Promise<RunSummary | undefined> {
  const s = run.summary;
  const version = run.version ?? s?.version;
  if (!s || version === undefined || (s.status === 'cancelled' && !s.steps.length)) return s;
  const definition = await store.playbookVersion(version);
  if (definition === undefined) return s;
  try {
    return { ...s, steps: everyStep(s.steps, JSON.parse(definition) as Playbook) };
  } catch {
    // A definition fleetbook did not write: the steps the run entered are still true.
    return s;
  }
}

/**
 * A run in a list of runs (`runs list --json`, `GET /runs`): the run as the store keeps it, its inputs and event
 * masked (redactRun), without its summary but for its device counts, once it has ended.
 */
export type RunListEntry = Omit<RunRecord, 'summary'> & { devices?: DeviceCounts };

export function runListEntry({ summary, ...run }: RunRecord): RunListEntry {
  return { ...redactRun(run), ...(summary ? { devices: summary.devices } : {}) };
}
