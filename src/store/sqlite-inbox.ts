/**
 * The SQLite store's callback inbox (InboxStore of store.ts): its fsync'd appends, what this process holds of
 * it, the marks of what is processed, and its reads. The store (sqlite.ts) orders the writes with its turn.
 */
import { closeSync, fdatasync, openSync } from 'node:fs';
import type Database from 'better-sqlite3';
import { isoTime } from '../clock.js';
import { EVENT_COLUMNS, inboxEvent, type InboxRow } from './rows.js';
import { storedText } from './text.js';
import { InboxSyncError, type InboxEvent, type InboxMessage, type RunRecord } from './store.js';

type Sql = (text: string) => Database.Statement;

export class SqliteInbox {
  /**
   * The inbox's commits are made durable without holding the event loop: written with `synchronous = OFF` and
   * no automatic checkpoint, then the write-ahead log is fsync'd on the thread pool (`walSync`), and only then
   * are they acknowledged and matched. Checkpoints happen in the other commits, at `synchronous = NORMAL`,
   * which syncs the log before and the database after each one. One connection: a second one on the same file
   * would throw this one's page cache away at each of its commits, and the other way round.
   */
  private readonly inboxMode: Database.Statement[];
  private readonly normalMode: Database.Statement[];
  /** The write-ahead log, opened for fsync once it exists. */
  private walFd: number | undefined;
  /**
   * The first id of each of this store's inbox commits that is written and not yet synced: nothing from the
   * lowest of them on is read (nor acknowledged), as it is not on disk yet. Another process's commits are read
   * once written: that process acknowledges them once synced, and a crash before that loses them with the
   * commits that follow them in the log, the runs they started among them.
   */
  private readonly syncing = new Set<number>();
  /** The messages this process stored or claimed, and has not processed. */
  backlog = 0;

  constructor(
    private readonly db: Database.Database,
    private readonly sql: Sql,
    private readonly file: string,
    /** The store's `wal_autocheckpoint`, set again after each append. */
    checkpointPages: number,
  ) {
    this.inboxMode = ['PRAGMA synchronous = OFF', 'PRAGMA wal_autocheckpoint = 0'].map((q) => db.prepare(q));
    this.normalMode = ['PRAGMA synchronous = NORMAL', `PRAGMA wal_autocheckpoint = ${checkpointPages}`].map(
      (q) => db.prepare(q),
    );
  }

  /** `appendInbox` (store.ts), once the store's open turn is committed. */
  async append(owner: string, messages: InboxMessage[]): Promise<(number | 'duplicate')[]> {
    const insert = this.sql(
      `INSERT INTO inbox (service, kind, request_id, device, payload_json, received_at, owner)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (request_id, kind, device) DO NOTHING`,
    );
    let first = 0;
    for (const q of this.inboxMode) q.run();
    let out: (number | 'duplicate')[];
    try {
      out = this.db.transaction(() =>
        messages.map((m) => {
          // Its texts as both stores keep them (text.ts): its key is matched by them.
          const r = insert.run(
            storedText(m.service),
            storedText(m.kind),
            storedText(m.requestId),
            storedText(m.device ?? ''),
            JSON.stringify(m.payload),
            m.receivedAt,
            owner,
          );
          if (!r.changes) return 'duplicate' as const;
          const id = Number(r.lastInsertRowid);
          first ||= id;
          return id;
        }),
      )();
    } finally {
      for (const q of this.normalMode) q.run();
    }
    if (first) {
      this.syncing.add(first);
      try {
        await this.walSync();
      } finally {
        this.syncing.delete(first);
      }
    }
    for (const r of out) if (r !== 'duplicate') this.backlog++;
    return out;
  }

  /** `pendingInbox` (store.ts): of the messages on disk only. */
  pending(owner: string, limit: number, afterId: number): InboxEvent[] {
    const rows = this.sql(
      `SELECT ${EVENT_COLUMNS} FROM inbox
       WHERE processed_at IS NULL AND owner = ? AND id > ? AND id < ? ORDER BY id LIMIT ?`,
    ).all(owner, afterId, this.unsyncedFrom(), limit) as InboxRow[];
    return rows.map(inboxEvent);
  }

