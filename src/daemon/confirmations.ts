/**
 * CarrierService messages correlated by request id: how the runs of the daemon confirm each device of a
 * device-state action (product.md 5a). A run follows its requests' ids; it is handed the messages already in the
 * inbox (received before it asked, or before a restart), then each one stored: by this process, or by another
 * replica that the load balancer gave it to (Store.watchInbox).
 */
import type { InboxEvent, InboxMessage, Store } from '../store/store.js';
import type { CarrierResult, ConfirmationSource } from '../runner/types.js';

type Json = Record<string, unknown>;
type OnResult = (requestId: string, r: CarrierResult) => void;
/** A follower's read of the inbox, not yet sent: its requests, and whom to hand what is stored. */
type StoredRead = { ids: string[]; hand: (ev: InboxEvent) => void };

export class CarrierConfirmations implements ConfirmationSource {
  private readonly followers = new Map<string, Set<OnResult>>();
  /** The accounts whose CarrierService messages this daemon's listener is registered for. */
  private readonly accounts = new Set<string>();
  /** The reads asked for while one is on its way to the store: the next one reads them all at once. */
  private unread: StoredRead[] = [];
  private reading = false;

  constructor(private readonly store: Pick<Store, 'inboxByRequest'>) {}

  /** Says which accounts' messages reach the listener (a registration that succeeded). */
  listenFor(accountName: string): void {
    this.accounts.add(accountName);
  }

  listening(accountName: string): boolean {
    return this.accounts.has(accountName);
  }

  follow(requestIds: string[], onResult: OnResult): () => void {
    for (const id of requestIds) {
      let set = this.followers.get(id);
      if (!set) this.followers.set(id, (set = new Set()));
      set.add(onResult);
    }
    let following = true;
    // Following first, then reading the inbox: a message stored meanwhile comes twice, never not at all.
    this.unread.push({ ids: requestIds, hand: (ev) => following && this.hand(ev, onResult) });
    if (!this.reading) void this.readStored();
    return () => {
      following = false;
      for (const id of requestIds) {
        const set = this.followers.get(id);
        set?.delete(onResult);
        if (set?.size === 0) this.followers.delete(id);
      }
    };
  }

  /**
   * The inbox's messages of the requests followed since the last read, in one read of the store: under load, one
   * statement for the runs of many callbacks rather than one each (on PostgreSQL, its planning is most of its
   * cost). Handed in the order of arrival.
   */
  private async readStored(): Promise<void> {
    this.reading = true;
    while (this.unread.length) {
      const reads = this.unread;
      this.unread = [];
      const byRequest = new Map<string, StoredRead[]>();
      for (const r of reads)
        for (const id of r.ids) {
          const list = byRequest.get(id);
          if (!list) byRequest.set(id, [r]);
          else if (!list.includes(r)) list.push(r);
        }
      // A failing store: the runs' confirmation time bounds their wait, and the requests' status confirms them.
      const stored = await this.store.inboxByRequest([...byRequest.keys()]).catch(() => []);
      for (const ev of stored) for (const r of byRequest.get(ev.requestId) ?? []) r.hand(ev);
    }
    this.reading = false;
  }

  /** A stored message: handed to the runs following its request. */
  publish(ev: InboxMessage): void {
    if (ev.service !== 'CarrierService') return;
    const set = this.followers.get(ev.requestId);
    if (set) for (const f of [...set]) this.hand(ev, f);
  }

  private hand(ev: InboxMessage, f: OnResult): void {
    if (ev.service !== 'CarrierService') return;
    const r = carrierResult(ev.payload as Json);
    if (r) f(ev.requestId, r);
  }
}

/**
 * One device's result in a CarrierService message (`deviceIds` of the device, `status`, and on failure a
 * `faultResponse` with the service's `faultcode`): undefined for a message of another shape.
 */
export function carrierResult(payload: Json): CarrierResult | undefined {
  const deviceIds = Array.isArray(payload.deviceIds) ? (payload.deviceIds as Json[]) : [];
  if (!deviceIds.length || typeof payload.status !== 'string') return undefined;
  const ids = deviceIds.map((d) => `${String(d.kind).toLowerCase()}:${String(d.id)}`);
  if (payload.status === 'Success') return { device: ids[0] as string, ids, succeeded: true };
  const fault = (payload.faultResponse ?? {}) as Json;
  return {
    device: ids[0] as string,
    ids,
    succeeded: false,
    errorType: typeof fault.faultcode === 'string' ? fault.faultcode : String(payload.status).toUpperCase(),
    ...(typeof fault.faultstring === 'string' ? { message: fault.faultstring } : {}),
  };
}
