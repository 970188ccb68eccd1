/** What a step that failed or was cancelled reads as to the steps after it (`steps.<id>`). */
import type { Step } from '../playbook/schema.js';
import type { DeviceCounts } from '../store/store.js';
import { findsItems, itemsNotKnown, type RunContext } from './context.js';
import type { Scope, StepState } from './types.js';

/**
 * The state of a step that failed or was cancelled, as later steps read it (its checkpoint `restored` when an
 * earlier execution of the run ended it so). Its output is null. Its items: those of a step that finds them (a
 * listing, a ledger query) are not known (itemsNotKnown), not an empty list that would say it found none; those
 * of a device action are the per-device results it recorded before it ended (the devices a later step sends
 * again), from the ledger, but in a fan-out, whose iterations record under one step id. Its devices: those it
 * recorded.
 */
export async function endedState(
  ctx: RunContext,
  step: Step,
  scope: Scope,
  status: 'failed' | 'cancelled',
  message: string,
  devices: DeviceCounts,
): Promise<StepState> {
  const state: StepState = {
    status,
    output: null,
    items: [],
    devices: { ...devices, byError: { ...devices.byError } },
    error: message,
  };
  if (findsItems(step))
    return itemsNotKnown(state, step.id, `${status === 'failed' ? 'failed' : 'was cancelled'} (${message})`);
  if ('uses' in step && !scope.inLoop && ctx.keeps(step.id, 'items'))
    state.items = await ctx.ledgerItems(step.id);
  return state;
}
