/**
 * A daemon's background work done at start, every interval, and when asked (`kick` at once, `soon` within a
 * time): one at a time, a kick during a pass making one more pass after it, never a queue of them. Its errors
 * are the work's own to report.
 */
export class Periodic {
  private timer: NodeJS.Timeout | undefined;
  private first: NodeJS.Immediate | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private soonTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly everyMs: number,
    private readonly work: () => Promise<void>,
  ) {}

  start(): void {
    this.first = setImmediate(() => this.kick());
    this.timer = setInterval(() => this.kick(), this.everyMs);
    this.timer.unref();
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
    if (this.stopped || this.soonTimer) return;
    this.soonTimer = setTimeout(() => {
      this.soonTimer = undefined;
      this.kick();
    }, ms);
    this.soonTimer.unref();
  }

  /** No more passes; resolves once the one under way has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearImmediate(this.first);
    clearInterval(this.timer);
    clearTimeout(this.soonTimer);
    await this.running;
  }
}
