/**
 * Which owners of the store a process knows to be gone (knownDead), as data: a pid names one process only on
 * the same host, during the same boot, in the same pid namespace. Containers with the host's network share its
 * host name and boot id, but not its pids; test/daemon/dead-holder.test.ts runs one where `unshare --pid` is
 * allowed, and this covers the rule everywhere.
 */
import { readlinkSync } from 'node:fs';
import { expect } from 'chai';
import { BOOT, knownDead } from '../../src/store/lease.js';
import type { Owner } from '../../src/store/store.js';

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
