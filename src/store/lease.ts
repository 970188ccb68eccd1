/**
 * This process as an owner of the store (see Ownership in store.ts): it registers with a lease, renews it a few
 * times per lease period, and releases it on a clean stop. A process that stops renewing (SIGKILL, a frozen
 * machine) loses its lease when it expires; one on this host whose pid is gone is known dead at once.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { ConfigError, LeaseLostError } from '../errors.js';
import type { Owner, OwnerInfo, Ownership } from './store.js';

export interface LeaseOptions {
  /** The store, and where it is, for the refusal's message. */
  store: Ownership & { readonly describe: string; durable(): Promise<void> };
  role: OwnerInfo['role'];
  /** How long the lease holds without a renewal. @default 15000 */
  leaseMs: number;
  /** Refuse to start while another live owner of the same role holds the store (one daemon per SQLite file). */
  exclusive: boolean;
  /** The lease was lost (not renewed in time, and taken over): the process must stop acting on devices. */
  onLost(error: Error): void;
  /** Called after each renewal: a daemon claims the runs of owners that have gone. */
  onRenew?(): void;
  now?: () => number;
}

/** This host during this boot, and this pid namespace: a pid names the same process only there. */
export const BOOT = (() => {
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    // Containers that share the host's name (host networking) share its boot id too, but not its pids: the
    // pid namespace is part of what makes a pid mean one process.
    return `${boot} ${readlinkSync('/proc/self/ns/pid')}`;
  } catch {
    return '';
  }
})();

/** A process, as knownDead tells whether it is gone: its pid, on a host, in a boot and pid namespace. */
export type Process = Pick<OwnerInfo, 'pid' | 'host' | 'boot'>;

/** This process, as knownDead compares another to it. */
export const HERE: Process = { pid: process.pid, host: hostname(), boot: BOOT };

export class Lease {
  readonly id = randomUUID();
  private timer: NodeJS.Timeout | undefined;
  private released = false;
  private renewing = false;
  /** When the lease ends unless renewed (ms, this process's clock): what it last wrote, or less. */
  private until = 0;

  /** Registers this process; throws a ConfigError (the CLI exits 2) naming the live owner that holds the store. */
  static async acquire(o: LeaseOptions): Promise<Lease> {
    const now = o.now ?? Date.now;
    const lease = new Lease(o, now);
    const info: OwnerInfo = {
      id: lease.id,
      role: o.role,
      pid: process.pid,
      host: hostname(),
      boot: BOOT,
      startedAt: new Date(now()).toISOString(),
    };
    await releaseDead(o.store, now());
    let at = now();
    let holder = await o.store.registerOwner(info, at, o.leaseMs, o.exclusive);
    // A holder of this host may be a process killed a moment ago, still exiting (a supervisor restarting the
    // daemon at once): it is given a moment to be gone.
    if (holder && (await goneWithin(holder, HOLDER_GRACE_MS))) {
      await releaseDead(o.store, now());
      at = now();
      holder = await o.store.registerOwner(info, at, o.leaseMs, o.exclusive);
    }
    if (holder) throw new ConfigError(refusal(o, holder));
    // Held once every other process sees it: the registration committed, not only written in this turn.
    await o.store.durable();
    lease.until = at + o.leaseMs;
    // From now on the store writes only while this lease holds: a process frozen past it writes nothing more.
    o.store.fence(lease.id, (e) => lease.lost(e));
    lease.timer = setInterval(() => void lease.renew(), Math.max(50, Math.floor(o.leaseMs / 3)));
    lease.timer.unref();
    return lease;
  }

  private constructor(
    private readonly o: LeaseOptions,
    private readonly now: () => number,
  ) {}

  private async renew(): Promise<void> {
    if (this.released || this.renewing) return;
    // One renewal at a time, to its end (the release of dead owners and onRenew too): a slow store must not have
    // the next tick's renewal overlap it.
    this.renewing = true;
    try {
      await this.renewOnce();
    } finally {
      this.renewing = false;
    }
  }

  private async renewOnce(): Promise<void> {
    let kept: boolean;
    const at = this.now();
    try {
      kept = await this.o.store.renewOwner(this.id, at, this.o.leaseMs);
    } catch {
      // A busy or failing store: the next tick tries again, and the lease may still hold.
      return;
    }
    if (this.released) return;
    if (!kept) {
      this.lost(
        new Error(
          `lost the lease on ${this.o.store.describe}: it was not renewed within ${this.o.leaseMs} ms, and another process may now act on its runs`,
        ),
      );
      return;
    }
    this.until = at + this.o.leaseMs;
    // An owner of this host known to be gone (killed, crashed) holds its runs and devices no longer: they are free
    // at this renewal, not once its lease expires (up to its own FLEETBOOK_LEASE later).
    await releaseDead(this.o.store, at).catch(() => undefined);
    this.o.onRenew?.();
  }

  /**
   * Throws a LeaseLostError unless the lease still holds by this process's clock: what a process checks as
   * something is about to leave it (a request that may change a device), since a process frozen after its last
   * write was committed learns that its lease expired only when it thaws. Released, it holds nothing either.
   */
  check(): void {
    if (this.released) throw new LeaseLostError(this.id);
    if (this.now() < this.until) return;
    const e = new LeaseLostError(this.id);
    this.lost(e);
    throw e;
  }

  /** The lease is gone (a renewal or a fenced write found it so): told once; the store stays fenced. */
  private lost(error: Error): void {
    if (this.released) return;
    void this.release(false);
    this.o.onLost(error);
  }