  /** Inbox rows from this id on may not be on disk yet. */
  private unsyncedFrom(): number {
    return this.syncing.size ? Math.min(...this.syncing) : Number.MAX_SAFE_INTEGER;
  }

  /** `claimInbox` (store.ts), in the store's turn: of the messages on disk only. */
  claim(owner: string, now: number): number {
    const taken = this.sql(
      `UPDATE inbox SET owner = ?
       WHERE processed_at IS NULL AND id < ?
         AND (owner IS NULL OR owner NOT IN (SELECT id FROM owners WHERE lease_until > ?))`,
    ).run(owner, this.unsyncedFrom(), now).changes;
    this.backlog += taken;
    return taken;
  }

  /** `completeInbox` (store.ts), in the store's turn: `createRun` stores each run a message starts. */
  complete(
    processed: { eventId: number; runs: RunRecord[] }[],
    createRun: (r: RunRecord) => void,
  ): RunRecord[] {
    const at = isoTime(Date.now());
    const mark = this.sql('UPDATE inbox SET processed_at = ? WHERE id = ? AND processed_at IS NULL');
    return this.db.transaction(() => {
      const out: RunRecord[] = [];
      for (const p of processed) {
        // An event another pass already processed starts nothing again.
        if (!mark.run(at, p.eventId).changes) continue;
        this.backlog--;
        for (const r of p.runs) createRun(r);
        out.push(...p.runs);
      }
      return out;
    })();
  }

  close(): void {
    if (this.walFd !== undefined) closeSync(this.walFd);
  }

  /** fsync of the write-ahead log, on the thread pool: every commit written before it is on disk after it. */
  private walSync(): Promise<void> {
    if (this.file === ':memory:') return Promise.resolve();
    this.walFd ??= openSync(`${this.file}-wal`, 'r');
    const fd = this.walFd;
    return new Promise((resolve, reject) =>
      fdatasync(fd, (e) =>
        e
          ? reject(new InboxSyncError(`the inbox could not be synced to disk: ${e.message}`, { cause: e }))
          : resolve(),
      ),
    );
  }
}

/** `inboxByRequest` (store.ts). */
export function inboxByRequest(sql: Sql, requestIds: string[]): InboxEvent[] {
  // A lookup of the unique key's first column per id: a run follows one request or a few, and asks at each
  // (a JSON array of them read through json_each cost more than this lookup and the parse of its row).
  const byRequest = sql(`SELECT ${EVENT_COLUMNS} FROM inbox WHERE request_id = ?`);
  const rows = [...new Set(requestIds)].flatMap((id) => byRequest.all(id) as InboxRow[]);
  return rows.sort((a, b) => a.id - b.id).map(inboxEvent);
}

/** `inboxPosition` (store.ts). */
export function inboxPosition(sql: Sql): number {
  return (sql('SELECT coalesce(max(id), 0) FROM inbox').pluck().get() as number | undefined) ?? 0;
}

/** `inboxAfter` (store.ts): a range of the primary key. */
export function inboxAfter(sql: Sql, service: string, afterId: number, limit: number): InboxEvent[] {
  const rows = sql(`SELECT ${EVENT_COLUMNS} FROM inbox WHERE id > ? AND service = ? ORDER BY id LIMIT ?`).all(
    afterId,
    service,
    limit,
  ) as InboxRow[];
  return rows.map(inboxEvent);
}

/** `recentInbox` (store.ts). */
export function recentInbox(sql: Sql, limit: number): (InboxEvent & { processed: boolean })[] {
  const rows = sql('SELECT * FROM inbox ORDER BY id DESC LIMIT ?').all(limit) as (InboxRow & {
    processed_at: string | null;
  })[];
  return rows.map((r) => ({ ...inboxEvent(r), processed: r.processed_at !== null }));
}
