/** An engine action (log, notify.webhook, report.write, ledger.query), its input checked: run in-process, with the step's retries. */
import { isAbsolute, relative } from 'node:path';
import { runEngineAction, type EngineInput } from '../../actions/executors.js';
import type { Step } from '../../playbook/schema.js';
import { done, type RunContext, type StepCount } from '../context.js';
import type { StepPlan } from '../plan.js';
import type { DeviceRef } from '../devices.js';
import { pushItem, StoredItems } from '../stored-items.js';
import type { ItemRuns, StepState } from '../types.js';

export async function engineAction(
  ctx: RunContext,
  step: Extract<Step, { uses: unknown }>,
  plan: StepPlan,
  input: EngineInput,
  signal: AbortSignal,
  count: StepCount,
  key: string,
): Promise<StepState> {
  // A webhook or a report leaves the process: what the run wrote before it is committed first.
  await ctx.o.store.durable();
  const { value } = await ctx.retrying(count, plan.retry, { retrySafe: true }, signal, () =>
    runEngineAction(input, {
      store: ctx.o.store,
      runId: ctx.id,
      playbook: ctx.plan.playbook.name,
      logger: ctx.log,
      clock: ctx.clock,
      ledger: (stepId) => ctx.o.store.eachDeviceResult(ctx.id, stepId),
      signal,
      settings: ctx.o.engine,
    }),
  );
  const state = done(value);
  if (step.uses === 'report.write')
    state.note = wrote(value as { file: string; rows: number; replaced?: boolean });
  if (step.uses === 'ledger.query') {
    const { devices } = value as { devices: DeviceRef[] };
    if (!devices.length) await neverRan(ctx, step.id, input.input.playbook, state);
    if (ctx.keeps(step.id, 'items')) queryItems(ctx, key, devices, state);
  }
  return state;
}

/**
 * A ledger query that found no device, of a playbook with no run in the store but this one (a misspelt name, one
 * that never ran, or whose runs retention removed): said in the step's note, and logged once a run for each name,
 * rather than an empty result a forEach skips with no word. A playbook that ran with no matching device is normal.
 * Only real runs count: a query never reads a dry run's entries, so a playbook that only had dry runs never ran.
 */
async function neverRan(ctx: RunContext, stepId: string, queried: unknown, state: StepState): Promise<void> {
  const name = typeof queried === 'string' ? queried : ctx.plan.playbook.name;
  const runs = await ctx.o.store.listRuns({ playbook: name, dryRun: false, limit: 2 });
  if (runs.some((r) => r.id !== ctx.id)) return;
  state.note = `no run of playbook \`${name}\` in the store: the query found no device (is the name right? has it run?)`;
  if (ctx.ledgerNeverRan.has(name)) return;
  ctx.ledgerNeverRan.add(name);
  ctx.log.warn(`ledger.query: ${state.note}`, { step: stepId, queried: name });
}

/**
 * A ledger query's items: its devices as device actions and location reports take them, passed whole
 * (`devices: "${{ steps.missed.items }}"`); its output keeps each one's outcome, error, run and step. Kept in the
 * store, as a listing's are: a resumed run goes over the same devices, not an empty list nor a new query's.
 * Only when an expression reads them.
 */
function queryItems(ctx: RunContext, key: string, devices: DeviceRef[], state: StepState): void {
  const runs: ItemRuns = [];
  for (const { id, kind } of devices) pushItem(runs, kind, id);
  const { store } = ctx.o;
  store.clearItems(ctx.id, key);
  if (runs.length) store.appendItems(ctx.id, key, 0, runs);
  state.stored = new StoredItems(store, ctx.id, key, devices.length);
  state.items = devices.map(({ id, kind }) => ({ id, kind }));
}

/** Where a report went, as the user would name it: below the working directory, relative to it. */
function wrote({ file, rows, replaced }: { file: string; rows: number; replaced?: boolean }): string {
  const near = relative(process.cwd(), file);
  const shown = near && !near.startsWith('..') && !isAbsolute(near) ? near : file;
  return `wrote ${shown}, ${rows} row${rows === 1 ? '' : 's'}${replaced ? ', replacing the report of that name' : ''}`;
}
