/**
 * Per-device locks (see DeviceLocks in types.ts). A caller takes every lock it needs at once, or waits until all
 * of them are free, so no two callers ever wait on each other.
 */
import { systemClock, type Clock } from '../clock.js';
import type { Ownership } from '../store/store.js';
import type { DeviceLocks } from './types.js';

/** One acquisition of InProcessDeviceLocks: its devices are held until it is done. */
interface Hold {
  done: boolean;
  /** Settles when the hold is done. */
  freed: Promise<void>;
}

/**
 * The locks of one process, in memory: each device id maps to the last hold that took it, and is held while that
 * hold is not done. A release only marks its hold done, whatever its size; the ids of holds done are dropped
 * from the map in one pass once they outnumber the held ones by far (and some 65,000), so that a
 * long-running process keeps a map of the size of what it holds. An acquisition reads and writes each of its
 * ids once.
 *
 * A hold taken while no other is live (a lone run: `fleetbook run`, a daemon at rest) keeps its ids as given and
 * is written into the map only when another acquisition comes while it is live: a run alone in its process
 * pays nothing per device for locks it never has to compare.
 */
export class InProcessDeviceLocks implements DeviceLocks {
  private readonly held = new Map<string, Hold>();
  /** How many ids the holds not yet done took. */
  private live = 0;
  /** The hold taken while no other was live, while its ids are not yet in `held`. */
  private lone: { ids: readonly string[]; hold: Hold } | undefined;

  /** Ids the map keeps: held ones, and released ones not yet dropped. */
  get size(): number {
    return this.held.size;
  }

  /** How many ids the holds not yet done took. */
  get holding(): number {
    return this.live;
  }

  async acquire(ids: readonly string[], signal?: AbortSignal, onWait?: () => void): Promise<() => void> {
    for (;;) {
      signal?.throwIfAborted();
      const hold: Hold = { done: false, freed: undefined as unknown as Promise<void> };
      let release!: () => void;
      hold.freed = new Promise<void>((resolve) => (release = resolve));
      let busy: Hold | undefined;
      if (!this.lone && this.live === 0) this.lone = { ids, hold };
      else {
        if (this.lone) this.take(this.lone.ids, this.lone.hold);
        this.lone = undefined;
        busy = this.take(ids, hold);
      }
      if (busy) {
        // What it took meanwhile is free again: nobody waits on a hold that was never given out.
        hold.done = true;
        release();
        onWait?.();
        await freedOrAborted(busy.freed, signal);
        continue;
      }
      const n = ids.length;
      this.live += n;
      return () => {
        if (hold.done) return;
        hold.done = true;
        this.live -= n;
        if (this.lone?.hold === hold) this.lone = undefined;
        release();
        if (this.held.size > 4 * this.live + 65_536) this.sweep();
      };
    }
  }

  /** Marks `ids` taken by `hold`; returns a hold that has one of them already, at the first one met. */
  private take(ids: readonly string[], hold: Hold): Hold | undefined {
    for (const id of ids) {
      const other = this.held.get(id);
      if (other && !other.done && other !== hold) return other;
      this.held.set(id, hold);
    }
    return undefined;
  }

  private sweep(): void {
    for (const [id, hold] of this.held) if (hold.done) this.held.delete(id);
  }
}

/**
 * Locks held in the store, so that two processes on one store (a daemon and a `fleetbook run`; replicas) never
 * mutate one device at once. The runs of this process queue in memory first; a device that another process
 * holds is asked for again every `pollMs` until it is free, or its holder's lease expires. A release frees the
 * devices in memory at once, and in the store with the other releases of the same turn of the event loop, in
 * one transaction: this process may take its own devices again meanwhile (see Ownership.lockDevices).
 */
export class StoreDeviceLocks implements DeviceLocks {
  private readonly local = new InProcessDeviceLocks();
  private acquisitions = 0;
  private released: string[] = [];

  constructor(
    private readonly store: Pick<Ownership, 'lockDevices' | 'unlockDevices'>,
    private readonly owner: string,
    private readonly clock: Clock = systemClock,
    private readonly pollMs = 100,
  ) {}

  async acquire(ids: readonly string[], signal?: AbortSignal, onWait?: () => void): Promise<() => void> {
    const releaseLocal = await this.local.acquire(ids, signal, onWait);
    const holder = `${this.owner}/${++this.acquisitions}`;
    try {
      // Leases are on the wall clock, whatever clock the runs wait on.
      while ((await this.store.lockDevices(this.owner, holder, ids, Date.now())) !== undefined) {
        onWait?.();
        await this.clock.sleep(this.pollMs, signal);
      }
    } catch (e) {
      releaseLocal();
      throw e;
    }
    let done = false;
    return () => {
      if (done) return;
      done = true;
      releaseLocal();
      if (this.released.push(holder) === 1) setImmediate(() => this.flush());
    };
  }

  private flush(): void {
    const holders = this.released;
    this.released = [];
    try {
      this.store.unlockDevices(holders);
    } catch {
      // A busy or failing store: tried again in a second. Meanwhile only other processes wait for the devices.
      if (this.released.push(...holders) === holders.length) setTimeout(() => this.flush(), 1000).unref();
    }
  }
}

function freedOrAborted(freed: Promise<void>, signal?: AbortSignal): Promise<void> {
  if (!signal) return freed;
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    void freed.then(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
  });
}
