/**
 * A device's attempts in the ledger (docs/ledger.md): the sends made for it in its step, up to the one that
 * settled it. Each time the step's `retry:` sends the request again counts, and so does each pass of
 * `devices.retry`: a pass sends its devices in one request, and each device's attempts are the sends it had
 * before the pass (the attempts of its latest result) and those of the pass.
 *
 * The rule, for the entries of a request the service accepted:
 * - its `accepted` entries carry the request's own sends: what its `confirming` checkpoint keeps as the
 *   request's `attempts`, as every earlier version wrote them. A replica of an earlier version that takes up the
 *   checkpoint (a rolling deployment) finds the request's devices by its id and those attempts;
 * - the results that settle a device under it (succeeded, failed, unconfirmed, whatever confirmation, a refusal
 *   or a cancel writes) carry the sends made for the device across the passes: those before the pass and the
 *   request's own;
 * - a resumed run rebuilds the sends each device had before a request from the device's results before that
 *   request's pass, its non-accepted entries under the earlier requests of the checkpoint (sentBeforeRequests),
 *   never from the `accepted` entries.
 */
import type { DeviceGroup } from '../../store/store.js';
import type { DeviceSet, GroupResult } from '../devices.js';
import type { KeptRequest } from '../types.js';

/** The sends each device had before a `devices.retry` pass; none on the first pass. */
export type SentBefore = ReadonlyMap<string, number> | undefined;

/** The attempts of device `id` sent `n` times in this pass. */
export function sendsOf(before: SentBefore, id: string, n: number): number {
  return (before?.get(id) ?? 0) + n;
}

/** `set`'s devices with `result`, each with its attempts: the sends before the pass and `n` in it. */
export function withSends(
  set: DeviceSet,
  result: Omit<GroupResult, 'attempts'>,
  before: SentBefore,
  n: number,
): DeviceGroup[] {
  if (!before?.size) return set.groups.map(({ kind, ids }) => ({ kind, ids, ...result, attempts: n }));
  return set.groups.flatMap(({ kind, ids }) =>
    byAttempts(ids, before, n).map(([attempts, same]) => ({ kind, ids: same, ...result, attempts })),
  );
}

/** `ids` by their attempts, in the order each first came. */
export function byAttempts(ids: readonly string[], before: SentBefore, n: number): [number, string[]][] {
  const by = new Map<number, string[]>();
  for (const id of ids) {
    const a = sendsOf(before, id, n);
    const list = by.get(a);
    if (list) list.push(id);
    else by.set(a, [id]);
  }
  return [...by];
}

/** Where a pass is in its sends: the sends its devices had before it, and those it made so far. */
export interface Sends {
  before: SentBefore;
  n: number;
}

/**
 * The sends each device of a checkpoint's requests (`kept`, in the order they were sent) had before its request,
 * by request id, from the step's entries under them (`under`, in the ledger's order). A device's sends after a
 * request are the attempts of its latest result under it that is not `accepted`; where it has none (a stop
 * before that result was recorded, or one still to confirm), its sends before the request and the request's own.
 * The devices of each request are those of its `accepted` entries, or those a checkpoint of an earlier version
 * kept. None for a device that had no send before its request.
 */
export function sentBeforeRequests(
  kept: readonly KeptRequest[],
  under: readonly DeviceGroup[],
): Map<string, SentBefore> {
  const devices = new Map<string, string[]>();
  const settled = new Map<string, Map<string, number>>();
  for (const g of under) {
    if (g.requestId === undefined) continue;
    if (g.outcome === 'accepted') {
      const ids = devices.get(g.requestId) ?? [];
      ids.push(...g.ids);
      devices.set(g.requestId, ids);
      continue;
    }
    const results = settled.get(g.requestId) ?? new Map<string, number>();
    for (const id of g.ids) results.set(id, g.attempts);
    settled.set(g.requestId, results);
  }
  /** Each device's sends after the requests so far. */
  const sent = new Map<string, number>();
  const out = new Map<string, SentBefore>();
  for (const r of kept) {
    const ids = r.devices?.flatMap(([, list]) => list) ?? devices.get(r.requestId) ?? [];
    let before: Map<string, number> | undefined;
    for (const id of ids) {
      const n = sent.get(id);
      if (n) (before ??= new Map()).set(id, n);
    }
    out.set(r.requestId, before);
    const results = settled.get(r.requestId);
    for (const id of ids) sent.set(id, results?.get(id) ?? sendsOf(before, id, r.attempts));
  }
  return out;
}
