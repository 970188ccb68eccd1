/**
 * Per-device locks (see DeviceLocks in runner.ts). A caller takes every lock it needs at once, or waits until all
 * of them are free, so no two callers ever wait on each other.
 */
import { systemClock, type Clock } from '../clock.js';
import type { Ownership } from '../store/store.js';
import type { DeviceLocks } from './runner.js';

/** The locks of one process, in memory. */
export class InProcessDeviceLocks implements DeviceLocks {
  /** Held device ids, each with the promise that settles when its holder releases it. */
  private readonly held = new Map<string, Promise<void>>();

  async acquire(ids: readonly string[], signal?: AbortSignal): Promise<() => void> {
    for (;;) {
      signal?.throwIfAborted();
      const busy = this.firstHeld(ids);
      if (busy === undefined) break;
      await freedOrAborted(busy, signal);
    }
    return this.hold(ids);
  }

  /** When any of `ids` is held: the promise that settles when the first of them is freed. */
  private firstHeld(ids: readonly string[]): Promise<void> | undefined {
    for (const id of ids) {
      const freed = this.held.get(id);
      if (freed) return freed;
    }
    return undefined;
  }

  /**
   * Holds `ids` (free, each given once or more) until the returned release. The loops over ids live in small
   * functions of their own: V8 optimises them soon and cheaply, where the loops inside the async `acquire` made
   * it compile the whole coroutine, some 4 to 7 ms of CPU a process.
   */
  private hold(ids: readonly string[]): () => void {
    let release!: () => void;
    const freed = new Promise<void>((resolve) => (release = resolve));
    const mine = ids.slice();
    for (const id of mine) this.held.set(id, freed);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      // An id given twice is deleted at its first occurrence; the second finds it no longer held by this.
      for (const id of mine) if (this.held.get(id) === freed) this.held.delete(id);
      release();
    };
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

  async acquire(ids: readonly string[], signal?: AbortSignal): Promise<() => void> {
    const releaseLocal = await this.local.acquire(ids, signal);
    const holder = `${this.owner}/${++this.acquisitions}`;
    try {
      // Leases are on the wall clock, whatever clock the runs wait on.
      while (this.store.lockDevices(this.owner, holder, ids, Date.now()) !== undefined)
        await this.clock.sleep(this.pollMs, signal);
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
