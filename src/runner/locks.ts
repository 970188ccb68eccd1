/**
 * Per-device locks (see DeviceLocks in types.ts). A caller takes every lock it needs at once, or waits until all
 * of them are free, so no two callers ever wait on each other.
 */
import { systemClock, type Clock } from '../clock.js';
import { jsRange } from '../store/id-range.js';
import type { Ownership } from '../store/store.js';
import type { DeviceLocks } from './types.js';

/** One acquisition of InProcessDeviceLocks: its devices are held until it is done. */
interface Hold {
  ids: readonly string[];
  /** The least and the greatest of `ids`, in JavaScript's order: every id of the hold is within them. */
  min: string;
  max: string;
  /** Its ids are in the map (`held`); else it is one of the ranged holds, known only by its range. */
  mapped: boolean;
  done: boolean;
  /** Settles when the hold is done. */
  freed: Promise<void>;
}

/**
 * The locks of one process, in memory. A hold whose range of ids (least to greatest) meets the range of no other
 * live hold cannot share a device with any: it is kept by its range alone, and pays one comparison an id. That is
 * the common case: the batches of a listing's devices (a forEach of `batchSize`, several at a time) are slices of
 * one ordered list, and the runs a daemon starts for single devices hold one id each.
 *
 * Ranges that meet do not say whether ids are shared: then both holds, and every hold after them while any such
 * is live, go into a map of each id to the last hold that took it (held while that hold is not done), and are
 * compared id by id. The ranged holds are a few (RANGED); past that, new holds go into the map too. A release
 * only marks its hold done, whatever its size; the ids of holds done are dropped from the map in one pass once
 * they outnumber the held ones by far (and some 65,000), so that a long-running process keeps a map of the
 * size of what it holds.
 */
export class InProcessDeviceLocks implements DeviceLocks {
  private readonly held = new Map<string, Hold>();
  /** The live holds kept by their range alone. */
  private readonly ranged = new Set<Hold>();
  /** How many live holds are in the map. */
  private mappedLive = 0;
  /** How many ids the holds not yet done took. */
  private live = 0;

  /** Ids the map keeps: held ones, and released ones not yet dropped. */
  get size(): number {
    return this.held.size;
  }

  /** How many ids the holds not yet done took. */
  get holding(): number {
    return this.live;
  }

  async acquire(ids: readonly string[], signal?: AbortSignal, onWait?: () => void): Promise<() => void> {
    const { min, max } = jsRange(ids);
    for (;;) {
      signal?.throwIfAborted();
      let release!: () => void;
      const freed = new Promise<void>((resolve) => (release = resolve));
      const hold: Hold = { ids, min, max, mapped: false, done: false, freed };
      // A ranged hold whose range meets this one's may share a device with it: it goes into the map first.
      for (const other of this.ranged)
        if (other.min <= max && min <= other.max) {
          this.ranged.delete(other);
          this.take(other);
        }
      const busy = this.mappedLive || this.ranged.size >= RANGED ? this.take(hold) : undefined;
      if (busy) {
        // What it took meanwhile is free again: nobody waits on a hold that was never given out.
        this.end(hold);
        release();
        onWait?.();
        await freedOrAborted(busy.freed, signal);
        continue;
      }
      if (!hold.mapped) this.ranged.add(hold);
      this.live += ids.length;
      return () => {
        if (hold.done) return;
        this.end(hold);
        this.live -= ids.length;
        release();
        if (this.held.size > 4 * this.live + 65_536) this.sweep();
      };
    }
  }

  /**
   * Puts `hold` into the map, id by id; returns a hold that has one of them already, at the first one met (what
   * `hold` took before it stays in the map, released by `end`).
   */
  private take(hold: Hold): Hold | undefined {
    hold.mapped = true;
    this.mappedLive++;
    for (const id of hold.ids) {
      const other = this.held.get(id);
      if (other && !other.done && other !== hold) return other;
      this.held.set(id, hold);
    }
    return undefined;
  }

  private end(hold: Hold): void {
    hold.done = true;
    if (hold.mapped) this.mappedLive--;
    else this.ranged.delete(hold);
  }

  private sweep(): void {
    for (const [id, hold] of this.held) if (hold.done) this.held.delete(id);
  }
}

/** How many live holds may be kept by their range alone: each new hold compares its range with theirs. */
const RANGED = 64;

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
