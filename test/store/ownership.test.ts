/**
 * Owners, leases, run claims and device locks of the store (issue: two processes on one state file mutated
 * devices twice), on every backend. Each side has a store of its own on the same data, as two processes (or two
 * replicas) do: on SQLite, two connections to one file.
 */
import { expect } from 'chai';
import { groupResults } from '../../src/runner/devices.js';
import { StoreDeviceLocks } from '../../src/runner/locks.js';
import { Lease, type LeaseOptions } from '../../src/store/lease.js';
import type { RunRecord, Store } from '../../src/store/store.js';
import { forEachBackend } from './backends.js';
import { ok, owner, run, sleep, until } from './fixtures.js';

/** A run of playbook `pb`, started as many seconds after 10:00 as its id is long: they claim in that order. */
const timed = (id: string, o: Partial<RunRecord> = {}): RunRecord =>
  run(id, { startedAt: `2026-11-23T10:00:0${id.length}Z`, ...o });

const lease = (store: Store, o: Partial<LeaseOptions> = {}) =>
  Lease.acquire({
    store,
    role: 'daemon',
    leaseMs: 15_000,
    exclusive: true,
    onLost: () => undefined,
    ...o,
  });

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

forEachBackend('owners, leases, claims and device locks', (bk) => {
  let a: Store;
  let b: Store;
  const T = 1_800_000_000_000;

  beforeEach(async () => {
    a = await bk.open();
    b = await bk.reopen(a);
  });

  it('refuses a second exclusive owner of the same role while the first lease holds, and names it', async () => {
    expect(await a.registerOwner(owner('first'), T, 15_000, true)).to.equal(undefined);
    const holder = await b.registerOwner(owner('second', { pid: 7 }), T + 14_999, 15_000, true);
    expect(holder).to.include({
      id: 'first',
      pid: 4242,
      host: 'elsewhere',
      startedAt: '2026-11-23T10:00:00.000Z',
    });
    // A `fleetbook run` is not exclusive: it joins a daemon's store.
    expect(await b.registerOwner(owner('cli', { role: 'run' }), T + 1, 15_000, false)).to.equal(undefined);
    // Once the first lease expires, the store is free.
    expect(await b.registerOwner(owner('second', { pid: 7 }), T + 15_000, 15_000, true)).to.equal(undefined);
    expect((await a.liveOwners(T + 15_000)).map((o) => o.id)).to.have.members(['cli', 'second']);
  });

  it('a renewed lease holds; an expired one is lost for good', async () => {
    await a.registerOwner(owner('first'), T, 1_000, true);
    expect(await a.renewOwner('first', T + 900, 1_000)).to.equal(true);
    expect((await b.registerOwner(owner('second'), T + 1_800, 1_000, true))?.id).to.equal('first');
    // Not renewed in time: another owner took the store, and the late renewal fails.
    expect(await b.registerOwner(owner('second'), T + 1_900, 1_000, true)).to.equal(undefined);
    expect(await a.renewOwner('first', T + 1_950, 1_000)).to.equal(false);
  });

  it('claims only the runs no live owner holds, each exactly once', async () => {
    await a.registerOwner(owner('daemon'), T, 1_000, true);
    await b.registerOwner(owner('cli', { role: 'run' }), T, 1_000, false);
    a.createRun(timed('d1', { owner: 'daemon' }));
    // A dry run of `fleetbook run --dry-run`: whoever takes it up must know it is one.
    b.createRun(timed('c1', { owner: 'cli', dryRun: true }));
    a.createRun(timed('old')); // from before owners existed
    a.createRun(timed('done', { status: 'succeeded' }));
    a.createRun(timed('other', { playbook: 'another' }));
    await Promise.all([a.durable(), b.durable()]);

    expect((await b.claimRuns('cli', ['pb'], T + 10)).map((r) => r.id)).to.deep.equal(['old']);
    expect((await a.claimRuns('daemon', undefined, T + 10)).map((r) => r.id)).to.deep.equal(['other']);
    // The cli's lease expires: its own run is the daemon's to resume, once...
    await a.renewOwner('daemon', T + 900, 1_000);
    const taken = await a.claimRuns('daemon', undefined, T + 1_500);
    // ...and so is the run it had claimed.
    expect(taken.map((r) => [r.id, r.owner, r.dryRun ?? false])).to.deep.equal([
      ['c1', 'daemon', true],
      ['old', 'daemon', false],
    ]);
    expect(await b.claimRuns('late', undefined, T + 1_500)).to.deep.equal([]);
    expect((await a.getRun('c1'))?.owner).to.equal('daemon');
    expect((await b.getRun('c1'))?.owner).to.equal('daemon');
  });

  it('claims one run by its id, only when no live owner holds it and it is unfinished', async () => {
    await a.registerOwner(owner('daemon'), T, 1_000, true);
    await b.registerOwner(owner('cancel', { role: 'run' }), T, 1_000, false);
    a.createRun(timed('held', { owner: 'daemon' }));
    a.createRun(timed('free1'));
    a.createRun(timed('free2'));
    a.createRun(timed('done', { status: 'failed' }));
    await a.durable();
    expect(await b.claimRuns('cancel', undefined, T + 10, 'held')).to.deep.equal([]);
    expect(await b.claimRuns('cancel', undefined, T + 10, 'done')).to.deep.equal([]);
    expect((await b.claimRuns('cancel', undefined, T + 10, 'free2')).map((r) => r.id)).to.deep.equal([
      'free2',
    ]);
    // The other run no one holds was left for whoever claims next.
    expect((await a.getRun('free1'))?.owner).to.equal(undefined);
    expect((await a.claimRuns('daemon', undefined, T + 10)).map((r) => r.id)).to.deep.equal(['free1']);
  });

  it('asks the holder of an unfinished run to cancel it, through another store on the same data', async () => {
    await a.registerOwner(owner('daemon'), T, 1_000, true);
    a.createRun(timed('mine', { owner: 'daemon' }));
    a.createRun(timed('other', { owner: 'someone' }));
    a.createRun(timed('done', { status: 'succeeded', owner: 'daemon' }));
    await a.durable();
    expect(await a.cancelRequests('daemon')).to.deep.equal([]);
    // Asked from elsewhere: a console on another replica, `fleetbook runs cancel`.
    expect(await b.requestCancel('mine', 'cancelled from the console')).to.equal(true);
    expect(await b.requestCancel('other', 'cancelled by hand')).to.equal(true);
    expect(await b.requestCancel('done', 'too late')).to.equal(false);
    expect(await b.requestCancel('nowhere', 'no such run')).to.equal(false);
    expect(await a.cancelRequests('daemon')).to.deep.equal([
      { runId: 'mine', reason: 'cancelled from the console' },
    ]);
    // The run says so to anyone who reads it, until it has ended.
    expect((await a.getRun('mine'))?.cancelRequested).to.equal('cancelled from the console');
    const listed = await b.listRuns({});
    expect(listed.map((r) => [r.id, r.cancelRequested])).to.deep.equal([
      ['other', 'cancelled by hand'],
      ['mine', 'cancelled from the console'],
      ['done', undefined],
    ]);
    // Once it has ended, the request is not given again, nor said.
    a.updateRun('mine', { status: 'cancelled', endedAt: '2026-11-23T10:01:00.000Z' });
    await a.durable();
    expect(await a.cancelRequests('daemon')).to.deep.equal([]);
    expect((await b.getRun('mine'))?.cancelRequested).to.equal(undefined);
    // A run claimed after its owner is gone carries its request to the new owner.
    await a.registerOwner(owner('someone'), T, 1_000, false);
    await a.releaseOwner('someone');
    const claimed = await a.claimRuns('daemon', undefined, T + 10);
    expect(claimed.map((r) => [r.id, r.cancelRequested])).to.deep.equal([['other', 'cancelled by hand']]);
    expect(await a.cancelRequests('daemon')).to.deep.equal([{ runId: 'other', reason: 'cancelled by hand' }]);
  });

  it('locks all of a set of devices or none, and frees the locks of an owner whose lease expired', async () => {
    await a.registerOwner(owner('A'), T, 1_000, false);
    await b.registerOwner(owner('B'), T, 1_000, false);
    expect(await a.lockDevices('A', 'A/1', ['d1', 'd2', 'd3', 'd2'], T)).to.equal(undefined);
    expect(await b.lockDevices('B', 'B/1', ['d4', 'd3'], T)).to.equal('d3');
    // None of B's was taken: d4 is still free for A.
    expect(await a.lockDevices('A', 'A/2', ['d4'], T)).to.equal(undefined);
    a.unlockDevices(['A/1']);
    await a.durable();
    expect(await b.lockDevices('B', 'B/1', ['d3'], T)).to.equal(undefined);
    expect(await b.lockDevices('B', 'B/2', ['d4'], T)).to.equal('d4');
    // A is gone (no renewal): its locks are taken over once its lease has expired.
    await b.renewOwner('B', T + 900, 1_000);
    expect(await b.lockDevices('B', 'B/2', ['d4'], T + 1_000)).to.equal(undefined);
  });

  it("a holder refused takes nothing; released, its devices are free; an owner's own claims are its own", async () => {
    await a.registerOwner(owner('A'), T, 1_000, false);
    await b.registerOwner(owner('B'), T, 1_000, false);
    expect(await a.lockDevices('A', 'A/1', ['d2'], T)).to.equal(undefined);
    // B is refused d2, and holds nothing: d1 is still free for a third owner.
    expect(await b.lockDevices('B', 'B/1', ['d1', 'd2'], T)).to.equal('d2');
    const c = await bk.reopen(a);
    await c.registerOwner(owner('C'), T, 1_000, false);
    expect(await c.lockDevices('C', 'C/1', ['d1'], T)).to.equal(undefined);
    c.unlockDevices(['C/1']);
    await c.close();
    // A orders its own acquisitions: its claims do not stand in its own way.
    expect(await a.lockDevices('A', 'A/2', ['d2', 'd3'], T)).to.equal(undefined);
    a.unlockDevices(['A/1', 'A/2']);
    await a.durable();
    expect(await b.lockDevices('B', 'B/1', ['d1', 'd2'], T)).to.equal(undefined);
    expect(await a.lockDevices('A', 'A/3', ['d1'], T)).to.equal('d1');
    b.unlockDevices(['B/1']);
    // Read from the store as another process would, once B's turn is committed: no device is held.
    await b.durable();
    const d = await bk.reopen(a);
    await d.registerOwner(owner('D'), T, 1_000, false);
    expect(await d.lockDevices('D', 'D/1', ['d1', 'd2', 'd3', 'd4'], T)).to.equal(undefined);
  });

  it('answers acquisitions asked for at once each on its own: all of one, or none and the device held', async () => {
    await a.registerOwner(owner('A'), T, 1_000, false);
    await b.registerOwner(owner('B'), T, 1_000, false);
    expect(await a.lockDevices('A', 'A/1', ['d3', 'd7'], T)).to.equal(undefined);
    // Together (on PostgreSQL the first goes alone, the rest in one statement): B/3 is refused d7 and gives back
    // d5, which B/4, asking for it too, then takes; B/6 shares no device with them.
    const answers = await Promise.all([
      b.lockDevices('B', 'B/1', ['d1'], T),
      b.lockDevices('B', 'B/2', ['d2', 'd1b'], T),
      b.lockDevices('B', 'B/3', ['d5', 'd8', 'd7', 'd3'], T),
      b.lockDevices('B', 'B/4', ['d5'], T),
      b.lockDevices('B', 'B/5', ['d9', 'd3'], T),
      b.lockDevices('B', 'B/6', ['d6', 'd6'], T),
    ]);
    // A refused acquisition names a device another owner holds (PostgreSQL the first in the caller's order).
    expect([answers[0], answers[1], answers[3], answers[4], answers[5]]).to.deep.equal([
      undefined,
      undefined,
      undefined,
      'd3',
      undefined,
    ]);
    expect(answers[2]).to.be.oneOf(bk.name === 'PostgreSQL' ? ['d7'] : ['d7', 'd3']);
    // What each holds, as a third owner finds it: B's refused acquisitions hold nothing.
    const c = await bk.reopen(a);
    await c.registerOwner(owner('C'), T, 1_000, false);
    const found: Record<string, string | undefined> = {};
    for (const d of ['d1', 'd1b', 'd2', 'd3', 'd5', 'd6', 'd7', 'd8', 'd9'])
      found[d] = await c.lockDevices('C', `C/${d}`, [d], T);
    expect(Object.keys(found).filter((d) => found[d] === undefined)).to.deep.equal(['d8', 'd9']);
    await c.close();
  });

  it('StoreDeviceLocks waits for a device another process holds, and takes it once freed', async () => {
    const now = Date.now();
    await a.registerOwner(owner('A'), now, 60_000, false);
    await b.registerOwner(owner('B'), now, 60_000, false);
    const lockA = new StoreDeviceLocks(a, 'A', undefined, 10);
    const lockB = new StoreDeviceLocks(b, 'B', undefined, 10);
    const releaseA = await lockA.acquire(['x', 'y']);
    let got = false;
    const waiting = lockB.acquire(['y', 'z']).then((release) => {
      got = true;
      return release;
    });
    await sleep(80);
    expect(got, 'B took a device that A holds').to.equal(false);
    releaseA();
    const releaseB = await waiting;
    expect(await a.lockDevices('A', 'probe', ['z'], Date.now()), 'z, held by B').to.equal('z');
    releaseB();
    // Freed in memory at once, in the store with the other releases of this turn of the event loop.
    if (bk.synchronous) expect(await a.lockDevices('A', 'probe', ['y', 'z'], Date.now())).to.equal('y');
    await new Promise((r) => setImmediate(r));
    await b.durable();
    expect(await a.lockDevices('A', 'probe', ['y', 'z'], Date.now())).to.equal(undefined);
  });

  it('StoreDeviceLocks gives up waiting when the run is cancelled', async () => {
    const now = Date.now();
    await a.registerOwner(owner('A'), now, 60_000, false);
    await b.registerOwner(owner('B'), now, 60_000, false);
    await new StoreDeviceLocks(a, 'A', undefined, 10).acquire(['x']);
    const controller = new AbortController();
    const waiting = new StoreDeviceLocks(b, 'B', undefined, 10).acquire(['x'], controller.signal);
    setTimeout(() => controller.abort(new Error('cancelled')), 30);
    const err = await waiting.then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).to.equal('cancelled');
  });

  it('fenced to a lease, writes nothing once another owner took its expired lease over', async () => {
    // Measured before: a replica frozen past its lease, thawed, recorded its late results over the run another
    // replica had taken over and ended, and took device locks (test/daemon/replica-frozen.test.ts).
    const now = Date.now();
    await a.registerOwner(owner('frozen'), now - 2_000, 1_000, false);
    await a.durable();
    const told: Error[] = [];
    a.fence('frozen', (e) => told.push(e));
    await b.registerOwner(owner('live'), now, 60_000, false);
    expect((await b.claimRuns('live', undefined, now)).length).to.equal(0);
    // The turn's writes, a device lock and a claim: each rolled back, as a LeaseLostError.
    a.createRun(run('late'));
    a.recordDevices('r', 'step', groupResults([ok(1)]), '2026-11-23T10:00:00.000Z');
    const durable = await a.durable().then(
      () => undefined,
      (e: unknown) => e as Error & { code?: string },
    );
    expect(durable?.code).to.equal('FB_LEASE_LOST');
    for (const attempt of [
      () => a.lockDevices('frozen', 'frozen/1', ['d1'], Date.now()),
      () => a.claimRuns('frozen', undefined, Date.now()),
    ]) {
      const e = await attempt().then(
        () => undefined,
        (err: unknown) => err as Error & { code?: string },
      );
      expect(e?.code).to.equal('FB_LEASE_LOST');
    }
    expect(told.map((e) => e.message)).to.deep.equal([
      'the lease of this process (owner frozen) on the store was lost: another process may act on its runs, so nothing more it writes is committed',
    ]);
    expect(await bk.query(b, `SELECT id FROM runs`)).to.deep.equal([]);
    expect(await bk.query(b, `SELECT run_id FROM ledger`)).to.deep.equal([]);
    expect(await b.lockDevices('live', 'live/1', ['d1'], Date.now())).to.equal(undefined);
    // Unfenced (once what failed is learnt), the same store writes again.
    await a.durable().catch(() => undefined);
    a.fence(undefined);
    a.createRun(run('after'));
    await a.durable();
    expect(await bk.query(b, `SELECT id FROM runs`)).to.deep.equal([{ id: 'after' }]);
  });

  it('a Lease checks, before a mutation leaves, that it still holds by the clock', async () => {
    let clock = 1_000_000;
    const lost: Error[] = [];
    const l = await lease(a, { leaseMs: 1_000, now: () => clock, onLost: (e) => lost.push(e) });
    clock += 999;
    l.check();
    clock += 1;
    expect(() => l.check()).to.throw(/lease of this process .* was lost/);
    expect(lost).to.have.length(1);
    expect(() => l.check()).to.throw(/was lost/);
    expect(lost).to.have.length(1);
  });

  it('a Lease refuses a second daemon with a message naming the store and the owner', async () => {
    const first = await lease(a);
    try {
      const refused = await lease(b).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(refused?.message).to.match(
        new RegExp(
          `^${escaped(b.describe)} is in use by another fleetbook serve: pid \\d+ on .+, since 20\\d\\d-`,
        ),
      );
      expect(refused).to.have.property('code', 'FB_CONFIG');
    } finally {
      await first.release();
    }
    // Released on a clean stop: the next daemon starts at once.
    await (await lease(b)).release();
  });

  it('a Lease on this host whose process is gone is known dead at once, before its lease expires', async () => {
    const l = await lease(a, { role: 'run', leaseMs: 60_000, exclusive: false });
    const me = (await a.liveOwners(Date.now())).find((o) => o.id === l.id)!;
    await l.release();
    // A daemon of this host and boot, with a pid that no process has.
    await a.registerOwner({ ...me, id: 'dead', role: 'daemon', pid: 2 ** 22 + 1 }, Date.now(), 60_000, true);
    const next = await lease(b, { leaseMs: 60_000 });
    expect((await b.liveOwners(Date.now())).map((o) => o.id)).to.deep.equal([next.id]);
    await next.release();
  });

  it('a Lease that could not renew in time reports the loss', async () => {
    let lost: Error | undefined;
    const l = await lease(a, {
      role: 'run',
      leaseMs: 60,
      exclusive: false,
      onLost: (e) => (lost = e),
    });
    // Another process removes it, as one does to an owner whose lease expired.
    await b.releaseOwner(l.id);
    await until(() => lost !== undefined);
    expect(lost?.message).to.match(new RegExp(`^lost the lease on ${escaped(a.describe)}: `));
    await l.release();
  });
});
