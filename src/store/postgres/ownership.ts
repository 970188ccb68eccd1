/**
 * Owners, leases, run claims and device locks on PostgreSQL (Ownership of store.ts). Claims skip the rows another
 * claim holds (`FOR UPDATE SKIP LOCKED`); a device lock is a row whose primary key is the device, so that two
 * replicas can never both hold one.
 */
import { byStart, toOwner, toRun, type OwnerRow, type RunRow } from '../rows.js';
import { RELEASED_SHARE_MS } from '../../rate/shares.js';
import type { Owner, OwnerHoldings, OwnerInfo, Ownership, RunRecord } from '../store.js';
import { OWNER_LOCKS } from './pool.js';
import type { Turns } from './turn.js';
import { Batched } from '../../util/batched.js';

/** The advisory lock that makes exclusive registrations take turns, as SQLite's write lock does. */
const EXCLUSIVE_LOCK = 0x666c6566;

/** SQL: the owner named by `column` holds a live lease at `now` (a parameter). */
const live = (column: string, now: string) =>
  `EXISTS (SELECT 1 FROM owners o WHERE o.id = ${column} AND o.lease_until > ${now})`;

/** Devices to lock for an owner, under the name of the acquisition (`holder`) that releases them together. */
interface Acquisition {
  owner: string;
  holder: string;
  ids: readonly string[];
  now: number;
}

/** The acquisitions that can go in one statement (the first one's owner's, no device twice), and the rest. */
function disjoint(wanted: Acquisition[]): [Acquisition[], Acquisition[]] {
  const batch: Acquisition[] = [];
  const later: Acquisition[] = [];
  const devices = new Set<string>();
  for (const a of wanted) {
    if (a.owner !== wanted[0]?.owner || a.ids.some((id) => devices.has(id))) later.push(a);
    else {
      batch.push(a);
      for (const id of a.ids) devices.add(id);
    }
  }
  return [batch, later];
}

export class PostgresOwnership implements Ownership {
  /** The acquisitions asked for while a statement locking others is on its way: they go together next. */
  private readonly acquisitions = new Batched((wanted: Acquisition[]) => this.lockAll(wanted));

  constructor(private readonly turns: Turns) {}

  registerOwner(o: OwnerInfo, now: number, leaseMs: number, exclusive: boolean): Promise<Owner | undefined> {
    return this.turns.transaction(async (query) => {
      // Pipelined: the lock, the removal of the owners whose lease expired (their device locks first), the holder.
      const [, , , holder] = await Promise.all([
        exclusive ? query({ text: 'SELECT pg_advisory_xact_lock($1)', values: [EXCLUSIVE_LOCK] }) : undefined,
        query({
          text: `DELETE FROM device_locks WHERE owner IN (SELECT id FROM owners WHERE lease_until <= $1)`,
          values: [now],
        }),
        query({ text: 'DELETE FROM owners WHERE lease_until <= $1', values: [now] }),
        exclusive
          ? query({
              text: 'SELECT * FROM owners WHERE role = $1 AND id <> $2 ORDER BY started_at, id LIMIT 1',
              values: [o.role, o.id],
            })
          : undefined,
      ]);
      const row = holder?.rows[0] as OwnerRow | undefined;
      if (row) return toOwner(row);
      await query({
        text: `INSERT INTO owners (id, role, pid, host, boot, started_at, lease_until)
               VALUES ($1, $2, $3, $4, $5, $6, $7)
               ON CONFLICT (id) DO UPDATE SET lease_until = excluded.lease_until`,
        values: [o.id, o.role, o.pid, o.host, o.boot, o.startedAt, now + leaseMs],
      });
      return undefined;
    });
  }

  async renewOwner(id: string, now: number, leaseMs: number): Promise<boolean> {
    const { rowCount } = await this.turns.query({
      text: 'UPDATE owners SET lease_until = $1 WHERE id = $2 AND lease_until > $3',
      values: [now + leaseMs, id, now],
    });
    return rowCount === 1;
  }

  async releaseOwner(id: string): Promise<void> {
    await this.turns.query({
      // Its rate shares lapse once its last starts have left the window, not its whole lease (see SQLite's).
      text: `WITH locks AS (DELETE FROM device_locks WHERE owner = $1),
               shares AS (
                 UPDATE rate_shares SET lease_until = least(lease_until,
                   (extract(epoch FROM statement_timestamp()) * 1000)::bigint + $2)
                 WHERE starts_with(member, $1 || '/'))
             DELETE FROM owners WHERE id = $1`,
      values: [id, RELEASED_SHARE_MS],
    });
  }

  async liveOwners(now: number): Promise<Owner[]> {
    const rows = await this.turns.read<OwnerRow>({
      text: 'SELECT * FROM owners WHERE lease_until > $1 ORDER BY started_at, id',
      values: [now],
    });
    return rows.map(toOwner);
  }

  async holdings(now: number): Promise<OwnerHoldings[]> {
    const rows = await this.turns.read<
      OwnerRow & { runs: number; callbacks: number; locked_devices: number }
    >({
      text: `SELECT o.*,
               (SELECT count(*) FROM runs r WHERE r.owner = o.id AND r.status IN ('queued', 'running')) AS runs,
               (SELECT count(*) FROM inbox_pending i WHERE i.owner = o.id) AS callbacks,
               (SELECT count(*) FROM device_locks d WHERE d.owner = o.id) AS locked_devices
             FROM owners o WHERE o.lease_until > $1 ORDER BY o.started_at, o.id`,
      values: [now],
    });
    return rows.map((r) => ({
      ...toOwner(r),
      runs: r.runs,
      callbacks: r.callbacks,
      lockedDevices: r.locked_devices,
    }));
  }

