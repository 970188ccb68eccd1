/**
 * The turn: the writes whose answer nobody needs (store.ts) are queued as they come, and committed together in
 * one transaction at the end of the turn of the event loop, pipelined on one pooled connection. Turns commit one
 * after the other: while one commits, the next gathers every write meanwhile (a group commit), so that a run's
 * writes reach the database in the order they were made.
 *
 * A read, and a write that decides, first has the open turn committed, then runs: it sees every write made
 * before it.
 */
import type pg from 'pg';
import { LeaseLostError } from '../../errors.js';
import type { ResultColumns, RunRow } from '../rows.js';
import { FENCE_ERROR, inTransaction, prepared, retryable, transaction, type Statement } from './pool.js';

/** A ledger entry as the turn holds it: the devices of one group, what they got, and each one's data. */
export interface EntryRecord extends Omit<ResultColumns, 'data_json'> {
  device_ids: string[];
  data_json: (Record<string, unknown> | null)[] | null;
  /** The least and the greatest of `device_ids` (id-range.ts); `max_id` null: the range is open. */
  min_id: string;
  max_id: string | null;
  /** Confirmed by a read of the devices' state (DeviceResult.byStateRead); null otherwise. */
  by_state_read: true | null;
}

/** The columns of a run that updates set. */
export interface RunPatch {
  id: string;
  status?: string;
  ended_at?: string;
  summary_json?: string | null;
  error?: string;
  /** The summary counts the late moves (RunUpdate.movesCounted): they are dropped. */
  moves_counted?: boolean;
}

/** The writes of one turn, by kind: those of a kind go out in one statement. */
export interface TurnWrites {
  /** Runs created: inserted before the other writes, which may update them. */
  readonly runs: RunRow[];
  /** Each run's updates, merged: the columns they set, by run id. */
  readonly runUpdates: Map<string, RunPatch>;
  /** Every other write, in the order it was made. */
  readonly statements: Statement[];
  /** Each step's latest checkpoint, by `run\0key`, with its state as JSON text. */
  readonly steps: Map<string, { run_id: string; step_key: string; state_json: string }>;
  /** Each step's latest counts of a turn (step-calls.ts), by `run\0key`. */
  readonly calls: Map<string, { run_id: string; step_key: string; calls: number; attempts: number }>;
  /** The counts rows that go, after the turn's counts are written: of the steps that ended, by `run\0key`. */
  readonly callsEnded: Map<string, { run_id: string; step_key: string }>;
  /** The runs that ended: their counts rows go, after the turn's counts are written. */
  readonly runsEnded: Set<string>;
  /** Ledger entries, in the order they were written: a later one for a device replaces an earlier one. */
  readonly entries: EntryRecord[];
  /** The device locks released, by holder. */
  readonly unlocks: string[];
}

interface Waiter {
  resolve(): void;
  reject(e: Error): void;
}

class Turn implements TurnWrites {
  readonly runs: RunRow[] = [];
  readonly runUpdates = new Map<string, RunPatch>();
  readonly statements: Statement[] = [];
  readonly steps = new Map<string, { run_id: string; step_key: string; state_json: string }>();
  readonly calls = new Map<string, { run_id: string; step_key: string; calls: number; attempts: number }>();
  readonly callsEnded = new Map<string, { run_id: string; step_key: string }>();
  readonly runsEnded = new Set<string>();
  readonly entries: EntryRecord[] = [];
  readonly unlocks: string[] = [];
  readonly waiters: Waiter[] = [];
  /** A read waits for it: committed as soon as the one before it is, not at the end of a turn. */
  urgent = false;
  /** Settles (never rejects) once the commit is done, or failed. */
  readonly done: Promise<void>;
  settle!: () => void;

  constructor() {
    this.done = new Promise((resolve) => (this.settle = resolve));
  }
}

/** How many times a transaction that met a deadlock (another replica's locks) is tried before it fails. */
const ATTEMPTS = 3;

