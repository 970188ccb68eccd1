/**
 * The daemon's EventSource: the in-process hub that hands each callback to the waiting steps as it is stored,
 * and the inbox for a wait that begins after some position (Checkpoint.after). An event wait resumed after a
 * restart, or taken over from a replica that stopped, would otherwise miss the event that came while no process
 * waited: stored before the wait was registered, it was handed to nobody.
 */
import { acceptsEvent, EventHub } from '../runner/events.js';
import type { InboxEvent, Store } from '../store/store.js';
import { linkedController } from '../util/linked-abort.js';

/** Messages read at a time from the inbox. */
const PAGE = 200;

export class StoredEvents extends EventHub {
  constructor(private readonly store: Pick<Store, 'inboxPosition' | 'inboxAfter'>) {
    super();
  }

  position(): Promise<number> {
    return this.store.inboxPosition();
  }

  override async wait(
    service: string,
    match: (event: unknown) => boolean,
    signal: AbortSignal,
    after?: number,
  ): Promise<unknown> {
    if (after === undefined) return super.wait(service, match, signal);
    // Waiting first, then reading what was stored: an event stored meanwhile is seen either way.
    const live = linkedController(signal);
    const next = super.wait(service, match, live.controller.signal);
    try {
      const stored = await this.firstStored(service, match, after);
      return stored === undefined ? await next : stored.payload;
    } finally {
      // The waiter goes, whatever ended the wait.
      live.unlink();
      live.controller.abort(new Error('wait ended'));
      void next.catch(() => undefined);
    }
  }

  /** The first message of `service` stored after `after` that `match` accepts. */
  private async firstStored(
    service: string,
    match: (event: unknown) => boolean,
    after: number,
  ): Promise<InboxEvent | undefined> {
    for (let from = after; ;) {
      const stored = await this.store.inboxAfter(service, from, PAGE);
      const found = stored.find((ev) => acceptsEvent(match, ev.payload));
      const last = stored[stored.length - 1];
      if (found || !last || stored.length < PAGE) return found;
      from = last.id;
    }
  }
}
