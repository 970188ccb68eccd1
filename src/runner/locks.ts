/**
 * Per-device locks of one process (see DeviceLocks in runner.ts). A caller takes every lock it needs at once,
 * or waits until all of them are free, so no two callers ever wait on each other.
 */
import type { DeviceLocks } from './runner.js';

export class InProcessDeviceLocks implements DeviceLocks {
  /** Held device ids, each with the promise that settles when its holder releases it. */
  private readonly held = new Map<string, Promise<void>>();

  async acquire(ids: readonly string[], signal?: AbortSignal): Promise<() => void> {
    for (;;) {
      signal?.throwIfAborted();
      const busy = ids.find((id) => this.held.has(id));
      if (busy === undefined) break;
      await freedOrAborted(this.held.get(busy) as Promise<void>, signal);
    }
    let release!: () => void;
    const freed = new Promise<void>((resolve) => (release = resolve));
    const mine = [...new Set(ids)];
    for (const id of mine) this.held.set(id, freed);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      for (const id of mine) if (this.held.get(id) === freed) this.held.delete(id);
      release();
    };
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
