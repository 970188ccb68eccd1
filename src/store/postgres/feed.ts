/**
 * The messages other replicas store, as their commits land: each inbox commit notifies the channel with its
 * owner and the range of ids it stored (`pg_notify`, delivered at commit, in commit order), and every replica
 * listening reads the messages of the others' notices. How the steps waiting for an event and the runs
 * confirming a request on one replica hear of a callback the load balancer gave to another.
 *
 * A notice sent while the listening connection is down is lost: once listening again, the feed reads what the
 * others stored since a mark (the inbox's highest id, read before it first listens, then on the listening
 * connection every MARK_MS; the older of the last two, so that a commit in flight or a notice on its way as the
 * connection broke is not behind it), and hands over each message it has not handed yet, before any notice heard
 * since. An owner commits one batch at a time (GroupCommit), so its ids grow in commit order: the highest id
 * handed per owner tells what was handed.
 */
import pg from 'pg';
import { EVENT_COLUMNS, inboxEvent, type InboxRow } from '../rows.js';
import type { InboxEvent } from '../store.js';
import { INBOX_CHANNEL } from './inbox.js';

/** How often the listening connection reads the inbox's highest id. */
const MARK_MS = 5_000;
/** Messages read at once when catching up. */
const PAGE = 1_000;

/**
 * The messages of some notices: a range of the primary key for each notice. OFFSET 0 keeps the subquery apart:
 * joined into the outer query, it was planned as a hash join over a scan of the whole inbox (13 ms a read on a
 * bench's inbox).
 */
export const READ_NOTICES = `SELECT i.* FROM json_to_recordset($1::json) AS n(owner text, first bigint, last bigint),
  LATERAL (SELECT ${EVENT_COLUMNS}, owner FROM inbox WHERE id BETWEEN n.first AND n.last AND owner = n.owner OFFSET 0) i
  ORDER BY i.id`;

export class InboxFeed {
  private client: pg.Client | undefined;
  private stopped = false;
  private retry: NodeJS.Timeout | undefined;
  private marking: NodeJS.Timeout | undefined;
  /** The inbox's highest id at the last two marks, older first. */
  private marks: number[] = [];
  /** Per other owner, the highest id handed over. */
  private readonly handed = new Map<string, number>();
  /** Notices not read yet. */
  private notices: { owner: string; first: number; last: number }[] = [];
  /** Reads of notices and catch-ups, one at a time, in the order they came. */
  private queue: Promise<void> = Promise.resolve();

  /**
   * `config`: how its connection opens (pool.ts's clientConfig, checked as the store opened). The driver reads
   * the files the URL names at each connection: one that cannot be read fails that one, opened again later.
   */
  constructor(
    private readonly config: pg.ClientConfig,
    private readonly pool: pg.Pool,
    private readonly owner: string,
    private readonly onStored: (events: InboxEvent[]) => void,
    private readonly reconnectMs = 1000,
  ) {
    void this.connect();
  }

  /** A connection of its own, listening; broken, it is opened again after `reconnectMs`. */
  private async connect(): Promise<void> {
    if (this.stopped) return;
    let client: pg.Client;
    try {
      client = new pg.Client(this.config);
    } catch {
      this.retry = setTimeout(() => void this.connect(), this.reconnectMs).unref();
      return;
    }
    const again = () => {
      if (this.client !== client) return;
      this.client = undefined;
      clearInterval(this.marking);
      void client.end().catch(() => undefined);
      if (!this.stopped) this.retry = setTimeout(() => void this.connect(), this.reconnectMs).unref();
    };
    this.client = client;
    client.on('error', again);
    client.on('end', again);
    client.on('notification', (n) => this.noticed(n.payload));
    try {
      // The first time, what is stored from now on: a run resumed as the daemon starts may wait for it.
      if (!this.marks.length) await this.mark(this.pool);
      const since = this.marks[0] as number;
      // First in the queue, ahead of the notices heard once listening: what was stored since the mark, then the
      // marks again, only once that is handed. Failing, the connection is opened again and catches up again.
      let listening = () => {};
      const listened = new Promise<void>((resolve) => (listening = resolve));
      this.then(async () => {
        try {
          await listened;
          if (this.client !== client) return;
          await this.catchUp(since);
          await this.mark(client);
          if (this.client === client)
            this.marking = setInterval(() => void this.mark(client).catch(again), MARK_MS).unref();
        } catch {
          again();
        }
      });
      try {
        await client.connect();
        await client.query(`LISTEN ${INBOX_CHANNEL}`);
      } finally {
        listening();
      }
    } catch {
      again();
    }
  }

  private then(work: () => Promise<void>): void {
    this.queue = this.queue.then(work).catch(() => {
      // The store is failing: the confirming runs fall back on the request's status, the waits on their timeout.
    });
  }

  private async mark(on: pg.Client | pg.Pool): Promise<void> {
    const { rows } = await on.query<{ id: string }>('SELECT coalesce(max(id), 0) AS id FROM inbox');
    this.marks = [...this.marks, Number(rows[0]?.id ?? 0)].slice(-2);
  }

  /** A notice's payload: `<owner> <first id> <last id>`, a few dozen bytes whatever the commit's size. */
  private noticed(payload: string | undefined): void {
    const [owner, first, last] = (payload ?? '').split(' ');
    if (this.stopped || !owner || owner === this.owner || first === undefined || last === undefined) return;
    this.notices.push({ owner, first: Number(first), last: Number(last) });
    if (this.notices.length === 1) this.then(() => this.readNotices());
  }

  /**
   * The messages of the notices come so far, in one read. Failing, the listening connection is opened again, and
   * its catch-up reads them.
   */
  private async readNotices(): Promise<void> {
    const notices = this.notices;
    this.notices = [];
    const listening = this.client;
    const { rows } = await this.pool
      .query<InboxRow & { owner: string }>({
        text: READ_NOTICES,
        values: [JSON.stringify(notices)],
      })
      .catch((e: unknown) => {
        void listening?.end().catch(() => undefined);
        throw e;
      });
    this.hand(rows);
  }

  /** What the others stored after `since`, a page at a time. */
  private async catchUp(since: number): Promise<void> {
    for (let after = since; !this.stopped;) {
      const { rows } = await this.pool.query<InboxRow & { owner: string }>({
        text: `SELECT ${EVENT_COLUMNS}, owner FROM inbox WHERE id > $1 AND owner <> $2 ORDER BY id LIMIT $3`,
        values: [after, this.owner, PAGE],
      });
      this.hand(rows);
      if (rows.length < PAGE) return;
      after = Number(rows[rows.length - 1]?.id);
    }
  }

  private hand(rows: (InboxRow & { owner: string })[]): void {
    const fresh = rows.filter((r) => {
      const id = Number(r.id);
      if (id <= (this.handed.get(r.owner) ?? 0)) return false;
      this.handed.set(r.owner, id);
      return true;
    });
    if (fresh.length && !this.stopped) this.onStored(fresh.map(inboxEvent));
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retry);
    clearInterval(this.marking);
    const client = this.client;
    this.client = undefined;
    void client?.end().catch(() => undefined);
  }
}
