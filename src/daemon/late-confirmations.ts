/**
 * CarrierService messages that come after their step (product.md 5a): the ledger takes the service's word when it
 * comes. A run leaves a device `unconfirmed` once its step's confirmation time has passed, or settles it by a read
 * of its state (a guess), but the message may still come: a carrier slow that day, a listener that was down and
 * is sent it again. At each CarrierService message this daemon stores, and every few minutes besides (a message
 * another replica stored, a restart), it looks for the devices whose message is in the inbox: those left
 * unconfirmed by ended runs, and those settled by a state read of any run, ended or still going (a later step
 * runs, or the run waits). It records each one's outcome (Store.recordLate): the ledger, and the run's summary
 * counts, which a run still going counts as it ends.
 */
import { carrierOutcome } from '../runner/strategies/confirm.js';
import type { Logger } from '../log.js';
import type { LateCounts, LateResult } from '../store/late.js';
import type { EntryRow } from '../store/rows.js';
import type { InboxMessage, Store } from '../store/store.js';
import { carrierResult } from './confirmations.js';
import { Periodic } from './periodic.js';

/** How long after a device was left unconfirmed, or settled by a state read, its message is looked for. */
export const LATE_LOOKBACK_MS = 7 * 24 * 60 * 60 * 1000;
const EVERY_MS = 5 * 60 * 1000;
/** After a CarrierService message is stored: one pass for the messages of a second, not one per commit. */
const SOON_MS = 1000;
/** Unconfirmed entries read at a time. */
const PAGE = 500;

type LateStore = Pick<Store, 'lateEntries' | 'inboxByRequest' | 'recordLate'>;

export class LateConfirmations {
  private readonly periodic = new Periodic(EVERY_MS, () => this.pass());

  constructor(
    private readonly store: LateStore,
    private readonly log: Logger,
    /** Told of the devices each pass recorded, by outcome (the daemon's metrics). */
    private readonly onRecorded: (counts: LateCounts) => void = () => undefined,
  ) {}

  start(): void {
    this.periodic.start();
  }

  /** Messages this daemon stored: a CarrierService one may be a late one, looked for within a second. */
  offer(stored: readonly InboxMessage[]): void {
    if (stored.some((m) => m.service === 'CarrierService')) this.periodic.soon(SOON_MS);
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }

  private async pass(): Promise<void> {
    try {
      this.onRecorded(await recordLateResults(this.store, this.log));
    } catch (e) {
      this.log.warn('cannot record the CarrierService messages that came after their step; trying again', {
        error: (e as Error).message,
      });
    }
  }
}

/**
 * Records the outcome of each device whose CarrierService message is in the inbox, of those left unconfirmed by an
 * ended run or settled by a state read, within LATE_LOOKBACK_MS of `now`: how many devices, by outcome.
 */
export async function recordLateResults(
  store: LateStore,
  log: Logger,
  now = Date.now(),
): Promise<LateCounts> {
  const since = new Date(now - LATE_LOOKBACK_MS).toISOString();
  const total: LateCounts = { succeeded: 0, failed: 0 };
  for (let after = 0; ;) {
    const entries = await store.lateEntries(since, after, PAGE);
    const last = entries[entries.length - 1];
    if (!last) return total;
    after = last.seq;
    for (const [runId, results] of await lateResults(store, entries)) {
      const n = await store.recordLate(runId, results, new Date().toISOString());
      if (n.succeeded || n.failed)
        log.info('devices confirmed by a CarrierService message after their step', { runId, ...n });
      total.succeeded += n.succeeded;
      total.failed += n.failed;
    }
    if (entries.length < PAGE) return total;
  }
}

/** The results in the inbox's CarrierService messages for the devices of `entries`, by run. */
async function lateResults(store: LateStore, entries: EntryRow[]): Promise<Map<string, LateResult[]>> {
  const byRequest = new Map<string, { entry: EntryRow; ids: Set<string> }[]>();
  for (const entry of entries) {
    const list = byRequest.get(entry.request_id as string) ?? [];
    list.push({ entry, ids: new Set(JSON.parse(entry.device_ids) as string[]) });
    byRequest.set(entry.request_id as string, list);
  }
  const byRun = new Map<string, LateResult[]>();
  for (const m of await store.inboxByRequest([...byRequest.keys()])) {
    const r =
      m.service === 'CarrierService' ? carrierResult(m.payload as Record<string, unknown>) : undefined;
    if (!r) continue;
    for (const { entry, ids } of byRequest.get(m.requestId) ?? []) {
      // The message names the device by each of its identifiers, `kind:id`; the entry by the one it was sent as.
      const prefix = `${entry.kind}:`;
      const named = r.ids.find((k) => k.startsWith(prefix) && ids.has(k.slice(prefix.length)));
      if (named === undefined) continue;
      const results = byRun.get(entry.run_id) ?? [];
      results.push({ seq: entry.seq, deviceId: named.slice(prefix.length), ...carrierOutcome(r) });
      byRun.set(entry.run_id, results);
    }
  }
  return byRun;
}
