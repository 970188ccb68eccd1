/**
 * Requests held before they act, for a test to choose the moment something happens around them (a client
 * killed, a daemon restarted) whatever the machine's speed: `Emulator.hold(action)` lets the first requests of
 * an action through, then holds the next ones, after their latency and before they are counted or act, until
 * the test releases them.
 */
import { isAction } from '../api/catalog.js';

/** A hold on one action's requests, as `Emulator.hold` returns it. */
export interface Hold {
  /** Requests of the action waiting now. */
  readonly held: number;
  /** Lets every held request go on to act, and holds no more. */
  release(): void;
}

interface Held {
  /** Requests still let through before the hold starts. */
  pass: number;
  held: number;
  released: Promise<void>;
  release: () => void;
}

export class Holds {
  private readonly byAction = new Map<string, Held>();

  /** Whether any hold is in force (so that the requests of a world with none do not wait a turn). */
  get any(): boolean {
    return this.byAction.size > 0;
  }

  /**
   * Holds the requests of `action` after the next `pass` of them. A hold already on the action is released
   * first. Throws a RangeError for an action not in the catalog, or a `pass` that is not a whole number from 0.
   */
  hold(action: string, pass = 0): Hold {
    if (!isAction(action))
      throw new RangeError(
        `Expected \`action\` to be an action of the catalog (e.g. devices.suspend), got ${action}`,
      );
    if (!Number.isInteger(pass) || pass < 0)
      throw new RangeError(`Expected \`pass\` to be a whole number from 0, got ${String(pass)}`);
    this.byAction.get(action)?.release();
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    const h: Held = {
      pass,
      held: 0,
      released,
      release: () => {
        if (this.byAction.get(action) === h) this.byAction.delete(action);
        release();
      },
    };
    this.byAction.set(action, h);
    return {
      get held() {
        return h.held;
      },
      release: h.release,
    };
  }

  /** Resolves once a request of `action` may act: at once, unless a hold takes it. */
  async wait(action: string): Promise<void> {
    const h = this.byAction.get(action);
    if (!h) return;
    if (h.pass > 0) {
      h.pass--;
      return;
    }
    h.held++;
    try {
      await h.released;
    } finally {
      h.held--;
    }
  }

  /** Releases every hold (the emulator closing). */
  releaseAll(): void {
    for (const h of [...this.byAction.values()]) h.release();
  }
}
