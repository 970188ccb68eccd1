/**
 * A run's per-device table, a page at a time, filtered in the store: each device's latest result in each step
 * (the ledger keeps every result; a retried or confirmed device has several, and the latest counts), read by
 * entry in (step, seq) order from a cursor, so that a page of a run of a million devices reads a few entries,
 * not the run. Whether a device's result in an entry is its latest is looked up in the store for a chunk of
 * devices at a time, in the entries whose range of ids holds them (repeatedAmong); an ended run is grouped once
 * first (latestAmong), so that its pages pass over the entries every device of which has a later result. The
 * entries are read without what their steps returned (most of their bytes); a page's rows get theirs at the end,
 * from their entries only, each parsed once (ledgerData).
 */
import type { DeviceOutcome, EntryFilter, LedgerRow, Store } from './store.js';
import { ledgerRow, type EntryRow } from './rows.js';

/** Where a page ends: the entry (step, seq) and how many of its devices are read. */
export interface DeviceCursor {
  step: string;
  seq: number;
  pos: number;
}

export interface DeviceFilter extends EntryFilter {
  outcome?: DeviceOutcome;
}

/**
 * Entries read at a time: one first, as a page of 50 rows rarely needs more, then twice as many each time, up to
 * ENTRIES. An entry of 10,000 devices is some 200 KB of text, which the heap keeps until its next full collection.
 */
const ENTRIES = 8;
/**
 * Devices of an entry whose latest results are looked up at a time: twice those the page still needs (some may
 * have a later result), and twice the chunk before when that one fell short, at most CHUNK. A lookup reads the
 * ranges of the run's entries and the entries that may name the devices: a few milliseconds, whatever the size of
 * the chunk, so a page that goes through devices that all have a later result (the accepted devices of a running
 * suspend) needs a few lookups, not one per device it still needs.
 */
const CHUNK = 10_000;

export function encodeCursor(c: DeviceCursor): string {
  return Buffer.from(JSON.stringify([c.step, c.seq, c.pos])).toString('base64url');
}

/** The cursor of `text`, or undefined when it is not one this module wrote. */
export function decodeCursor(text: string): DeviceCursor | undefined {
  try {
    const v = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown;
    if (!Array.isArray(v) || v.length !== 3) return undefined;
    const [step, seq, pos] = v as unknown[];
    if (typeof step !== 'string' || !Number.isInteger(seq) || !Number.isInteger(pos) || (pos as number) < 0)
      return undefined;
    return { step, seq: seq as number, pos: pos as number };
  } catch {
    return undefined;
  }
}

/** Of devices `keys` (`step\0device`) of the run, those with several results, to the seq of the one that counts. */
export type LatestOf = (keys: readonly string[]) => Promise<ReadonlyMap<string, number>>;

/**
 * How a page learns which results are the latest: from the entries that may name the devices of the page (never
 * a map of the run's devices); of an ended run, once it is grouped.
 */
export function latestOf(store: Store, runId: string, ended: boolean): LatestOf {
  return ended ? (keys) => store.latestAmong(runId, keys) : (keys) => store.repeatedAmong(runId, keys);
}

/** Up to `limit` rows of the run's table from `after` on, and the cursor of the next page when there is one. */
export async function devicePage(
  store: Store,
  runId: string,
  latestOf: LatestOf,
  filter: DeviceFilter,
  after: DeviceCursor | undefined,
  limit: number,
): Promise<{ rows: LedgerRow[]; next?: DeviceCursor }> {
  const rows: LedgerRow[] = [];
  /** Each row's entry and place in it, to read what its step returned for it once the page is whole. */
  const places: { seq: number; index: number }[] = [];
  /** The page, each row with what its step returned for its device (a location), and the cursor after it. */
  const page = async (next?: DeviceCursor) => {
    const data = await store.ledgerData(runId, places);
    data.forEach((d, i) => {
      if (d) (rows[i] as LedgerRow).data = d;
    });
    return { rows, ...(next ? { next } : {}) };
  };
  /** Where the last row taken is: the next page starts after it, when one more row is found. */
  let end: DeviceCursor | undefined;
  // The entry the cursor is in is read again, from its position on.
  let from = after ? { step: after.step, seq: after.seq - 1 } : undefined;
  /** The size of the page's chunk before: a chunk follows it only when it fell short. */
  let before = 0;
  for (let want = 1; ; want = Math.min(ENTRIES, want * 2)) {
    const entries = await store.ledgerEntries(runId, filter, from, want);
    // The entries' devices in order (those the id filter keeps), from the cursor on: looked up a chunk at a time,
    // a chunk going on into the next entries, so that entries whose devices all have a later result cost a few
    // lookups together, not one each.
    const part = filter.device;
    let at = 0;
    let pos = after && entries[0]?.step === after.step && entries[0].seq === after.seq ? after.pos : 0;
    let ids = entries[0] ? (JSON.parse(entries[0].device_ids) as string[]) : [];
    while (at < entries.length) {
      const size = Math.min(CHUNK, Math.max(2 * (limit + 1 - rows.length), 2 * before));
      before = size;
      const chunk: { e: EntryRow; id: string; pos: number }[] = [];
      while (at < entries.length && chunk.length < size) {
        const e = entries[at] as EntryRow;
        for (; pos < ids.length && chunk.length < size; pos++) {
          const id = ids[pos] as string;
          if (part === undefined || id.includes(part)) chunk.push({ e, id, pos: pos + 1 });
        }
        if (pos < ids.length) break;
        const next = entries[++at];
        pos = 0;
        ids = next ? (JSON.parse(next.device_ids) as string[]) : [];
      }
      const latest = chunk.length ? await latestOf(chunk.map((c) => `${c.e.step}\0${c.id}`)) : new Map();
      for (const c of chunk) {
        const seq = latest.get(`${c.e.step}\0${c.id}`);
        if (seq !== undefined && seq !== c.e.seq) continue;
        if (rows.length === limit) return page(end);
        rows.push(ledgerRow(c.id, c.e));
        places.push({ seq: c.e.seq, index: c.pos - 1 });
        end = { step: c.e.step, seq: c.e.seq, pos: c.pos };
      }
    }
    const last = entries[entries.length - 1];
    if (!last || entries.length < want) return page();
    from = { step: last.step, seq: last.seq };
  }
}