  /**
   * The owners whose lease expired are removed first, each once its lock is taken: that waits for a commit of
   * the owner still in flight (fenced, it holds the lock shared), whose writes the claimer then sees; the owner's
   * later commits fail.
   * Then the unfinished runs no live owner holds, locked as they are read, skipping those a concurrent claim has
   * locked (it takes them). A run whose claim committed meanwhile is read again, with its new owner (live), and
   * left out. Pipelined: one round trip.
   */
  async claimRuns(
    owner: string,
    playbooks: readonly string[] | undefined,
    now: number,
    runId?: string,
  ): Promise<RunRecord[]> {
    const fence = this.turns.fenceStatement();
    const rows = await this.turns.transaction(async (query) => {
      const [, , , claimed] = await Promise.all([
        fence && query(fence),
        // Each expired owner's lock, taken exclusively: a fenced commit of it still in flight ends first.
        query({
          text: `SELECT pg_advisory_xact_lock($2, hashtext(id)) FROM owners WHERE lease_until <= $1 ORDER BY id`,
          values: [now, OWNER_LOCKS],
        }),
        query({ text: 'DELETE FROM owners WHERE lease_until <= $1', values: [now] }),
        query({
          text: `UPDATE runs SET owner = $1 WHERE id IN (
                   SELECT id FROM runs r
                   WHERE status IN ('queued', 'running')
                     AND ($2::text[] IS NULL OR playbook = ANY($2::text[]))
                     AND ($4::text IS NULL OR id = $4)
                     AND (owner IS NULL OR NOT ${live('r.owner', '$3')})
                   FOR UPDATE SKIP LOCKED)
                 RETURNING *`,
          values: [owner, playbooks ? [...playbooks] : null, now, runId ?? null],
        }),
      ]);
      return claimed.rows as RunRow[];
    });
    return rows.map(toRun).sort(byStart);
  }

  /** Ownership.requestCancel (store.ts). */
  async requestCancel(runId: string, reason: string): Promise<boolean> {
    const { rowCount } = await this.turns.query({
      text: `UPDATE runs SET cancel_requested = $1 WHERE id = $2 AND status IN ('queued', 'running')`,
      values: [reason, runId],
    });
    return rowCount === 1;
  }

  async cancelRequests(owner: string): Promise<{ runId: string; reason: string }[]> {
    return this.turns.read<{ runId: string; reason: string }>({
      text: `SELECT id AS "runId", cancel_requested AS reason FROM runs
             WHERE status IN ('queued', 'running') AND owner = $1 AND cancel_requested IS NOT NULL`,
      values: [owner],
    });
  }

  /**
   * One statement (`fleetbook_lock_all`, migrations.ts) locks every device of the acquisition, or takes over its
   * lock when the owner is this one or one whose lease expired: in the order of the device ids (the primary
   * key's), so that two acquisitions at once wait for each other rather than deadlock. Fewer rows than devices:
   * another live owner holds one, nothing is taken, and the answer is the first such device in the caller's
   * order. The acquisitions asked for while one statement is on its way go together in the next (`lockAll`).
   */
  lockDevices(
    owner: string,
    holder: string,
    ids: readonly string[],
    now: number,
  ): Promise<string | undefined> {
    if (!ids.length) return Promise.resolve(undefined);
    return this.acquisitions.call({ owner, holder, ids, now });
  }

  /**
   * The answers to acquisitions, in as few statements as their owners and devices allow: one for those of one
   * owner with no device in common (all of them, from the runs of one process, whose devices are locked in
   * memory first). Beside the open turn, unless it releases another owner's locks (which these must see free):
   * a lock of this owner takes over its own, whether their release is committed or not.
   */
  private async lockAll(wanted: Acquisition[]): Promise<(string | undefined)[]> {
    const held = new Map<Acquisition, string>();
    for (let rest = wanted; rest.length;) {
      const [batch, later] = disjoint(rest);
      const owner = (batch[0] as Acquisition).owner;
      const lock = {
        text: 'SELECT fleetbook_lock_all($1, $2::json, $3, $4) AS held',
        values: [
          owner,
          JSON.stringify(batch.map((a) => ({ holder: a.holder, ids: a.ids }))),
          batch.reduce((latest, a) => Math.max(latest, a.now), 0),
          this.turns.fencedOwner() ?? null,
        ],
      };
      const mine = `${owner}/`;
      const [row] = this.turns.holds((w) => w.unlocks.some((h) => !h.startsWith(mine)))
        ? await this.turns.read<{ held: string | null }>(lock)
        : await this.turns.readAside<{ held: string | null }>(lock);
      const answers = row?.held ? (JSON.parse(row.held) as Record<string, string>) : {};
      for (const a of batch) if (answers[a.holder] !== undefined) held.set(a, answers[a.holder] as string);
      rest = later;
    }
    return wanted.map((a) => held.get(a));
  }

  fence(owner: string | undefined, onLost?: (e: Error) => void): void {
    this.turns.fence(owner, onLost);
  }

  unlockDevices(holders: readonly string[]): void {
    this.turns.write().unlocks.push(...holders);
  }
}
