/**
 * A device listing, page by page, into compact items (`{ id, kind }`: the identifier of the kind the listing's
 * first identifier filter matched, else the first identifier), which location and connectivity steps take as
 * they are. The full records are kept as the output
 * only when an expression reads `steps.<id>.output`: 100,000 of them are large.
 */
import { emptyCounts } from '../../store/store.js';
import { readAhead } from '../../util/read-ahead.js';
import type { ItemRuns, Json, StepState } from '../types.js';
import type { ActionCall } from './index.js';

export async function listing(x: ActionCall): Promise<StepState> {
  const { ctx, step } = x;
  const kind = filteredKind(x.input);
  const keepOutput = ctx.keeps(step.id, 'output');
  const records: unknown[] = [];
  const items: Json[] = [];
  // The checkpoint's form of the items, built as they come rather than in one pass at the end.
  const runs: ItemRuns = [];
  const sum = ctx.stepSummary(step.id);
  // The next page is requested before this one is taken apart.
  for await (const page of readAhead(
    ctx.o.client.pages(x.action as 'devices.list', x.input, { signal: x.signal }),
  )) {
    sum.calls++;
    ctx.progress.calls++;
    const devices = ((page as Json).devices as Json[] | undefined) ?? [];
    takePage(devices, kind, items, runs);
    if (keepOutput) records.push(...devices);
  }
  // Counted when it completes, as every other call is; a timed-out attempt is counted by the timeout loop.
  sum.attempts++;
  const output = keepOutput ? { devices: records } : { count: items.length };
  return { status: 'succeeded', output, items, itemRuns: runs, devices: emptyCounts() };
}

/** The kind of identifier the listing's first `deviceIdentifierFilters` entry matches, in lower case. */
function filteredKind(input: Json): string | undefined {
  const filters = ((input.filter ?? {}) as Json).deviceIdentifierFilters;
  const first = Array.isArray(filters) ? (filters[0] as Json | undefined) : undefined;
  return typeof first?.kind === 'string' ? first.kind.toLowerCase() : undefined;
}

/**
 * A listing page's devices as items, appended to `items`, and to `runs` as the checkpoint keeps them. A
 * function of its own, small, so that the per-device loop is optimised alone.
 */
function takePage(devices: Json[], kind: string | undefined, items: Json[], runs: ItemRuns): void {
  for (const d of devices) {
    const ids = (d.deviceIds as Json[] | undefined) ?? [];
    // The identifier of the filter's kind, else the first; the kind as the filter spells it, shared.
    let pick = ids[0];
    let pickKind: string | undefined;
    if (kind !== undefined) {
      for (const x of ids) {
        if (x.kind === kind || String(x.kind).toLowerCase() === kind) {
          pick = x;
          pickKind = kind;
          break;
        }
      }
    }
    const it = { id: String(pick?.id), kind: pickKind ?? String(pick?.kind).toLowerCase() };
    items.push(it);
    const run = runs[runs.length - 1];
    if (run?.[0] === it.kind) run[1].push(it.id);
    else runs.push([it.kind, [it.id]]);
  }
}
