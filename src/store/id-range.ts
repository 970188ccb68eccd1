/**
 * The range of an entry's device ids: the least and the greatest, as both stores order text (the bytes of UTF-8:
 * SQLite's BINARY, PostgreSQL's "C"). Every device an entry names is within its range, so the entries that name
 * a device are among those whose range holds it, found without reading the others: a device's history across
 * every run (deviceHistory), the devices of a running run with several results (repeatedAmong). Entries hold
 * devices in the order a listing gave them, so ranges are narrow, and a device is in the range of a few entries
 * per step of a run.
 *
 * JavaScript orders UTF-16 code units, which differs from that order only where one string has a character from
 * U+E000 on and the other a surrogate at the same place. Where a string compared here has such a character, the
 * comparison is not trusted: an entry's range is left open (`max` null), and an open range holds every device.
 */

/** A character whose order in UTF-16 may differ from its order in UTF-8. */
const WIDE = /[\uD800-\uFFFF]/;

export interface IdRange {
  min: string;
  /** Null: the range is open, and holds every device. */
  max: string | null;
}

/**
 * The range of `ids`. The least and the greatest found in UTF-16 order have a WIDE character whenever the true
 * ones differ from them; then the range is open.
 */
export function idRange(ids: readonly string[]): IdRange {
  const { min, max } = jsRange(ids);
  return WIDE.test(min + max) ? { min: '', max: null } : { min, max };
}

/** The least and the greatest of `ids` in JavaScript's order (UTF-16 code units); '' for none. */
export function jsRange(ids: readonly string[]): { min: string; max: string } {
  let min = ids[0] ?? '';
  let max = min;
  // Greater first: ids come in a listing's order, so that is one comparison an id.
  for (let i = 1; i < ids.length; i++) {
    const id = ids[i] as string;
    if (id > max) max = id;
    else if (id < min) min = id;
  }
  return { min, max };
}

/** An entry's step and range, as a store reads them. */
export interface EntryRange {
  seq: number;
  step: string;
  min_id: string;
  max_id: string | null;
}

/** The device ids of `keys` (`step\0device`), each once. */
export const deviceIdsOf = (keys: readonly string[]): string[] => [
  ...new Set(keys.map((k) => k.slice(k.indexOf('\0') + 1))),
];

/** Of `entries`, the seqs of those whose range holds one of the devices `keys` (`step\0device`) in their step. */
export function bracketing(entries: readonly EntryRange[], keys: readonly string[]): number[] {
  const byStep = new Map<string, string[]>();
  /** Steps with an asked id whose order is not trusted: each of their entries is read. */
  const every = new Set<string>();
  for (const k of keys) {
    const at = k.indexOf('\0');
    const step = k.slice(0, at);
    const id = k.slice(at + 1);
    if (WIDE.test(id)) every.add(step);
    let ids = byStep.get(step);
    if (!ids) byStep.set(step, (ids = []));
    ids.push(id);
  }
  for (const ids of byStep.values()) ids.sort();
  const out: number[] = [];
  for (const e of entries) {
    const ids = byStep.get(e.step);
    if (!ids) continue;
    if (e.max_id === null || every.has(e.step) || WIDE.test(e.min_id + e.max_id)) {
      out.push(e.seq);
      continue;
    }
    // The first asked id from the range's least on: in the range when it is not past its greatest.
    let lo = 0;
    let hi = ids.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((ids[mid] as string) < e.min_id) lo = mid + 1;
      else hi = mid;
    }
    const first = ids[lo];
    if (first !== undefined && first <= e.max_id) out.push(e.seq);
  }
  return out;
}
