/**
 * A device listing, page by page, into compact items (`{ id, kind }`: the identifier of the kind the step's
 * `items.kind` names, else the kind the listing's first identifier filter matched, else the first identifier),
 * which location and connectivity steps take as they are. When anything reads the items, each page's go to
 * the store as it comes (StoredItems), and to memory only when an expression reads the list. The full records
 * are kept as the output only when an expression reads `steps.<id>.output`: 100,000 of them are large.
 * A page whose items to keep hold a NUL character (an identifier or a kind) is refused as any other answer that
 * the store would keep with one (MalformedAnswer): the step fails, and none of its items stay in the store.
 */
import { retrying } from '../../retry.js';
import { emptyCounts } from '../../store/store.js';
import { selects } from '../context.js';
import { answerRefusal, type MalformedAnswer } from '../devices.js';
import { readAhead } from '../../util/read-ahead.js';
import { pushItem, StoredItems } from '../stored-items.js';
import type { ItemRuns, Json, StepState } from '../types.js';
import type { ActionCall } from './index.js';

export async function listing(x: ActionCall): Promise<StepState> {
  const { ctx, plan } = x;
  // The step's `retry:` around the client's own attempts: a listing whose answers were lost more often than the
  // client tries one request (or whose login failed) lists again from the start. It changes nothing.
  const { value } = await retrying(() => listOnce(x), {
    maxAttempts: plan.retry.maxAttempts,
    retryable: (e) => selects(plan.retry.on, e),
    delay: (n) => ctx.delay(plan.retry, n),
    sleep: (ms) => ctx.clock.sleep(ms, x.signal),
    // An attempt is counted as it ends: one that failed when another follows, here.
    onRetry: () => x.count.attempt(),
  });
  return value;
}

async function listOnce(x: ActionCall): Promise<StepState> {
  const { ctx, step } = x;
  const named = step.items?.kind.toLowerCase();
  const kind = named ?? filteredKind(x.input);
  const keepOutput = ctx.keeps(step.id, 'output');
  const inMemory = ctx.keeps(step.id, 'items');
  const stored = inMemory || ctx.keeps(step.id, 'stream');
  const { store } = ctx.o;
  // An attempt lists from the start again: what an earlier one stored is replaced.
  if (stored) store.clearItems(ctx.id, x.key);
  const records: unknown[] = [];
  const items: Json[] = [];
  let count = 0;
  let chunks = 0;
  let leftOut = 0;
  /** How many devices the pages before this one listed: where this one's are in the whole answer. */
  let listed = 0;
  // The next page is requested before this one is taken apart.
  for await (const page of readAhead(
    ctx.o.client.pages(x.action as 'devices.list', x.input, ctx.requestsOf(x.count, x.signal)),
  )) {
    const devices = ((page as Json).devices as Json[] | undefined) ?? [];
    const runs: ItemRuns = [];
    const taken = takePage(devices, kind, named !== undefined, runs, inMemory ? items : undefined);
    leftOut += taken.leftOut;
    const refused = stored && taken.nul ? nulRefusal(x.action, devices, listed, runs) : undefined;
    if (refused) {
      store.clearItems(ctx.id, x.key);
      throw refused;
    }
    listed += devices.length;
    const n = runs.reduce((k, [, ids]) => k + ids.length, 0);
    if (stored && n) store.appendItems(ctx.id, x.key, chunks++, runs);
    count += n;
    if (keepOutput) records.push(...devices);
  }
  // Counted when it completes, as every other call is; a timed-out attempt is counted by the timeout loop.
  x.count.attempt();
  if (leftOut)
    ctx.log.info('devices without the identifier the items take, left out', {
      step: step.id,
      kind,
      devices: leftOut,
    });
  const output = keepOutput ? { devices: records } : { count, ...(named !== undefined ? { leftOut } : {}) };
  return {
    status: 'succeeded',
    output,
    items,
    ...(stored ? { stored: new StoredItems(store, ctx.id, x.key, count) } : {}),
    devices: emptyCounts(),
  };
}

/** The kind of identifier the listing's first `deviceIdentifierFilters` entry matches, in lower case. */
function filteredKind(input: Json): string | undefined {
  const filters = ((input.filter ?? {}) as Json).deviceIdentifierFilters;
  const first = Array.isArray(filters) ? (filters[0] as Json | undefined) : undefined;
  return typeof first?.kind === 'string' ? first.kind.toLowerCase() : undefined;
}

/**
 * A listing page's devices as item runs of one kind, appended to `runs`, and, when an expression reads the list, as
 * items (`{ id, kind }`) appended to `items`, in the same pass; with `exact`, a device without an identifier of
 * `kind` is left out. Returns how many were left out, and whether an identifier or a kind taken may have a NUL
 * character (nulRefusal says which, if any). A function of its own, small, so that the per-device loop is
 * optimised alone.
 */
function takePage(
  devices: Json[],
  kind: string | undefined,
  exact: boolean,
  runs: ItemRuns,
  items: Json[] | undefined,
): { leftOut: number; nul: boolean } {
  let leftOut = 0;
  let nul = kind?.includes('\0') ?? false;
  // The kind of the identifier before, as given and in lower case: a page's devices give one or two kinds.
  let given: unknown;
  let lower = '';
  for (const d of devices) {
    const ids = (d.deviceIds as Json[] | undefined) ?? [];
    // The identifier of the kind asked for, else the first; the kind in lower case, shared.
    let pick = exact ? undefined : ids[0];
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
    if (!pick) {
      leftOut++;
      continue;
    }
    const id = String(pick.id);
    if (pickKind === undefined && (pick.kind !== given || typeof given !== 'string')) {
      given = pick.kind;
      lower = String(given).toLowerCase();
      if (lower.includes('\0')) nul = true;
    }
    if (id.includes('\0')) nul = true;
    const k = pickKind ?? lower;
    pushItem(runs, k, id);
    items?.push({ id, kind: k });
  }
  return { leftOut, nul };
}

/**
 * The refusal of a page whose items (`runs`, taken from `devices`, the listing's devices from `listed` on) hold
 * a NUL character, in an identifier or a kind, which no device's has and the PostgreSQL store cannot keep; else
 * undefined. Asked only of a page takePage found one in; the identifier it came from is looked for then.
 */
function nulRefusal(
  action: string,
  devices: Json[],
  listed: number,
  runs: ItemRuns,
): MalformedAnswer | undefined {
  for (const [kind, ids] of runs) {
    const member = kind.includes('\0') ? 'kind' : 'id';
    const nul = member === 'kind' ? kind : ids.find((id) => id.includes('\0'));
    if (nul === undefined) continue;
    for (let i = 0; i < devices.length; i++) {
      const deviceIds = ((devices[i] as Json).deviceIds as Json[] | undefined) ?? [];
      for (let j = 0; j < deviceIds.length; j++) {
        const value = String((deviceIds[j] as Json)[member]);
        if ((member === 'kind' ? value.toLowerCase() : value) !== nul) continue;
        const whose = member === 'id' ? "no device's identifier" : 'no kind of identifier';
        return answerRefusal(action, value, `devices/${listed + i}/deviceIds/${j}/${member}`, whose);
      }
    }
  }
  return undefined;
}
