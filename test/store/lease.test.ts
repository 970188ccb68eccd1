/**
 * Which owners of the store a process knows to be gone (knownDead), as data: a pid names one process only on
 * the same host, during the same boot, in the same pid namespace. Containers with the host's network share its
 * host name and boot id, but not its pids; test/daemon/dead-holder.test.ts runs one where `unshare --pid` is
 * allowed, and this covers the rule everywhere.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { expect } from 'chai';
import { BOOT, knownDead, Lease } from '../../src/store/lease.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { Owner } from '../../src/store/store.js';
import { until } from '../helpers/browser.js';

/** Past the largest pid_max of Linux (2^22): no process has it. */
const GONE = 2 ** 22 + 1;
const BOOT_ID = '6f1c2a34-0d8e-4b6a-9c1f-2e7d5a8b3c90';
const ME = { pid: process.pid, host: 'host-a', boot: `${BOOT_ID} pid:[4026531836]` };

const owner = (o: Partial<Owner>): Owner => ({
  id: 'other',
  role: 'run',
  pid: GONE,
  host: ME.host,
  boot: ME.boot,
  startedAt: '2026-11-23T10:00:00.000Z',
  leaseUntil: 1_800_000_000_000,
  ...o,
});

describe('lease: an owner known to be gone', () => {
  it('is one of this host, boot and pid namespace whose pid is no process', () => {
    expect(knownDead(owner({}), ME)).to.equal(true);
  });

  it('is not one of another pid namespace on this host and boot: its pid may be a live process there', () => {
    expect(knownDead(owner({ boot: `${BOOT_ID} pid:[4026532290]` }), ME)).to.equal(false);
    // An owner written before the namespace was part of `boot`: its pid may be of any namespace.
    expect(knownDead(owner({ boot: BOOT_ID }), ME)).to.equal(false);
  });

  it('is not one of another host or boot, one whose process lives, this process, nor any when the boot is unknown', () => {
    expect(knownDead(owner({ host: 'host-b' }), ME)).to.equal(false);
    expect(knownDead(owner({ boot: `another-boot pid:[4026531836]` }), ME)).to.equal(false);
    expect(knownDead(owner({ pid: process.ppid }), ME)).to.equal(false);
    expect(knownDead(owner({ pid: process.pid }), ME)).to.equal(false);
    expect(knownDead(owner({ boot: '' }), { ...ME, boot: '' })).to.equal(false);
  });

  it("names this process's pid namespace in BOOT, where /proc shows it", function () {
    let ns: string;
    try {
      ns = readlinkSync('/proc/self/ns/pid');
    } catch {
      return this.skip();
    }
    expect(BOOT.endsWith(` ${ns}`), BOOT).to.equal(true);
  });
});

/**
 * A daemon started right after the one before it was killed (a supervisor restarting it; `kill -9` then `serve`
 * at once) found the killed one's process still there and refused to start (exit 2): a process killed is a
 * zombie until its parent reaps it, and is still exiting for a few milliseconds after the signal. A zombie is
 * gone, and a holder of this host is waited for a moment before the start is refused. Real processes, a real
 * SQLite store.
 */
describe('lease: a start right after the holder was killed', function () {
  this.timeout(20_000);
  const stores: SqliteStore[] = [];
  const children: ChildProcess[] = [];
  after(async () => {
    for (const c of children) c.kill('SIGKILL');
    for (const s of stores) await s.close();
  });

  /** A store held by an exclusive `serve` of this host whose process is `pid`. */
  async function heldBy(pid: number): Promise<SqliteStore> {
    const store = new SqliteStore(':memory:');
    stores.push(store);
    const info = {
      id: `holder-${pid}`,
      role: 'daemon' as const,
      pid,
      host: hostname(),
      boot: BOOT,
      startedAt: new Date().toISOString(),
    };
    expect(await store.registerOwner(info, Date.now(), 60_000, true)).to.equal(undefined);
    return store;
  }
  const acquire = (store: SqliteStore) =>
    Lease.acquire({
      store,
      role: 'daemon',
      exclusive: true,
      leaseMs: 60_000,

      onLost: () => undefined,
    });

  it('takes the store of a holder that is a zombie (killed, not yet reaped)', async function () {
    if (!BOOT) return this.skip();
    // `sh` starts a short sleep, then becomes a long one that never reaps it: once it ends, it is a zombie.
    const parent = spawn('sh', ['-c', 'sleep 0.2 & echo $!; exec sleep 30'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    children.push(parent);
    const pid = Number((await once(parent.stdout!, 'data'))[0].toString().trim());
    await until('the child a zombie', async (seen) => {
      const state = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ').pop()?.[0];
      seen(`state ${state}`);
      return state === 'Z' ? true : undefined;
    });
    const lease = await acquire(await heldBy(pid));
    await lease.release();
  });

  it('takes the store of a holder of this host that ends within a moment of the start', async function () {
    if (!BOOT) return this.skip();
    const holder = spawn('sleep', ['30'], { stdio: 'ignore' });
    children.push(holder);
    const store = await heldBy(holder.pid!);
    // Killed once the start has found it holding the store, alive: the start then waits for it to be gone.
    const register = store.registerOwner.bind(store);
    const found: string[] = [];
    store.registerOwner = async (...a) => {
      const holding = await register(...a);
      found.push(holding?.id ?? 'none');
      if (holding) holder.kill('SIGKILL');
      return holding;
    };
    const lease = await acquire(store);
    await lease.release();
    expect(found, 'the holder found alive, then gone').to.deep.equal([`holder-${holder.pid}`, 'none']);
  });

  it('refuses the store of a holder that lives on, naming it', async function () {
    if (!BOOT) return this.skip();
    const holder = spawn('sleep', ['30'], { stdio: 'ignore' });
    children.push(holder);
    const store = await heldBy(holder.pid!);
    let refused: Error | undefined;
    await acquire(store).catch((e: Error) => (refused = e));
    expect(refused?.message).to.include(`pid ${holder.pid} on ${hostname()}`);
  });
});
