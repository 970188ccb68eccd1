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

  it('keeps the batches of one ordered list, several at a time, by their ranges: none in the map', async () => {
    const locks = new InProcessDeviceLocks();
    const list = Array.from({ length: 2000 }, (_, i) => String(356758880000000 + i * 7));
    const batches = [0, 1, 2, 3].map((b) => list.slice(b * 500, b * 500 + 500));
    const releases = await Promise.all(batches.map((b) => locks.acquire(b)));
    expect([locks.size, locks.holding]).to.deep.equal([0, 2000]);
    // A device of the third batch is held all the same: the hold that asks for it waits.
    let got = false;
    const late = locks.acquire(['356758880000001', list[1234] as string]).then((release) => {
      got = true;
      return release;
    });
    await new Promise((r) => setTimeout(r, 10));
    expect(got, 'waits for the third batch').to.equal(false);
    for (const [i, release] of releases.entries()) if (i !== 2) release();
    await new Promise((r) => setTimeout(r, 10));
    expect(got, 'still waits for the third batch').to.equal(false);
    releases[2]?.();
    (await late)();
    expect(locks.holding).to.equal(0);
  });

  it('holds whose ranges meet but share no device both go on; one sharing a device waits', async () => {
    const locks = new InProcessDeviceLocks();
    const odd = await locks.acquire(['a1', 'a3', 'a5', 'a7']);
    const even = await locks.acquire(['a2', 'a4', 'a6']);
    expect(locks.size, 'compared id by id').to.equal(7);
    let got = false;
    const shared = locks.acquire(['a0', 'a6']).then((release) => {
      got = true;
      return release;
    });
    await new Promise((r) => setTimeout(r, 10));
    expect(got).to.equal(false);
    odd();
    await new Promise((r) => setTimeout(r, 10));
    expect(got, 'a6 is the even hold’s').to.equal(false);
    even();
    (await shared)();
  });

  it('past 64 holds kept by their ranges, a new one goes into the map and still waits for theirs', async () => {
    const locks = new InProcessDeviceLocks();
    const singles = await Promise.all(Array.from({ length: 64 }, (_, i) => locks.acquire([`s${1000 + i}`])));
    expect(locks.size).to.equal(0);
    const mapped = await locks.acquire(['t1']);
    expect(locks.size).to.equal(1);
    let got = false;
    const again = locks.acquire(['s1010']).then((release) => {
      got = true;
      return release;
    });
    await new Promise((r) => setTimeout(r, 10));
    expect(got, 's1010 is held by range').to.equal(false);
    for (const release of singles) release();
    (await again)();
    mapped();
    expect(locks.holding).to.equal(0);
  });

  it('keeps about as many ids as it holds, however many it has released', async () => {
    const locks = new InProcessDeviceLocks();
    // '0' and 'z' bound every id below: each later hold's range meets this one's, so all go into the map.
    const kept = ['0', 'z', ...Array.from({ length: 1000 }, (_, i) => `kept-${i}`)];
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
