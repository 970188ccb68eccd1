/**
 * The in-process EventSource: `publish` hands an event to the steps waiting for one of its service whose
 * `match` accepts it (each waiter takes one event). The daemon publishes every callback as it is stored.
 */
import type { EventSource } from './runner.js';

interface Waiter {
  service: string;
  match: (event: unknown) => boolean;
  resolve: (event: unknown) => void;
}

export class EventHub implements EventSource {
  private readonly waiters = new Set<Waiter>();

  /** Steps waiting now. */
  get waiting(): number {
    return this.waiters.size;
  }

  wait(service: string, match: (event: unknown) => boolean, signal: AbortSignal): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const w: Waiter = { service, match, resolve };
      this.waiters.add(w);
      signal.addEventListener(
        'abort',
        () => {
          this.waiters.delete(w);
          reject(signal.reason as Error);
        },
        { once: true },
      );
    });
  }

  publish(service: string, event: unknown): void {
    for (const w of [...this.waiters]) {
      if (w.service !== service || !acceptsEvent(w.match, event)) continue;
      this.waiters.delete(w);
      w.resolve(event);
    }
  }
}

/** A match that cannot read an event of another shape does not accept it. */
export function acceptsEvent(match: (event: unknown) => boolean, event: unknown): boolean {
  try {
    return match(event);
  } catch {
    return false;
  }
}
