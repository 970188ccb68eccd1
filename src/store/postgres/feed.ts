/**
 * The messages other replicas store, as their commits land: each inbox commit notifies the channel with its
 * owner and the range of ids it stored (`pg_notify`, delivered at commit, in commit order), and every replica
 * listening reads the messages of the others' notices. How the steps waiting for an event and the runs
 * confirming a request on one replica hear of a callback the load balancer gave to another.
 */
import pg from 'pg';
import { inboxEvent, type InboxRow } from '../rows.js';
import type { InboxEvent } from '../store.js';
import { EVENT_COLUMNS, INBOX_CHANNEL } from './inbox.js';
import { clientConfig } from './pool.js';

export class InboxFeed {
  private client: pg.Client | undefined;
  private stopped = false;
  private retry: NodeJS.Timeout | undefined;

  constructor(
    private readonly url: string,
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
    const client = new pg.Client(clientConfig(this.url, 'fleetbook-feed'));
    const again = () => {
      if (this.client !== client) return;
      this.client = undefined;
      void client.end().catch(() => undefined);
      if (!this.stopped) this.retry = setTimeout(() => void this.connect(), this.reconnectMs).unref();
    };
    this.client = client;
    client.on('error', again);
    client.on('end', again);
    client.on('notification', (n) => void this.noticed(n.payload));
    try {
      await client.connect();
      await client.query(`LISTEN ${INBOX_CHANNEL}`);
    } catch {
      again();
    }
  }

  /** A notice's payload: `<owner> <first id> <last id>`, a few dozen bytes whatever the commit's size. */
  private async noticed(payload: string | undefined): Promise<void> {
    const [owner, first, last] = (payload ?? '').split(' ');
    if (this.stopped || !owner || owner === this.owner || first === undefined || last === undefined) return;
    try {
      const { rows } = await this.pool.query<InboxRow>({
        text: `SELECT ${EVENT_COLUMNS} FROM inbox WHERE id BETWEEN $1 AND $2 AND owner = $3 ORDER BY id`,
        values: [Number(first), Number(last), owner],
      });
      if (rows.length && !this.stopped) this.onStored(rows.map(inboxEvent));
    } catch {
      // The store is failing: the confirming runs fall back on the request's status, the waits on their timeout.
    }
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    void client?.end().catch(() => undefined);
  }
}
