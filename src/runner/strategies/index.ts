/**
 * How an API action is executed, chosen by its catalog entry's `strategy`: the runner's interpreter knows no
 * operation by name. Adding an operation of a known kind touches only the catalog.
 */
import type { ActionName, Operation, Strategy as StrategyName } from '../../api/catalog.js';
import type { Step } from '../../playbook/schema.js';
import type { RunContext, StepCount } from '../context.js';
import type { DeviceSet } from '../devices.js';
import type { StepPlan } from '../plan.js';
import type { StoredItems } from '../stored-items.js';
import type { Checkpoint, Json, Scope, StepState } from '../types.js';
import { call } from './call.js';
import { deviceState } from './device-state.js';
import { listing } from './listing.js';
import { locate, locationReport } from './location.js';

export type UsesStep = Extract<Step, { uses: unknown }>;

/** One `uses:` step of an API action, as a strategy receives it. */
export interface ActionCall {
  ctx: RunContext;
  step: UsesStep;
  plan: StepPlan;
  op: Operation;
  action: ActionName;
  input: Json;
  /** The devices the input names. */
  devices: DeviceSet;
  /** The devices, when they come from the store a batch at a time instead (StepPlan.streamsFrom). */
  source?: StoredItems;
  scope: Scope;
  /** The step's checkpoint key. */
  key: string;
  /** This execution's requests and attempts (one iteration of a fan-out's, not the step's in all). */
  count: StepCount;
  signal: AbortSignal;
  /** An earlier execution's checkpoint of a step it did not finish: `sending` or `confirming`. */
  resumed?: Checkpoint;
  /** The step waited for another holder of some of its devices (DeviceLocks), which may have changed them. */
  contended?: boolean;
}

export type Strategy = (x: ActionCall) => Promise<StepState>;

const STRATEGIES: Record<StrategyName, Strategy> = {
  call,
  deviceState,
  listing,
  locate,
  locationReport,
};

export function strategyOf(op: Operation): Strategy {
  return STRATEGIES[op.strategy ?? 'call'];
}

/**
 * Whether a strategy finds out for itself what an unanswered earlier call did (device state read, a report
 * sent again): a mutating call of any other strategy that is not retry-safe is not sent twice.
 */
export function reconciles(op: Operation): boolean {
  return op.strategy === 'deviceState' || op.strategy === 'locationReport';
}
