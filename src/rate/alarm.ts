/**
 * A sleep on a clock that `ring()` ends early. Whoever waits for something another part of the process may
 * change (a request waiting for its area's ceiling to rise, the share coordinator asked to exchange at once
 * after a 429, a run waiting for its devices' callbacks) sleeps on an alarm, and wakes when it changes rather
 * than at its next timer. One sleeper at a time.
 */
import type { Clock } from '../clock.js';

export class Alarm {
  private ringer: (() => void) | undefined;

  constructor(private readonly clock: Clock) {}

  /**
   * Resolves after `ms` (never, for Infinity: only a ring ends it) or at the next `ring()`, whichever comes
   * first; rejects with the signal's reason if `signal` is aborted first.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      // The timer is cancelled once the sleep is over either way, so that it holds no process open (and a
      // virtual clock does not move to it): no AbortController for it, which cost 8-9 us per sleep.
      let cancel: (() => void) | undefined;
      const end = (abortedBy?: AbortSignal) => {
        if (this.ringer !== ring) return;
        this.ringer = undefined;
        signal?.removeEventListener('abort', onAbort);
        cancel?.();
        if (abortedBy) reject(abortedBy.reason);
        else resolve();
      };
      const ring = () => end();
      const onAbort = () => end(signal);
      this.ringer = ring;
      signal?.addEventListener('abort', onAbort, { once: true });
      if (ms !== Infinity) cancel = this.clock.timer(ms, ring);
    });
  }

  /** Ends the current sleep, if any. */
  ring(): void {
    this.ringer?.();
  }
}