/** `attempt`, and again as it was after a deadlock or a serialization failure (nothing of it was committed). */
async function retrying<T>(attempt: () => Promise<T>): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (e) {
      if (n >= ATTEMPTS || !retryable(e)) throw e;
    }
  }
}

export class Turns {
  private open: Turn | undefined;
  private committing: Turn | undefined;
  /** A commit that failed with nobody waiting for it: thrown by the next write or `durable()`. */
  private failed: Error | undefined;
  /** The lease the writes are fenced to (Ownership.fence in store.ts). */
  private fenced: { owner: string; onLost: ((e: Error) => void) | undefined } | undefined;

  /**
   * Snapshots that may hold a connection at once: the pool's size less two, which the writes (a turn's commit,
   * the inbox's, a claim) always find. A snapshot holds its connection until its reader ends it, seconds for a run
   * of a million devices: more of them would starve the writes, and the daemon's acknowledgements with them.
   */
  private readonly readers: number;
  /** Snapshots holding a connection, and those waiting for one of them to end. */
  private reading = 0;
  private readonly waitingReaders: (() => void)[] = [];

  constructor(
    private readonly pool: pg.Pool,
    /** The statements that commit a turn's writes, in order. */
    private readonly statements: (writes: TurnWrites) => Statement[],
  ) {
    this.readers = Math.max(1, (pool.options.max ?? 10) - 2);
  }

  fence(owner: string | undefined, onLost?: (e: Error) => void): void {
    this.fenced = owner === undefined ? undefined : { owner, onLost };
  }

  /** The statement that fails a transaction, first in it, once the fenced lease no longer holds; none unfenced. */
  fenceStatement(): Statement | undefined {
    const f = this.fenced;
    return f && { text: 'SELECT fleetbook_fence($1, $2)', values: [f.owner, Date.now()] };
  }

  /** The owner whose lease the writes are fenced to, if any. */
  fencedOwner(): string | undefined {
    return this.fenced?.owner;
  }

  /** The fence's error as a LeaseLostError (`onLost` told of the first); any other error as it is. */
  private lost(e: unknown): unknown {
    const f = this.fenced;
    if (!f || (e as { code?: string }).code !== FENCE_ERROR) return e;
    const told = f.onLost;
    f.onLost = undefined;
    const error = new LeaseLostError(f.owner);
    told?.(error);
    return error;
  }

  /** The open turn, to write into; one is opened when none is, and committed at the end of this turn of the loop. */
  write(): TurnWrites {
    if (this.failed) {
      const e = this.failed;
      this.failed = undefined;
      throw e;
    }
    if (!this.open) {
      this.open = new Turn();
      setImmediate(() => this.next());
    }
    return this.open;
  }

  /** Whether a write not committed yet (of the open turn, or of the one committing) is one that `is` says. */
  holds(is: (w: TurnWrites) => boolean): boolean {
    return [this.open, this.committing].some((t) => t !== undefined && is(t));
  }

  /** Resolves once every write made so far is committed; rejects when the commit that holds them failed. */
  durable(): Promise<void> {
    if (this.failed) {
      const e = this.failed;
      this.failed = undefined;
      return Promise.reject(e);
    }
    const turn = this.open ?? this.committing;
    if (!turn) return Promise.resolve();
    return new Promise((resolve, reject) => turn.waiters.push({ resolve, reject }));
  }

  /**
   * Resolves once every write made so far is committed, or failed (which its waiters, or the next write, learn):
   * what a read waits for. The open turn is committed at once, rather than at the end of the loop's turn.
   */
  settled(): Promise<void> {
    const turn = this.open ?? this.committing;
    if (!turn) return Promise.resolve();
    if (turn === this.open) {
      turn.urgent = true;
      this.next();
    }
    return turn.done;
  }

  /** `s` in a transaction of its own, after every write made before it. */
  query(s: Statement): Promise<pg.QueryResult> {
    return this.afterWrites(() => this.pool.query(prepared(s)));
  }

  /** Rows of `s`, read after every write made before it. */
  async read<T>(s: Statement): Promise<T[]> {
    return (await this.query(s)).rows as T[];
  }

