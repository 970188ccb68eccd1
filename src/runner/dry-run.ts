/**
 * What a dry run shows of a call it does not make: an output made up from the action's output schema, so that
 * the steps after it that read it (`steps.create.output.triggerId`) run as they would after the real call.
 * Every member the schema declares is there: a string is `dry-run` (or its first enum value, or a nil UUID or
 * the epoch for those formats), a number its minimum or 0, a boolean true, a list empty; of alternatives, the
 * first.
 */
import type { OwnDeviceType } from '../api/device-errors.js';
import type { Operation } from '../api/catalog.js';
import { countDevices, item, type RunContext } from './context.js';
import { resultsOf, withResult, type DeviceSet } from './devices.js';
import type { PlannedCalls, StepState } from './types.js';

/** Deeper than any output schema: a recursive one stops here with an empty object. */
const MAX_DEPTH = 12;

const outputs = new WeakMap<Operation, unknown>();

/**
 * A dry run's step that would act: counted in the summary's `planned` and kept in its checkpoint, its devices
 * `skipped` (DRY RUN) and recorded so in the ledger with it, its output made up from the action's output schema
 * (an engine action's is null). The devices do not count among `byError`'s errors: a dry run reads as the real
 * run would to the steps after it.
 */
export function planOnly(
  ctx: RunContext,
  stepId: string,
  action: string,
  calls: number,
  devices: DeviceSet,
  op?: Operation,
): StepState {
  const planned = { action, calls, devices: devices.size };
  addPlanned(ctx, stepId, planned);
  const groups = withResult(devices, {
    outcome: 'skipped',
    errorType: 'DRY RUN' satisfies OwnDeviceType,
    attempts: 0,
  });
  const items = resultsOf(groups).map(item);
  if (items.length) ctx.o.onPlanned?.(stepId, items);
  return {
    status: 'planned',
    output: op ? plannedOutput(op) : null,
    items,
    devices: { ...countDevices(groups), byError: {} },
    ledger: groups,
    planned,
  };
}

/** Counts `p`, what an execution of step `stepId` planned, in the run summary's `planned`. */
export function addPlanned(ctx: RunContext, stepId: string, p: PlannedCalls): void {
  const sum = ctx.planned.get(stepId) ?? { step: stepId, action: p.action, calls: 0, devices: 0 };
  sum.calls += p.calls;
  sum.devices += p.devices;
  ctx.planned.set(stepId, sum);
}

/** The made-up output of an operation: made once, and a copy of it for each planned call. */
export function plannedOutput(op: Operation): unknown {
  if (!outputs.has(op)) outputs.set(op, exampleOf(op.output as Schema, 0));
  return structuredClone(outputs.get(op));
}

interface Schema {
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  default?: unknown;
  format?: string;
  minimum?: number;
  properties?: Record<string, Schema>;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
}

function exampleOf(s: Schema | undefined, depth: number): unknown {
  if (!s || typeof s !== 'object') return null;
  if ('const' in s) return s.const;
  if (s.enum?.length) return s.enum[0];
  const first = s.anyOf?.[0] ?? s.oneOf?.[0] ?? s.allOf?.[0];
  if (first) return exampleOf(first, depth);
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type;
  switch (type ?? (s.properties ? 'object' : undefined)) {
    case 'object': {
      if (depth >= MAX_DEPTH) return {};
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(s.properties ?? {})) out[k] = exampleOf(v, depth + 1);
      return out;
    }
    case 'array':
      return [];
    case 'string':
      return s.format === 'uuid'
        ? '00000000-0000-0000-0000-000000000000'
        : s.format === 'date-time'
          ? '1970-01-01T00:00:00.000Z'
          : 'dry-run';
    case 'integer':
    case 'number':
      return s.minimum ?? 0;
    case 'boolean':
      return true;
    default:
      return null;
  }
}
