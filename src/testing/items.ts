/**
 * A step's items after a case's run (`expect.steps.<id>.items`), as `steps.<id>.items` gives them to the
 * playbook: each device's latest result in a step that acts on devices, read from the ledger (in a dry run, the
 * devices a planned step would have acted on, `skipped` with DRY RUN), in the order of the device ids. The
 * devices a listing or `ledger.query` found are not kept once the run ends: a test checks them in the step's
 * output, or in the items of the step that takes them.
 */
import { CATALOG, isAction, type Operation } from '../api/catalog.js';
import type { Step } from '../playbook/schema.js';
import { item } from '../runner/context.js';
import { compare } from '../store/rows.js';
import type { Store } from '../store/store.js';

type Json = Record<string, unknown>;

/**
 * What a step's items are: the results of the devices it acts on (any API action but a listing: one that names
 * none has none), the devices it finds (a listing, `ledger.query`), or undefined: it has none.
 */
export function itemsOf(step: Step): 'results' | 'found' | undefined {
  if (!('uses' in step)) return undefined;
  if (step.uses === 'ledger.query') return 'found';
  if (!isAction(step.uses)) return undefined;
  return (CATALOG[step.uses] as Operation).strategy === 'listing' ? 'found' : 'results';
}

/** The dry run's planned devices of each step, as the runner gives them (RunOptions.onPlanned). */
export class PlannedItems {
  private readonly byStep = new Map<string, Json[]>();

  readonly add = (step: string, items: Json[]): void => {
    const list = this.byStep.get(step);
    if (list) list.push(...items);
    else this.byStep.set(step, [...items]);
  };

  get(step: string): Json[] | undefined {
    return this.byStep.get(step);
  }
}

/**
 * The items of `step`, a step that acts on devices (itemsOf): each device's latest result, in the order of the
 * device ids, as the ledger gives them; in a dry run, those of the devices a planned step would have acted on.
 */
export async function stepItems(
  store: Store,
  runId: string,
  step: string,
  planned: PlannedItems,
): Promise<Json[]> {
  const dry = planned.get(step);
  if (dry) return [...dry].sort((a, b) => compare(String(a.id), String(b.id)));
  return (await store.deviceResults(runId, step)).map(item);
}

/**
 * Why a case may not expect items of `step`, or undefined when it may: a step that finds devices (whose items
 * the run does not keep), or one that has none.
 */
export function noItems(step: Step): string | undefined {
  const has = itemsOf(step);
  if (has === 'results') return undefined;
  const what =
    'uses' in step
      ? step.uses
      : (['forEach', 'parallel', 'set', 'wait', 'fail'].find((k) => k in step) ?? 'step');
  if (has === 'found')
    return `the items of step \`${step.id}\` (${what}) are the devices it found, which the run does not keep once it ends: check its output (${what === 'ledger.query' ? '`devices`' : '`count`'}), or the items of the step that takes them`;
  return `step \`${step.id}\` (${what}) has no items: a step has items when it acts on devices (each device's result)`;
}
