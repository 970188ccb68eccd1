/**
 * The SQLite store's turn: the writes of one turn of the event loop join one transaction, committed at its end
 * (or sooner, by a read that must see them), with those waiting for it (`durable`) told how it went.
 */
import type Database from 'better-sqlite3';

/**
 * The turn of each file that is open, in this process. Two stores of one process on one file (tests playing two
 * processes do this) would otherwise deadlock: the second would wait for the write lock that the first holds
 * until the end of a turn that cannot end while the second waits.
 */
const openTurns = new Map<string, SqliteTurn>();

export class SqliteTurn {
  /** The open transaction of this turn's writes, and those waiting for it to be committed. */
  private turn: { waiters: { resolve: () => void; reject: (e: Error) => void }[] } | undefined;
  /** A commit that failed with nobody waiting for it: thrown by the next write or `durable()`. */
  private failed: Error | undefined;

  /** `checkFence`: throws when the process may no longer write (a lease lost); checked before each commit. */
  constructor(
    private readonly db: Database.Database,
    private readonly file: string,
    private readonly checkFence: (now: number) => void,
  ) {}

  /**
   * Opens this turn's transaction if none is open: every write until the end of the turn joins it, and it is
   * committed then (or sooner, by `commit`). One commit for many writes: a run's checkpoints, ledger entries,
   * locks and status, and those of the other runs of the turn.
   */
  write(): void {
    if (this.failed) {
      const e = this.failed;
      this.failed = undefined;
      throw e;
    }
    if (this.turn) return;
    const other = openTurns.get(this.file);
    if (other && other !== this) other.commit();
    this.db.exec('BEGIN IMMEDIATE');
    this.turn = { waiters: [] };
    // Each in-memory store is a database of its own.
    if (this.file !== ':memory:') openTurns.set(this.file, this);
    setImmediate(() => this.commit());
  }

  /** Commits the turn open on the file now: this store's, or another's of this process. */
  commitFile(): void {
    this.commit();
    this.commitOther();
  }

  /** Commits the turn of this process open on the file now, if any (of an in-memory store, none). */
  commitOther(): void {
    openTurns.get(this.file)?.commit();
  }

  /** Commits this turn's transaction now, if one is open. */
  commit(): void {
    const turn = this.turn;
    if (!turn) return;
    this.turn = undefined;
    if (openTurns.get(this.file) === this) openTurns.delete(this.file);
    try {
      this.checkFence(Date.now());
      this.db.exec('COMMIT');
    } catch (e) {
      // A disk that is full or failing, or a lease lost: the turn's writes are lost, and whoever relies on them
      // learns it.
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      if (turn.waiters.length) for (const w of turn.waiters) w.reject(e as Error);
      else this.failed = e as Error;
      return;
    }
    for (const w of turn.waiters) w.resolve();
  }

  /** `durable` (store.ts): settles when this turn's writes are committed, or fails as the commit did. */
  durable(): Promise<void> {
    if (this.failed) {
      const e = this.failed;
      this.failed = undefined;
      return Promise.reject(e);
    }
    const turn = this.turn;
    if (!turn) return Promise.resolve();
    return new Promise((resolve, reject) => turn.waiters.push({ resolve, reject }));
  }
}
