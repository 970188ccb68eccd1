/**
 * What the kill tests share (test/daemon/crash.test.ts, one daemon; test/daemon/replicas-chaos.test.ts, replicas
 * on one database): a seeded generator for the kill points and the callback mix, and a sender of callbacks that
 * knows what it sent and what the listener acknowledged, as the service does.
 */

/** A small seeded generator (mulberry32): the same seed gives the same sequence. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What a sender of DeviceUsage callbacks knows: what it sent, and what the listener acknowledged (2xx). */
export class Sender {
  readonly sent = new Set<string>();
  readonly acked = new Set<string>();
  /** Acknowledged callbacks sent again and answered `stored`: the acknowledged one was lost. */
  readonly storedAgain: string[] = [];
  duplicates = 0;
  posted = 0;

  constructor(
    private readonly account: string,
    private readonly creds: { username: string; password: string },
  ) {}

  /** Posts one callback to the listener at `url`; true when it acknowledged it. */
  async post(url: string, requestId: string): Promise<boolean> {
    const wasAcked = this.acked.has(requestId);
    this.sent.add(requestId);
    this.posted++;
    let res: Response;
    try {
      res = await fetch(`${url}/callbacks/DeviceUsage`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          ...this.creds,
          requestId,
          deviceResponse: {
            alertServiceResponse: {
              triggerName: 'test',
              accountName: this.account,
              payAsYouGo: { deviceIds: [] },
            },
          },
        }),
      });
    } catch {
      return false; // killed under it, or not listening: the outcome is unknown, and the service sends it again
    }
    const answer = (await res.json().catch(() => ({}))) as { status?: string };
    if (res.status < 200 || res.status > 299) return false;
    if (wasAcked) {
      if (answer.status === 'stored') this.storedAgain.push(requestId);
      else this.duplicates++;
    }
    this.acked.add(requestId);
    return true;
  }

  /** The service's re-delivery: everything never acknowledged, until it is, each try to the listener `next()` names. */
  async resendUnacknowledged(next: () => string): Promise<void> {
    for (const id of this.sent) {
      if (this.acked.has(id)) continue;
      for (let i = 0; !(await this.post(next(), id)); i++) {
        if (i === 20) throw new Error(`callback ${id} never acknowledged`);
        await sleep(100);
      }
    }
  }
}
