/**
 * A clock that moves only when the test moves it: `advance` fires the timers it passes, earliest first, each at
 * its time. Nothing waits for real, so what a test sees does not depend on how fast the machine is.
 */
import type { Clock } from '../../src/clock.js';

export class ManualClock implements Clock {
  private t: number;
  private timers: { at: number; seq: number; fire: () => void }[] = [];
  private seq = 0;

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  /** Timers set and not yet fired nor cancelled. */
  get pending(): number {
    return this.timers.length;
  }

  timer(ms: number, fire: () => void): () => void {
    const timer = { at: this.t + Math.max(0, ms), seq: this.seq++, fire };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => {
        cancel();
        reject(signal?.reason);
      };
      const cancel = this.timer(ms, () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Moves the clock on by `ms`, firing each timer due meanwhile at its time (one a fired timer sets is fired too
   * if it falls due), then lets the promises those timers settled run.
   */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      const due = this.timers.filter((t) => t.at <= end).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.t = due.at;
      due.fire();
    }
    this.t = end;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
