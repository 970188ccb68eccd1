/**
 * A step's items held in the store (a listing's devices, a page a chunk), not in memory: a location report of
 * every device of a million-device account reads them back a batch at a time, and reads a batch again when
 * its report's results come. An expression that reads the list gets it whole, as it would any other list.
 */
import type { ItemRuns, Store } from '../store/store.js';
import type { DeviceSet } from './devices.js';

/** Where a batch starts: the chunk (the first numbered `seq` or after), and how many of its devices come before it. */
export interface Cursor {
  seq: number;
  skip: number;
}

/**
 * Adds a device to the end of `runs`: to the last run when it is of the same kind (and was sent again for the
 * same `error`), else as a run of its own. Every list of items kept in the store (a listing's pages, a ledger
 * query's devices, the devices a retry rule sends again, with the error of each) is built with it.
 */
export function pushItem(runs: ItemRuns, kind: string, id: string, error?: string): void {
  const last = runs[runs.length - 1];
  if (last?.[0] === kind && last[2] === error) last[1].push(id);
  else runs.push(error === undefined ? [kind, [id]] : [kind, [id], error]);
}

/** How many chunks one read of the store takes. */
const CHUNKS_PER_READ = 16;

export class StoredItems {
  constructor(
    private readonly store: Store,
    readonly runId: string,
    readonly key: string,
    /** How many devices. */
    readonly size: number,
  ) {}

  /** Every item, as `steps.<id>.items` shows it. */
  async all(): Promise<{ id: string; kind: string }[]> {
    const out: { id: string; kind: string }[] = [];
    for await (const { runs } of this.chunks({ seq: 0, skip: 0 }))
      for (const [kind, ids] of runs) for (const id of ids) out.push({ id, kind });
    return out;
  }

  /** The devices in sets of at most `max`, each with where it starts (to read it again with `read`). */
  async *batches(max: number): AsyncGenerator<{ at: Cursor; set: DeviceSet }> {
    let at: Cursor | undefined = { seq: 0, skip: 0 };
    while (at) {
      const { set, next }: { set: DeviceSet; next?: Cursor } = await this.read(at, max);
      if (!set.size) return;
      yield { at, set };
      at = next;
    }
  }

  /** At most `max` devices from `at`, and where the next ones start (none at the end). */
  async read(at: Cursor, max: number): Promise<{ set: DeviceSet; next?: Cursor }> {
    const set: DeviceSet = { groups: [], size: 0 };
    let skip = at.skip;
    for await (const { seq, runs } of this.chunks(at)) {
      let taken = 0;
      for (const [kind, ids, was] of runs) {
        const from = Math.min(ids.length, Math.max(0, skip - taken));
        taken += from;
        const n = Math.min(ids.length - from, max - set.size);
        if (n > 0) {
          addTo(set, kind, was, from === 0 && n === ids.length ? ids : ids.slice(from, from + n));
          taken += n;
        }
        if (set.size === max) {
          const more = taken < runs.reduce((k, [, x]) => k + x.length, 0);
          return { set, next: more ? { seq, skip: taken } : { seq: seq + 1, skip: 0 } };
        }
      }
      skip = 0;
    }
    return { set };
  }

  /** The chunks from `at.seq` on (their numbers need not follow each other), a few reads of the store at a time. */
  private async *chunks(at: Cursor): AsyncGenerator<{ seq: number; runs: ItemRuns }> {
    let after = at.seq - 1;
    for (;;) {
      const got = await this.store.itemChunks(this.runId, this.key, after, CHUNKS_PER_READ);
      yield* got;
      const last = got[got.length - 1];
      if (!last || got.length < CHUNKS_PER_READ) return;
      after = last.seq;
    }
  }
}

function addTo(set: DeviceSet, kind: string, was: string | undefined, ids: string[]): void {
  const same = (x: DeviceSet['groups'][number] | undefined) => x?.kind === kind && x.was === was;
  const last = set.groups[set.groups.length - 1];
  const g = same(last) ? last : set.groups.find(same);
  if (g) for (const id of ids) g.ids.push(id);
  else set.groups.push(was === undefined ? { kind, ids: ids.slice() } : { kind, ids: ids.slice(), was });
  set.size += ids.length;
}
