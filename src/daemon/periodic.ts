/**
 * A daemon's background work done at start, every interval, and when asked (`kick` at once, `soon` within a
 * time): one at a time, a kick during a pass making one more pass after it, never a queue of them. Its errors
 * are the work's own to report.
 */
import { systemClock, type Clock } from '../clock.js';

/** The machine's clock, its timers holding no process open: a background pass is no reason to stay up. */
const backgroundClock: Clock = {
  ...systemClock,
  timer: (ms, fire) => {
    const t = setTimeout(fire, Math.max(0, ms)).unref();
    return () => clearTimeout(t);
  },
};

export class Periodic {
  private cancelEvery: (() => void) | undefined;
  private first: NodeJS.Immediate | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private cancelSoon: (() => void) | undefined;

  /**
   * @param everyMs Time between the passes of the interval.
   * @param work One pass.
   * @param clock Whose timers time the interval and `soon`. @default the machine's, holding no process open
   */
  constructor(
    private readonly everyMs: number,
    private readonly work: () => Promise<void>,
    private readonly clock: Clock = backgroundClock,
  ) {}

  start(): void {
    this.first = setImmediate(() => this.kick());
    this.every();
  }

  /** A pass every `everyMs`, whatever the passes take (a pass still under way makes one more after it). */
  private every(): void {
    this.cancelEvery = this.clock.timer(this.everyMs, () => {
      if (this.stopped) return;
      this.every();
      this.kick();
    });
  }

  /** A pass now, or once the one under way has ended. */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.work().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.kick();
      }
    });
  }

  /**
   * A pass within `ms`: however many times this is asked meanwhile, one pass (a daemon storing thousands of
   * callbacks a second asks at each commit).
   */
  soon(ms: number): void {
    if (this.stopped || this.cancelSoon) return;
    this.cancelSoon = this.clock.timer(ms, () => {
      this.cancelSoon = undefined;
      this.kick();
    });
  }

  /** No more passes; resolves once the one under way has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearImmediate(this.first);
    this.cancelEvery?.();
    this.cancelSoon?.();
    await this.running;
  }
}
