/**
 * Owners, leases, run claims and device locks of the store (issue: two processes on one state file mutated
 * devices twice). Each side has its own connection to one SQLite file, as two processes do.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { StoreDeviceLocks } from '../../src/runner/locks.js';
import { Lease } from '../../src/store/lease.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { OwnerInfo, RunRecord } from '../../src/store/store.js';
import { tempDir } from '../runner/helpers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function owner(id: string, o: Partial<OwnerInfo> = {}): OwnerInfo {
  return {
    id,
    role: 'daemon',
    pid: 4242,
    host: 'elsewhere',
    boot: 'b',
    startedAt: '2026-11-23T10:00:00.000Z',
    ...o,
  };
}

function run(id: string, o: Partial<RunRecord> = {}): RunRecord {
  return {
    id,
    playbook: 'pb',
    status: 'running',
    trigger: {},
    inputs: {},
    startedAt: `2026-11-23T10:00:0${id.length}Z`,
    ...o,
  };
}

describe('store: owners, leases, claims and device locks', () => {
  let dir: { dir: string; close(): Promise<void> };
  let a: SqliteStore;
  let b: SqliteStore;
  const T = 1_800_000_000_000;

  beforeEach(async () => {
    dir = await tempDir();
    const file = join(dir.dir, 'state.db');
    a = new SqliteStore(file);
    b = new SqliteStore(file);
  });

  afterEach(async () => {
    a.close();
    b.close();
    await dir.close();
  });

  it('refuses a second exclusive owner of the same role while the first lease holds, and names it', () => {
    expect(a.registerOwner(owner('first'), T, 15_000, true)).to.equal(undefined);
    const holder = b.registerOwner(owner('second', { pid: 7 }), T + 14_999, 15_000, true);
    expect(holder).to.include({
      id: 'first',
      pid: 4242,
      host: 'elsewhere',
      startedAt: '2026-11-23T10:00:00.000Z',
    });
    // A `fleetbook run` is not exclusive: it joins a daemon's store.
    expect(b.registerOwner(owner('cli', { role: 'run' }), T + 1, 15_000, false)).to.equal(undefined);
    // Once the first lease expires, the file is free.
    expect(b.registerOwner(owner('second', { pid: 7 }), T + 15_000, 15_000, true)).to.equal(undefined);
    expect(a.liveOwners(T + 15_000).map((o) => o.id)).to.have.members(['cli', 'second']);
  });

  it('a renewed lease holds; an expired one is lost for good', () => {
    a.registerOwner(owner('first'), T, 1_000, true);
    expect(a.renewOwner('first', T + 900, 1_000)).to.equal(true);
    expect(b.registerOwner(owner('second'), T + 1_800, 1_000, true)?.id).to.equal('first');
    // Not renewed in time: another owner took the file, and the late renewal fails.
    expect(b.registerOwner(owner('second'), T + 1_900, 1_000, true)).to.equal(undefined);
    expect(a.renewOwner('first', T + 1_950, 1_000)).to.equal(false);
  });

  it('claims only the runs no live owner holds, each exactly once', () => {
    a.registerOwner(owner('daemon'), T, 1_000, true);
    b.registerOwner(owner('cli', { role: 'run' }), T, 1_000, false);
    a.createRun(run('d1', { owner: 'daemon' }));
    b.createRun(run('c1', { owner: 'cli' }));
    a.createRun(run('old')); // from before owners existed
    a.createRun(run('done', { status: 'succeeded' }));
    a.createRun(run('other', { playbook: 'another' }));

    expect(b.claimRuns('cli', ['pb'], T + 10).map((r) => r.id)).to.deep.equal(['old']);
    expect(a.claimRuns('daemon', undefined, T + 10).map((r) => r.id)).to.deep.equal(['other']);
    // The cli's lease expires: its own run is the daemon's to resume, once...
    a.renewOwner('daemon', T + 900, 1_000);
    const taken = a.claimRuns('daemon', undefined, T + 1_500);
    // ...and so is the run it had claimed.
    expect(taken.map((r) => [r.id, r.owner])).to.deep.equal([
      ['c1', 'daemon'],
      ['old', 'daemon'],
    ]);
    expect(b.claimRuns('late', undefined, T + 1_500)).to.deep.equal([]);
    expect(a.getRun('c1')?.owner).to.equal('daemon');
  });

  it('locks all of a set of devices or none, and frees the locks of an owner whose lease expired', () => {
    a.registerOwner(owner('A'), T, 1_000, false);
    b.registerOwner(owner('B'), T, 1_000, false);
    expect(a.lockDevices('A', 'A/1', ['d1', 'd2', 'd3', 'd2'], T)).to.equal(undefined);
    expect(b.lockDevices('B', 'B/1', ['d4', 'd3'], T)).to.equal('d3');
    // None of B's was taken: d4 is still free for A.
    expect(a.lockDevices('A', 'A/2', ['d4'], T)).to.equal(undefined);
    a.unlockDevices(['A/1']);
    expect(b.lockDevices('B', 'B/1', ['d3'], T)).to.equal(undefined);
    expect(b.lockDevices('B', 'B/2', ['d4'], T)).to.equal('d4');
    // A is gone (no renewal): its locks are taken over once its lease has expired.
    b.renewOwner('B', T + 900, 1_000);
    expect(b.lockDevices('B', 'B/2', ['d4'], T + 1_000)).to.equal(undefined);
  });

  it("a holder refused takes nothing; released, its devices are free; an owner's own claims are its own", async () => {
    a.registerOwner(owner('A'), T, 1_000, false);
    b.registerOwner(owner('B'), T, 1_000, false);
    expect(a.lockDevices('A', 'A/1', ['d2'], T)).to.equal(undefined);
    // B is refused d2, and holds nothing: d1 is still free for a third owner.
    expect(b.lockDevices('B', 'B/1', ['d1', 'd2'], T)).to.equal('d2');
    const c = new SqliteStore(join(dir.dir, 'state.db'));
    try {
      c.registerOwner(owner('C'), T, 1_000, false);
      expect(c.lockDevices('C', 'C/1', ['d1'], T)).to.equal(undefined);
      c.unlockDevices(['C/1']);
    } finally {
      c.close();
    }
    // A orders its own acquisitions: its claims do not stand in its own way.
    expect(a.lockDevices('A', 'A/2', ['d2', 'd3'], T)).to.equal(undefined);
    a.unlockDevices(['A/1', 'A/2']);
    expect(b.lockDevices('B', 'B/1', ['d1', 'd2'], T)).to.equal(undefined);
    expect(a.lockDevices('A', 'A/3', ['d1'], T)).to.equal('d1');
    b.unlockDevices(['B/1']);
    // Read from the file as another process would, once B's turn is committed.
    await b.durable();
    const claims = () => (a.db.prepare('SELECT count(*) AS n FROM device_claims').get() as { n: number }).n;
    expect(claims()).to.equal(0);
  });

  it('StoreDeviceLocks waits for a device another process holds, and takes it once freed', async () => {
    const now = Date.now();
    a.registerOwner(owner('A'), now, 60_000, false);
    b.registerOwner(owner('B'), now, 60_000, false);
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
    expect(a.lockDevices('A', 'probe', ['z'], Date.now()), 'z, held by B').to.equal('z');
    releaseB();
    // Freed in memory at once, in the store with the other releases of this turn of the event loop.
    expect(a.lockDevices('A', 'probe', ['y', 'z'], Date.now())).to.equal('y');
    await new Promise((r) => setImmediate(r));
    expect(a.lockDevices('A', 'probe', ['y', 'z'], Date.now())).to.equal(undefined);
  });

  it('StoreDeviceLocks gives up waiting when the run is cancelled', async () => {
    const now = Date.now();
    a.registerOwner(owner('A'), now, 60_000, false);
    b.registerOwner(owner('B'), now, 60_000, false);
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

  it('a Lease refuses a second daemon with a message naming the file and the owner', () => {
    const first = new Lease({
      store: a,
      role: 'daemon',
      leaseMs: 15_000,
      exclusive: true,
      describe: 'the state file x.db (FLEETBOOK_STATE)',
      onLost: () => undefined,
    });
    try {
      expect(
        () =>
          new Lease({
            store: b,
            role: 'daemon',
            leaseMs: 15_000,
            exclusive: true,
            describe: 'the state file x.db (FLEETBOOK_STATE)',
            onLost: () => undefined,
          }),
      )
        .to.throw(
          /the state file x\.db \(FLEETBOOK_STATE\) is in use by another fleetbook serve: pid \d+ on .+, since 20\d\d-/,
        )
        .with.property('code', 'FB_CONFIG');
    } finally {
      first.release();
    }
    // Released on a clean stop: the next daemon starts at once.
    new Lease({
      store: b,
      role: 'daemon',
      leaseMs: 15_000,
      exclusive: true,
      describe: 'x',
      onLost: () => undefined,
    }).release();
  });

  it('a Lease on this host whose process is gone is known dead at once, before its lease expires', () => {
    const boot = (() => {
      const l = new Lease({
        store: a,
        role: 'run',
        leaseMs: 60_000,
        exclusive: false,
        describe: 'x',
        onLost: () => undefined,
      });
      const me = a.liveOwners(Date.now()).find((o) => o.id === l.id)!;
      l.release();
      return me;
    })();
    // A daemon of this host and boot, with a pid that no process has.
    a.registerOwner({ ...boot, id: 'dead', role: 'daemon', pid: 2 ** 22 + 1 }, Date.now(), 60_000, true);
    const next = new Lease({
      store: b,
      role: 'daemon',
      leaseMs: 60_000,
      exclusive: true,
      describe: 'x',
      onLost: () => undefined,
    });
    next.release();
  });

  it('a Lease that could not renew in time reports the loss', async () => {
    let lost: Error | undefined;
    const l = new Lease({
      store: a,
      role: 'run',
      leaseMs: 60,
      exclusive: false,
      describe: 'the state file y.db',
      onLost: (e) => (lost = e),
    });
    // Another process removes it, as one does to an owner whose lease expired.
    b.releaseOwner(l.id);
    await sleep(80);
    expect(lost?.message).to.match(/lost the lease on the state file y\.db/);
    l.release();
  });
});
