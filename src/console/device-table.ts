/**
 * A run's per-device table, a page at a time, filtered in the store: each device's latest result in each step
 * (the ledger keeps every result; a retried or confirmed device has several, and the latest counts), read by
 * entry in (step, seq) order from a cursor, so that a page of a run of a million devices reads a few entries,
 * not the run. The devices with several results in a step (`repeated`) are read once per request, or once per
 * ended run (they no longer change), and kept in a small cache.
 */
import type { DeviceOutcome, EntryFilter, LedgerRow, Store } from '../store/store.js';
import { latestRows } from '../store/rows.js';

/** Where a page ends: the entry (step, seq) and how many of its devices are read. */
export interface DeviceCursor {
  step: string;
  seq: number;
  pos: number;
}

export interface DeviceFilter extends EntryFilter {
  outcome?: DeviceOutcome;
}

/** Entries read at a time: a few dozen, of up to a batch of devices each. */
const ENTRIES = 64;

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

/**
 * The repeated devices of runs that have ended, newest used last; a run whose map is larger than MAX_CACHED is
 * read again at each page rather than held.
 */
export class RepeatedCache {
  private readonly runs = new Map<string, Map<string, number>>();

  constructor(
    private readonly maxRuns = 4,
    private readonly maxCached = 100_000,
  ) {}

  async of(store: Store, runId: string, ended: boolean): Promise<Map<string, number>> {
    const kept = this.runs.get(runId);
    if (kept) {
      this.runs.delete(runId);
      this.runs.set(runId, kept);
      return kept;
    }
    const again = await store.repeatedDevices(runId);
    if (ended && again.size <= this.maxCached) {
      this.runs.set(runId, again);
      for (const oldest of this.runs.keys()) {
        if (this.runs.size <= this.maxRuns) break;
        this.runs.delete(oldest);
      }
    }
    return again;
  }
}

/** Up to `limit` rows of the run's table from `after` on, and the cursor of the next page when there is one. */
export async function devicePage(
  store: Store,
  runId: string,
  filter: DeviceFilter,
  after: DeviceCursor | undefined,
  limit: number,
  again: ReadonlyMap<string, number>,
): Promise<{ rows: LedgerRow[]; next?: DeviceCursor }> {
  const rows: LedgerRow[] = [];
  /** Where the last row taken is: the next page starts after it, when one more row is found. */
  let end: DeviceCursor | undefined;
  // The entry the cursor is in is read again, from its position on.
  let from = after ? { step: after.step, seq: after.seq - 1 } : undefined;
  for (;;) {
    const entries = await store.ledgerEntries(runId, filter, from, ENTRIES);
    for (const e of entries) {
      const skip = after && e.step === after.step && e.seq === after.seq ? after.pos : 0;
      let pos = 0;
      for (const page of latestRows([e], new Map())) {
        for (const row of page) {
          pos++;
          if (pos <= skip) continue;
          const latest = again.get(`${e.step}\0${row.deviceId}`);
          if (latest !== undefined && latest !== e.seq) continue;
          if (filter.device !== undefined && !row.deviceId.includes(filter.device)) continue;
          if (rows.length === limit) return { rows, ...(end ? { next: end } : {}) };
          rows.push(row);
          end = { step: e.step, seq: e.seq, pos };
        }
      }
    }
    const last = entries[entries.length - 1];
    if (!last || entries.length < ENTRIES) return { rows };
    from = { step: last.step, seq: last.seq };
  }
}
