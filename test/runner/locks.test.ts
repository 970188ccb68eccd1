/**
 * Per-device locks across runs: two runs that suspend the same devices never have a call for them in flight
 * at once; runs on other devices are not held up; a waiting run can be cancelled.
 */
import { expect } from 'chai';
import type { Client } from '../../src/api/client.js';
import type { Emulator } from '../../src/emulator/index.js';
import { InProcessDeviceLocks } from '../../src/runner/locks.js';
import { runPlaybook } from '../../src/runner/runner.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import {
  accountDevices,
  clientFor,
  emulator,
  imei,
  memoryStore,
  playbook,
  setFaults,
  type SeedDevice,
} from './helpers.js';

describe('runner: per-device locks across runs', () => {
  it('takes all of a call’s devices at once, or waits; other devices go on; a waiter can be cancelled', async () => {
    const locks = new InProcessDeviceLocks();
    const releaseA = await locks.acquire(['d1', 'd2']);
    let bGot = false;
    const b = locks.acquire(['d2', 'd3']).then((release) => {
      bGot = true;
      return release;
    });
    const c = await locks.acquire(['d4']);
    await new Promise((r) => setTimeout(r, 20));
    expect(bGot, 'waits while d2 is held').to.equal(false);
    const cancel = new AbortController();
    const d = locks.acquire(['d1'], cancel.signal);
    cancel.abort(new Error('cancelled'));
    await d.then(
      () => expect.fail('a cancelled waiter must not get the lock'),
      (e: Error) => expect(e.message).to.equal('cancelled'),
    );
    releaseA();
    const releaseB = await b;
    expect(bGot).to.equal(true);
    releaseB();
    c();
    // Everything free again: a call for all of them goes through at once.
    (await locks.acquire(['d1', 'd2', 'd3', 'd4']))();
  });

  it('a call that finds one of its devices held holds none of them while it waits', async () => {
    const locks = new InProcessDeviceLocks();
    const releaseA = await locks.acquire(['d2']);
    let bGot = false;
    const b = locks.acquire(['d1', 'd2', 'd3']).then((release) => {
      bGot = true;
      return release;
    });
    await new Promise((r) => setTimeout(r, 10));
    // d1 and d3 are free while b waits for d2.
    const releaseC = await locks.acquire(['d3', 'd1', 'd1']);
    releaseA();
    await new Promise((r) => setTimeout(r, 10));
    expect(bGot, 'waits for d1 and d3 now').to.equal(false);
    releaseC();
    (await b)();
    expect(bGot).to.equal(true);
    (await locks.acquire(['d1', 'd2', 'd3']))();
  });

  it('a run alone in its process writes none of its ids into the map, and is still waited for', async () => {
    const locks = new InProcessDeviceLocks();
    const ids = Array.from({ length: 1000 }, (_, i) => `lone-${i}`);
    const releaseLone = await locks.acquire(ids);
    expect(locks.size, 'nothing to compare a lone hold with').to.equal(0);
    releaseLone();
    const releaseAgain = await locks.acquire(ids);
    expect(locks.size).to.equal(0);
    // A second holder comes: the first's ids are compared with it now.
    let got = false;
    const second = locks.acquire(['other', 'lone-500']).then((release) => {
      got = true;
      return release;
    });
    await new Promise((r) => setTimeout(r, 10));
    expect(got, 'waits for the lone holder’s device').to.equal(false);
    expect(locks.size).to.be.at.least(1000);
    releaseAgain();
    (await second)();
  });

  it('keeps about as many ids as it holds, however many it has released', async () => {
    const locks = new InProcessDeviceLocks();
    const kept = Array.from({ length: 1000 }, (_, i) => `kept-${i}`);
    const releaseKept = await locks.acquire(kept);
    for (let n = 0; n < 200; n++)
      (await locks.acquire(Array.from({ length: 1000 }, (_, i) => `${n}-${i}`)))();
    expect(locks.size).to.be.below(80_000);
    // What is still held stays held.
    let got = false;
    const again = locks.acquire([kept[999] as string]).then((release) => {
      got = true;
      return release;
    });
    await new Promise((r) => setTimeout(r, 10));
    expect(got).to.equal(false);
    releaseKept();
    (await again)();
  });

  describe('two runs suspending the same devices', () => {
    let emu: Emulator;
    let client: Client;
    let store: SqliteStore;
    let devices: SeedDevice[];
    let account: string;

    before(async () => {
      emu = await emulator({ devicesPerAccount: 20 });
      account = emu.defaults.accounts[0] as string;
      client = clientFor(emu);
      store = memoryStore();
      devices = (await accountDevices(emu, account)).filter((x) => x.state === 'active').slice(0, 6);
      await setFaults(emu, { latencyMs: 100 });
    });
    after(async () => {
      await store.close();
      await client.close();
      await emu.close();
    });

    it('never have calls for those devices in flight together', async () => {
      const inFlight: { start: number; end: number; ids: string[] }[] = [];
      const original = client.callByName.bind(client);
      client.callByName = async (name, input, opts) => {
        const entry = { start: Date.now(), end: Infinity, ids: [] as string[] };
        if (name === 'devices.suspend' || name === 'devices.restore') {
          entry.ids = JSON.stringify(input).match(/\d{15}/g) ?? [];
          inFlight.push(entry);
        }
        try {
          return await original(name, input, opts);
        } finally {
          entry.end = Date.now();
        }
      };
      const list = devices.map((x) => `{ id: "${imei(x)}", kind: imei }`).join(', ');
      const pb = (name: string, action: string) =>
        playbook(`
version: 1
name: ${name}
on: { manual: true }
steps:
  - id: act
    uses: ${action}
    with: { accountName: "${account}", devices: [${list}] }
`);
      const locks = new InProcessDeviceLocks();
      const [a, b] = await Promise.all([
        runPlaybook(pb('lock-suspend', 'devices.suspend'), { client, store, locks }),
        runPlaybook(pb('lock-restore', 'devices.restore'), { client, store, locks }),
      ]);
      expect(a.status, a.error).to.equal('succeeded');
      expect(inFlight).to.have.length(2);
      const [first, second] = [...inFlight].sort((x, y) => x.start - y.start) as [
        (typeof inFlight)[0],
        (typeof inFlight)[0],
      ];
      expect(first.ids.some((id) => second.ids.includes(id))).to.equal(true);
      expect(second.start, 'the second call waited for the first to end').to.be.at.least(first.end);
      expect(b.status, b.error).to.equal('succeeded');
    });
  });
});
