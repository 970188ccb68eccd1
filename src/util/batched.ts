/**
 * Calls that go out together: the first goes at once, and those made while a batch is on its way wait for it and
 * then go in the next one. Under load, one round trip (one statement, planned once) serves many callers; alone,
 * a call waits for nothing. `send` answers each input of a batch, in the same order; when it fails, every call of
 * that batch fails with its error, and the next batch goes out all the same.
 */
export class Batched<In, Out> {
  private waiting: { input: In; resolve: (out: Out) => void; reject: (e: unknown) => void }[] = [];
  private sending = false;

  constructor(private readonly send: (inputs: In[]) => Promise<Out[]>) {}

  call(input: In): Promise<Out> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ input, resolve, reject });
      if (!this.sending) void this.sendWaiting();
    });
  }

  private async sendWaiting(): Promise<void> {
    this.sending = true;
    while (this.waiting.length) {
      const calls = this.waiting;
      this.waiting = [];
      try {
        const outs = await this.send(calls.map((c) => c.input));
        calls.forEach((c, i) => c.resolve(outs[i] as Out));
      } catch (e) {
        for (const c of calls) c.reject(e);
      }
    }
    this.sending = false;
  }
}