  /**
   * A snapshot of the store, after every write made before it, on a connection of its own until `end`: each
   * `query` runs in one REPEATABLE READ transaction, which sees nothing written since it began (a read of a run's
   * every device, page after page). Its temporary tables go with it.
   */
  async snapshot(): Promise<{ query: (s: Statement) => Promise<pg.QueryResult>; end: () => Promise<void> }> {
    if (this.reading < this.readers) this.reading++;
    // A snapshot that ends hands its place over (endReading).
    else await new Promise<void>((resolve) => this.waitingReaders.push(resolve));
    let client: pg.PoolClient;
    try {
      await this.settled();
      client = await this.pool.connect();
    } catch (e) {
      this.endReading();
      throw e;
    }
    const ignore = () => undefined;
    client.on('error', ignore);
    let broken: Error | undefined;
    // Unnamed: a statement over the snapshot's temporary tables is planned again with each of them.
    const query = async (s: Statement) => {
      try {
        return await client.query({ text: s.text, values: s.values as unknown[] });
      } catch (e) {
        if ((e as { code?: string }).code === undefined) broken = e as Error;
        throw e;
      }
    };
    let ended = false;
    const end = async () => {
      if (ended) return;
      ended = true;
      try {
        if (!broken) await client.query('ROLLBACK');
      } catch (e) {
        broken = e as Error;
      } finally {
        client.off('error', ignore);
        client.release(broken);
        this.endReading();
      }
    };
    try {
      await query({ text: 'BEGIN ISOLATION LEVEL REPEATABLE READ' });
    } catch (e) {
      await end();
      throw e;
    }
    return { query, end };
  }

  /** A snapshot's place, to the first one waiting for it, else free. */
  private endReading(): void {
    const next = this.waitingReaders.shift();
    if (next) next();
    else this.reading--;
  }

  /** `work` in a transaction of its own, after every write made before it (see `transaction`). */
  transaction<T>(work: (query: (s: Statement) => Promise<pg.QueryResult>) => Promise<T>): Promise<T> {
    return this.afterWrites(() => transaction(this.pool, work));
  }

  /**
   * Rows of `s`, run at once, beside the open turn: for a statement whose answer the writes not yet committed
   * cannot change (the inbox's, which no turn writes; a device lock of this owner, which takes over its own
   * locks, released or not). Committing the open turn first would only cut it short.
   */
  async readAside<T>(s: Statement): Promise<T[]> {
    return (await this.aside(() => this.pool.query(prepared(s)))).rows as T[];
  }

  /** `attempt` once every write made before it is committed. */
  private async afterWrites<T>(attempt: () => Promise<T>): Promise<T> {
    await this.settled();
    return this.aside(attempt);
  }

  /** `attempt`, tried again after a deadlock; a lease lost is a LeaseLostError. */
  private async aside<T>(attempt: () => Promise<T>): Promise<T> {
    try {
      return await retrying(attempt);
    } catch (e) {
      throw this.lost(e);
    }
  }

  /** Commits the open turn, unless one is being committed: it follows that one. */
  private next(): void {
    const turn = this.open;
    if (this.committing || !turn) return;
    this.open = undefined;
    this.committing = turn;
    void this.commit(turn).then((error) => {
      // Done before its waiters are told: a durable() they ask for then waits on the next turn, if any.
      this.committing = undefined;
      turn.settle();
      if (!error) for (const w of turn.waiters) w.resolve();
      else if (turn.waiters.length) for (const w of turn.waiters) w.reject(error);
      else this.failed = error;
      const open = this.open;
      if (open?.urgent) this.next();
      else if (open) setImmediate(() => this.next());
    });
  }

  /** Commits `turn`'s writes; returns the error that failed them. */
  private async commit(turn: Turn): Promise<Error | undefined> {
    try {
      const statements = this.statements(turn);
      if (statements.length)
        await retrying(() => {
          const fence = this.fenceStatement();
          return inTransaction(this.pool, fence ? [fence, ...statements] : statements);
        });
      return undefined;
    } catch (e) {
      return this.lost(e) as Error;
    }
  }
}
