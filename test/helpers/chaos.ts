/**
 * What the kill tests share (test/daemon/crash.test.ts, one daemon; test/daemon/replicas-chaos.test.ts, replicas
 * on one database): a seeded generator for the kill points and the callback mix, a sender of callbacks that
 * knows what it sent and what the listener acknowledged, as the service does, and what they check afterwards.
 */
import { expect } from 'chai';
import type { Emulator } from '../../src/emulator/index.js';
import { accountDevices, calls, emulator, imei, sizeForActive } from '../runner/helpers.js';

/**
 * An emulator whose first account has exactly `active` active devices (the seed decides each device's state:
 * `seeded` devices are enough to find them), and those devices' IMEIs.
 */
export async function emulatorWithActive(
  active: number,
  seeded: number,
): Promise<{ emu: Emulator; account: string; active: string[] }> {
  const emu = await emulator({ devicesPerAccount: seeded });
  const account = emu.defaults.accounts[0]!;
  const devicesPerAccount = await sizeForActive(emu, account, active);
  expect(devicesPerAccount, `the seed has ${active} active devices`).to.be.greaterThan(0);
  emu.reset({ devicesPerAccount });
  const ids = (await accountDevices(emu, account)).filter((d) => d.state === 'active').map(imei);
  expect(ids).to.have.length(active);
  return { emu, account, active: ids };
}

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
  /** Those sent and not acknowledged yet, oldest first. */
  readonly unacked = new Set<string>();
  /** The acknowledged, in the order of their first acknowledgement: what `recent` reads. */
  private readonly ackOrder: string[] = [];
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
    if (!wasAcked) this.unacked.add(requestId);
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
    if (!wasAcked) {
      this.acked.add(requestId);
      this.unacked.delete(requestId);
      this.ackOrder.push(requestId);
    }
    return true;
  }

  /**
   * The last `n` acknowledged (for a stream to send some again), without copying all: a stream reads this
   * before each post, thousands of times.
   */
  recent(n: number): string[] {
    return this.ackOrder.slice(-n);
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

/**
 * Every callback sent (acknowledged at once, or once sent again) has exactly one of `runs`, ended well; none is
 * for a callback never sent; no acknowledged callback was stored again as new.
 */
export function expectRunPerCallback(
  runs: { requestId?: string; status: string }[],
  s: Sender,
  context: string,
): void {
  const perRequest = new Map<string, number>();
  for (const r of runs) perRequest.set(r.requestId ?? '', (perRequest.get(r.requestId ?? '') ?? 0) + 1);
  const none = [...s.sent].filter((id) => !perRequest.has(id));
  expect(
    none.filter((id) => s.acked.has(id)),
    `acknowledged callbacks without a run (${context})`,
  ).to.deep.equal([]);
  expect(none, `callbacks without a run (${context})`).to.deep.equal([]);
  expect(
    [...perRequest].filter(([, n]) => n > 1).map(([id, n]) => `${id} x${n}`),
    `callbacks with more than one run (${context})`,
  ).to.deep.equal([]);
  expect(
    [...perRequest.keys()].filter((id) => !s.sent.has(id)),
    'runs for callbacks never sent',
  ).to.deep.equal([]);
  expect(
    runs.filter((r) => r.status !== 'succeeded').map((r) => `${r.requestId}: ${r.status}`),
    `callback runs not succeeded (${context})`,
  ).to.deep.equal([]);
  expect(s.storedAgain, `acknowledged, then stored again as new (${context})`).to.deep.equal([]);
}

/** Each of `active` suspended exactly once, by the emulator's own counters; no other device touched. */
export async function expectEachSuspendedOnce(
  emu: Emulator,
  active: string[],
  context: string,
): Promise<void> {
  const c = await calls(emu);
  const missing: string[] = [];
  const twice: string[] = [];
  for (const id of active) {
    const m = c.devices[id] ?? [];
    if (m.length === 0) missing.push(id);
    else if (m.length > 1 || m[0]!.action !== 'devices.suspend') twice.push(id);
  }
  expect(missing.length, `devices never suspended (${context})`).to.equal(0);
  expect(twice.length, `devices mutated more than once (${context})`).to.equal(0);
  expect(Object.keys(c.devices), 'devices mutated').to.have.length(active.length);
}
