/**
 * A device's attempts in the ledger (docs/ledger.md): the sends made for it in its step, up to the one that
 * settled it. Each time the step's `retry:` sends the request again counts, and so does each pass of
 * `devices.retry`: a pass sends its devices in one request, and each device's attempts are the sends it had
 * before the pass (the attempts of its latest result) and those of the pass.
 */
import type { DeviceGroup } from '../../store/store.js';
import type { DeviceSet, GroupResult } from '../devices.js';

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
