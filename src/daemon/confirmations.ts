/**
 * CarrierService messages correlated by request id: how the runs of the daemon confirm each device of a
 * device-state action (product.md 5a). A run follows its requests' ids; it is handed the messages already in the
 * inbox (received before it asked, or before a restart), then each one stored: by this process, or by another
 * replica that the load balancer gave it to (Store.watchInbox).
 */
import type { InboxEvent, InboxMessage, Store } from '../store/store.js';
import type { CarrierResult, ConfirmationSource } from '../runner/types.js';
import { Batched } from '../util/batched.js';

type Json = Record<string, unknown>;
type OnResult = (requestId: string, r: CarrierResult) => void;

export class CarrierConfirmations implements ConfirmationSource {
  private readonly followers = new Map<string, Set<OnResult>>();
  /** The accounts whose CarrierService messages this daemon's listener is registered for. */
  private readonly accounts = new Set<string>();
  /** The inbox's messages of the requests followed, read for many follows at once (see `readStored`). */
  private readonly stored = new Batched((reads: string[][]) => this.readStored(reads));

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
    void this.stored.call(requestIds).then(
      (stored) => {
        if (following) for (const ev of stored) this.hand(ev, onResult);
      },
      // A failing store: the run's confirmation time bounds the wait, and the request's status confirms it then.
      () => undefined,
    );
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
   * The inbox's messages of each follow's requests, in order of arrival, in one read of the store: under load,
   * one statement for the runs of many callbacks rather than one each (on PostgreSQL, planning it is most of its
   * cost).
   */
  private async readStored(reads: string[][]): Promise<InboxEvent[][]> {
    const byRequest = new Map<string, InboxEvent[]>();
    for (const ev of await this.store.inboxByRequest([...new Set(reads.flat())])) {
      const list = byRequest.get(ev.requestId);
      if (list) list.push(ev);
      else byRequest.set(ev.requestId, [ev]);
    }
    return reads.map((ids) =>
      ids.length === 1
        ? (byRequest.get(ids[0] as string) ?? [])
        : [...new Set(ids)].flatMap((id) => byRequest.get(id) ?? []).sort((x, y) => x.id - y.id),
    );
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
