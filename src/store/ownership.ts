/**
 * The store's owners: processes executing runs from one store, their leases, run claims and device locks
 * (Ownership, part of the Store of store.ts).
 */
import type { RunRecord } from './store.js';

/**
 * A process that executes runs from this store: a daemon, or a `fleetbook run`. It holds a lease that it renews;
 * while the lease is live, nobody else resumes its runs, takes its device locks or its inbox messages. A process
 * whose lease expired (or that is known dead) is gone: its runs and messages are claimed by the next owner, and
 * its device locks are freed.
 */
export interface OwnerInfo {
  id: string;
  role: 'daemon' | 'run';
  pid: number;
  host: string;
  /** The host's boot: a pid is the same process only on the same host, during the same boot. */
  boot: string;
  startedAt: string;
}

export interface Owner extends OwnerInfo {
  /** Until when the lease holds, in milliseconds since the epoch. */
  leaseUntil: number;
}

/** A live owner and what it holds now. */
export interface OwnerHoldings extends Owner {
  /** Its unfinished runs (queued or running). */
  runs: number;
  /** The callbacks it stored or claimed and has not processed. */
  callbacks: number;
  /** The devices it holds locks on. */
  lockedDevices: number;
}

/**
 * Owners, leases, run claims and device locks: store operations, not process memory, so that several processes
 * (a daemon and a `fleetbook run` on one SQLite file; replicas on PostgreSQL) agree on who does what.
 */
export interface Ownership {
  /**
   * Registers an owner whose lease holds `leaseMs` from `now`, after removing the owners whose lease expired.
   * With `exclusive`, refuses when another live owner of the same role holds the store, and returns it.
   */
  registerOwner(
    owner: OwnerInfo,
    now: number,
    leaseMs: number,
    exclusive: boolean,
  ): Promise<Owner | undefined>;
  /** Extends a live lease. False when it was lost (expired and removed): the owner must stop acting. */
  renewOwner(id: string, now: number, leaseMs: number): Promise<boolean>;
  /** Removes an owner (a clean stop, or one known dead) and its device locks: its unfinished runs are free at once. */
  releaseOwner(id: string): Promise<void>;
  /** Owners whose lease holds at `now`. */
  liveOwners(now: number): Promise<Owner[]>;
  /** Owners whose lease holds at `now`, oldest first, each with what it holds (`/status`). */
  holdings(now: number): Promise<OwnerHoldings[]>;
  /**
   * Takes the unfinished runs (of the given playbooks, or of any) that no live owner holds (never owned, or their
   * owner's lease expired), in one transaction, and returns them, oldest first. Two owners claiming at once never
   * both get a run. With `runId`, only that run (`fleetbook runs cancel`).
   */
  claimRuns(
    owner: string,
    playbooks: readonly string[] | undefined,
    now: number,
    runId?: string,
  ): Promise<RunRecord[]>;
  /**
   * Asks whichever process holds an unfinished run, now or once it claims it, to cancel it with `reason` (a
   * console on another replica, `fleetbook runs cancel`). False when the run is not unfinished.
   */
  requestCancel(runId: string, reason: string): Promise<boolean>;
  /** The unfinished runs `owner` holds that were asked to cancel (requestCancel), each with the reason. */
  cancelRequests(owner: string): Promise<{ runId: string; reason: string }[]>;
  /**
   * Locks every device of `ids` for `holder` (one acquisition of `owner`), or none: the answer is then a device
   * that another live owner holds. Locks of owners whose lease expired are taken over, and so are the owner's
   * own (it orders its acquisitions itself, and may release them late).
   */
  lockDevices(
    owner: string,
    holder: string,
    ids: readonly string[],
    now: number,
  ): Promise<string | undefined>;
  /** Frees the devices of some acquisitions (a write of the turn). */
  unlockDevices(holders: readonly string[]): void;
  /**
   * Fences this store to `owner`'s lease (undefined: no fence). While fenced, a turn's writes, a device lock and a
   * run claim commit only if `owner` holds a live lease as they commit: a process frozen past its lease, whose
   * runs another may have taken over, writes nothing more. Such a write is rolled back and fails with a
   * LeaseLostError, and `onLost` is told of the first.
   */
  fence(owner: string | undefined, onLost?: (e: Error) => void): void;
}