  /**
   * Stops renewing, and (by default) removes this owner: its unfinished runs are free for the next start. What it
   * wrote is committed first, while the lease still fences it.
   */
  async release(remove = true): Promise<void> {
    if (this.released) return;
    this.released = true;
    clearInterval(this.timer);
    if (!remove) return;
    await this.o.store.durable().catch(() => undefined);
    this.o.store.fence(undefined);
    await this.o.store.releaseOwner(this.id);
  }
}

/**
 * The live owner that holds `run`: its lease holds at `now`, and it is not a process of this host known to be
 * gone. Undefined when none does (never claimed, or its holder died): the next owner to claim the run takes it
 * up, as `fleetbook runs cancel` does (Ownership.claimRuns, once a lease's start or renewal has let go of the
 * owners known to be gone).
 */
export async function liveHolder(
  store: Pick<Ownership, 'liveOwners'>,
  run: { owner?: string },
  now = Date.now(),
): Promise<Owner | undefined> {
  if (run.owner === undefined) return undefined;
  return (await liveOwners(store, now)).find((o) => o.id === run.owner);
}

/**
 * Who cancels an unfinished run asked to cancel: the live process that holds it (liveHolder, as `fleetbook runs
 * cancel` decides), at a lease renewal; else the `fleetbook serve` that takes it up, which cancels it before it
 * runs another step (Pool.submit): one live on the store (`live`), at its next lease renewal, or the next to start
 * (`next`). What `fleetbook runs show` and the console's run page say of a cancel requested.
 */
export type CancelTaker = { holder: Owner } | { serve: 'live' | 'next' };

export async function cancelTaker(
  store: Pick<Ownership, 'liveOwners'>,
  run: { owner?: string },
  now = Date.now(),
): Promise<CancelTaker> {
  const owners = await liveOwners(store, now);
  const holder = owners.find((o) => o.id === run.owner);
  if (holder) return { holder };
  return owners.some((o) => o.role === 'daemon') ? { serve: 'live' } : { serve: 'next' };
}

/**
 * What becomes of an unfinished run asked to cancel, as `fleetbook runs show` prints it and the console's run page
 * shows it (the daemon sends it as `cancelBy.text`): one sentence, its commands between backticks. The `next`
 * serve is the CLI's only: a console is served by a live one.
 */
export function cancelTakerText(by: CancelTaker, runId: string): string {
  if ('holder' in by)
    return `${ownerText(by.holder)}, which holds the run, cancels it by its next lease renewal (within a third of FLEETBOOK_LEASE); its finally steps run there`;
  return by.serve === 'live'
    ? 'no live process holds the run; a live `fleetbook serve` on this state takes it up at its next lease renewal and cancels it before it runs another step; its finally steps run there'
    : `no live process holds the run; the next \`fleetbook serve\` on this state cancels it before it runs another step, and its finally steps run there. To end it now without its finally steps: fleetbook runs cancel ${runId}`;
}

/** How long a start waits for a holder of this host to be gone before it is refused (Lease.acquire). */
const HOLDER_GRACE_MS = 2_000;

/** Whether `other`, an owner of this host, is known to be gone within `ms` (knownDead, asked every 50 ms). */
async function goneWithin(other: Owner, ms: number): Promise<boolean> {
  if (other.host !== HERE.host || other.boot !== HERE.boot) return false;
  for (const end = Date.now() + ms; ; await new Promise((r) => setTimeout(r, 50))) {
    if (knownDead(other, HERE)) return true;
    if (Date.now() >= end) return false;
  }
}

/** Removes the owners of this host known to be gone: their unfinished runs and their devices are free. */
async function releaseDead(
  store: Pick<Ownership, 'liveOwners' | 'releaseOwner'>,
  now: number,
): Promise<void> {
  for (const other of await store.liveOwners(now))
    if (knownDead(other, HERE)) await store.releaseOwner(other.id);
}

/** The live owners of the store, but those of this host known to be gone. */
export async function liveOwners(store: Pick<Ownership, 'liveOwners'>, now = Date.now()): Promise<Owner[]> {
  return (await store.liveOwners(now)).filter((o) => !knownDead(o, HERE));
}

/** An owner as a person reads it: "`fleetbook serve` (pid 123 on host, since 2026-...)". */
export function ownerText(o: Owner): string {
  return `${o.role === 'daemon' ? '`fleetbook serve`' : '`fleetbook run`'} (pid ${o.pid} on ${o.host}, since ${o.startedAt})`;
}

/**
 * An owner on this host, in this boot and pid namespace (`boot` names both, as BOOT does), whose process is
 * gone: no such process, or a zombie (it has exited; its parent has not reaped it yet). `me` is this process
 * (HERE), given as data to the tests.
 */
export function knownDead(other: Process, me: Process): boolean {
  if (other.host !== me.host || other.boot !== me.boot || !me.boot || other.pid === me.pid) return false;
  try {
    process.kill(other.pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
  try {
    // The state is the first field after the command's name in parentheses, which may hold spaces or `)`.
    const stat = readFileSync(`/proc/${other.pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return false;
  }
}

function refusal(o: LeaseOptions, holder: Owner): string {
  const what = holder.role === 'daemon' ? 'fleetbook serve' : 'fleetbook run';
  return (
    `${o.store.describe} is in use by another ${what}: pid ${holder.pid} on ${holder.host}, since ${holder.startedAt} ` +
    `(its lease runs until ${new Date(holder.leaseUntil).toISOString()}). One daemon owns a state file: stop the ` +
    `other one, or give this one another FLEETBOOK_STATE. A daemon that died frees the file when its lease expires.`
  );
}
