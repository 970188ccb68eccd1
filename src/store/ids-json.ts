/**
 * The JSON of a list of device ids, made once for the lists a store writes one after another with the same ids: a
 * device action's batch is written three times (its devices' claim, their `accepted` entries, then their confirmed
 * results), and its JSON and range were made each time, the most of what those writes cost. A list is known by its
 * ids, compared one by one (`===` on strings is their equality), never by the array alone, which a caller may have
 * changed since: the JSON given is always that of the ids given. The few lists last written are kept (`KEPT`), and
 * only those of at most `MAX_IDS` ids.
 */
import { idRange, type IdRange } from './id-range.js';
import { storedJson } from './text.js';

/** How many lists are kept: a fan-out's batches in flight write theirs interleaved. */
const KEPT = 8;

/** The longest list kept (its ids copied, its JSON held): a location report's lists are ten thousand long. */
const MAX_IDS = 2_000;

interface Made {
  /** A copy of the ids: the array given may change after. */
  ids: readonly string[];
  /** JSON.stringify's text of the ids. */
  json: string;
  /** As the ledger keeps it (text.ts storedJson), and its range: made when a ledger entry first asks. */
  stored?: { json: string; range: IdRange };
}

export class IdsJson {
  /** The lists last made, the latest first. */
  private readonly kept: Made[] = [];

  /** JSON.stringify's text of `ids`. */
  json(ids: readonly string[]): string {
    return this.made(ids).json;
  }

  /** The JSON of `ids` as a ledger entry keeps them (storedJson), and their range (id-range.ts). */
  stored(ids: readonly string[]): { json: string; range: IdRange } {
    const m = this.made(ids);
    if (!m.stored) {
      const json = storedJson(m.json);
      m.stored = { json, range: idRange(json === m.json ? ids : (JSON.parse(json) as string[])) };
    }
    return m.stored;
  }

  private made(ids: readonly string[]): Made {
    const found = this.kept.findIndex((m) => same(m.ids, ids));
    if (found >= 0) {
      const m = this.kept[found] as Made;
      if (found) this.kept.unshift(...this.kept.splice(found, 1));
      return m;
    }
    const keep = ids.length > 0 && ids.length <= MAX_IDS;
    const m: Made = { ids: keep ? ids.slice() : [], json: JSON.stringify(ids) };
    if (!keep) return m;
    this.kept.unshift(m);
    if (this.kept.length > KEPT) this.kept.pop();
    return m;
  }
}

/** Whether two lists hold the same ids in the same order: the first and the last before the others. */
function same(a: readonly string[], b: readonly string[]): boolean {
  const n = a.length;
  if (n !== b.length || !n || a[0] !== b[0] || a[n - 1] !== b[n - 1]) return false;
  for (let i = 1; i < n - 1; i++) if (a[i] !== b[i]) return false;
  return true;
}
