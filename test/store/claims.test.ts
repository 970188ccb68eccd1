/**
 * What stores on the same data decide at once, on every backend: a schedule's fire is claimed by one of them,
 * a run by one owner, a device by one owner, all of an acquisition or none. On SQLite, stores on one file play
 * processes; on PostgreSQL, replicas.
 */
import { expect } from 'chai';
import type { Store } from '../../src/store/store.js';
import { forEachBackend } from './backends.js';
import { owner, run } from './fixtures.js';

const T = 1_800_000_000_000;
const at = (minute: number) => `2026-11-24T03:${String(minute).padStart(2, '0')}:00.000Z`;
const queued = (id: string, startedAt = at(0)) => run(id, { status: 'queued', startedAt });

forEachBackend('claims decided by one store', (b) => {
  let a: Store;
  let c: Store;
  beforeEach(async () => {
    a = await b.open();
    c = await b.reopen(a);
  });

  it('recordFire claims a fire once: false for the same or an earlier time from another store', async () => {
    expect(await a.lastFire('nightly')).to.equal(undefined);
    expect(await a.recordFire('nightly', at(10), queued('fire-a'))).to.equal(true);
    // Read back at once, in the same turn.
    expect(await a.lastFire('nightly')).to.equal(at(10));
    expect(await a.getRun('fire-a')).to.deep.include({ id: 'fire-a', status: 'queued' });
    await a.durable();
    expect(await c.recordFire('nightly', at(10), queued('fire-c'))).to.equal(false);
    expect(await c.recordFire('nightly', at(9), queued('fire-c-early'))).to.equal(false);
    expect(await a.recordFire('nightly', at(10))).to.equal(false);
    // The fire refused stores no run, and leaves the last fire as it was.
    expect(await c.getRun('fire-c')).to.equal(undefined);
    expect(await c.getRun('fire-c-early')).to.equal(undefined);
    expect(await c.lastFire('nightly')).to.equal(at(10));
    // A later time fires; another schedule is a schedule of its own; a fire may start no run.
    expect(await c.recordFire('nightly', at(11), queued('fire-c-later'))).to.equal(true);
    expect(await a.recordFire('hourly', at(10))).to.equal(true);
    await c.durable();
    expect(await a.lastFire('nightly')).to.equal(at(11));
    expect(await a.lastFire('hourly')).to.equal(at(10));
    expect((await a.getRun('fire-c-later'))?.status).to.equal('queued');
  });

  it('recordFire from two stores at once: one of them claims each time, and one run is stored', async () => {
    for (let m = 0; m < 10; m++) {
      const claimed = await Promise.all([
        a.recordFire('every-minute', at(m), queued(`a-${m}`, at(m))),
        c.recordFire('every-minute', at(m), queued(`c-${m}`, at(m))),
      ]);
      expect(claimed.filter(Boolean), `the fire at ${at(m)}`).to.have.length(1);
    }
    await Promise.all([a.durable(), c.durable()]);
    const runs = await (await b.reopen(a)).listRuns({ limit: 100 });
    expect(runs.map((r) => r.startedAt).sort()).to.deep.equal(Array.from({ length: 10 }, (_, m) => at(m)));
    expect(await c.lastFire('every-minute')).to.equal(at(9));
  });

  it('claimRuns from three stores at once never gives one run to two of them', async () => {
    const third = await b.reopen(a);
    const stores = [a, c, third];
    const names = ['A', 'B', 'C'];
    await Promise.all(stores.map((s, i) => s.registerOwner(owner(names[i]!), T, 60_000, false)));
    const claimed = new Map<string, string>();
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 20; i++) a.createRun(queued(`r${round}-${String(i).padStart(2, '0')}`));
      await a.durable();
      const got = await Promise.all(stores.map((s, i) => s.claimRuns(names[i]!, undefined, T + round)));
      for (const [i, runs] of got.entries())
        for (const r of runs) {
          expect(claimed.get(r.id), `${r.id} claimed by ${names[i]}`).to.equal(undefined);
          expect(r.owner).to.equal(names[i]);
          claimed.set(r.id, names[i]!);
        }
      expect(claimed.size, `after round ${round}`).to.equal(20 * (round + 1));
    }
    // Each run's owner, as stored, is the one that got it.
    for (const [id, o] of claimed) expect((await third.getRun(id))?.owner, id).to.equal(o);
    expect(await Promise.all(stores.map((s, i) => s.claimRuns(names[i]!, undefined, T + 10)))).to.deep.equal([
      [],
      [],
      [],
    ]);
  });

  it('lockDevices from two owners at once: one gets all of its devices, the other none', async () => {
    await a.registerOwner(owner('A'), T, 60_000, false);
    await c.registerOwner(owner('B'), T, 60_000, false);
    const probe = await b.reopen(a);
    await probe.registerOwner(owner('P'), T, 60_000, false);
    const devices = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `d${from + i}`);
    for (let round = 0; round < 10; round++) {
      // A wants d0..d99, B d50..d149: they meet on d50..d99.
      const [forA, forB] = await Promise.all([
        a.lockDevices('A', `A/${round}`, devices(0, 100), T),
        c.lockDevices('B', `B/${round}`, devices(50, 150), T),
      ]);
      expect(
        [forA, forB].filter((x) => x === undefined),
        `round ${round}: one winner`,
      ).to.have.length(1);
      const refused = forA ?? forB;
      expect(devices(50, 100), `round ${round}: the device refused`).to.include(refused);
      // The loser holds nothing: its devices outside the meeting are free; the winner's are not.
      const [loserOnly, winnerOnly] =
        forA === undefined ? [devices(100, 150), devices(0, 50)] : [devices(0, 50), devices(100, 150)];
      expect(await probe.lockDevices('P', `P/${round}`, loserOnly, T)).to.equal(undefined);
      expect(winnerOnly).to.include(await probe.lockDevices('P', `P/${round}b`, winnerOnly, T));
      probe.unlockDevices([`P/${round}`, `P/${round}b`]);
      (forA === undefined ? a : c).unlockDevices([forA === undefined ? `A/${round}` : `B/${round}`]);
      await Promise.all([a.durable(), c.durable(), probe.durable()]);
    }
  });
});
