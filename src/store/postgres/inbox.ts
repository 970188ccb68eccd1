/**
 * The callback inbox on PostgreSQL (InboxStore of store.ts). A message not yet processed has a row in
 * inbox_pending, held by the owner that stored it; the messages of an owner that is gone are claimed by another,
 * skipping those a concurrent claim holds; a message's row goes when it is processed, with the runs it starts,
 * at most once across replicas.
 */
import type pg from 'pg';
import { EVENT_COLUMNS, inboxEvent, type InboxRow } from '../rows.js';
import type { InboxEvent, InboxMessage, InboxStore, RunRecord } from '../store.js';
import { prepared } from './pool.js';
import { storedText, storedTexts } from '../text.js';
import { insertRuns, runRow } from './runs.js';
import type { Turns } from './turn.js';

/** The channel each inbox commit notifies (InboxFeed). */
export const INBOX_CHANNEL = 'fleetbook_inbox';

export class PostgresInbox implements Omit<InboxStore, 'watchInbox'> {
  /**
   * The messages this process stored or claimed, and has not processed: counted as each statement answers, so
   * that the count may run behind the store for a moment, never drift from it.
   */
  private backlog = 0;

  constructor(
    private readonly pool: pg.Pool,
    private readonly turns: Turns,
  ) {}

  /**
   * One statement, so one transaction, committed (and so on disk: `synchronous_commit` is on) when it returns.
   * It does not wait for the open turn: nothing the turns write is read or written here.
   */
  async appendInbox(owner: string, messages: InboxMessage[]): Promise<(number | 'duplicate')[]> {
    const rows = messages.map((m) => ({
      service: storedText(m.service),
      kind: storedText(m.kind),
      request_id: storedText(m.requestId),
      device: storedText(m.device ?? ''),
      payload_json: JSON.stringify(m.payload),
      received_at: storedText(m.receivedAt),
    }));
    const { rows: stored } = await this.pool.query<{
      id: number;
      request_id: string;
      kind: string;
      device: string;
    }>(
      prepared({
        // The other replicas hear of the commit (InboxFeed): its owner and the range of its ids.
        text: `WITH stored AS (
               INSERT INTO inbox (service, kind, request_id, device, payload_json, received_at, owner)
               SELECT service, kind, request_id, device, payload_json, received_at, $2
               FROM ROWS FROM (json_to_recordset($1::json) AS (service text, kind text, request_id text,
                 device text, payload_json text, received_at text)) WITH ORDINALITY AS m(service, kind,
                 request_id, device, payload_json, received_at, n)
               ORDER BY n
               ON CONFLICT (request_id, kind, device) DO NOTHING
               RETURNING id, request_id, kind, device
             ), notice AS (
               SELECT pg_notify('${INBOX_CHANNEL}', $2 || ' ' || min(id) || ' ' || max(id)) FROM stored
               HAVING count(*) > 0
             )
             SELECT s.id, s.request_id, s.kind, s.device FROM stored s LEFT JOIN notice ON true`,
        values: [JSON.stringify(rows), owner],
      }),
    );
    // The first of a key in the batch got the id; any other one is a duplicate, as one already stored is.
    const ids = new Map(stored.map((s) => [`${s.request_id}\0${s.kind}\0${s.device}`, s.id]));
    const out = rows.map((r) => {
      const key = `${r.request_id}\0${r.kind}\0${r.device}`;
      const id = ids.get(key);
      ids.delete(key);
      return id ?? 'duplicate';
    });
    this.backlog += stored.length;
    return out;
  }

  async pendingInbox(owner: string, limit: number, afterId = 0): Promise<InboxEvent[]> {
    const rows = await this.turns.readAside<InboxRow>({
      text: `SELECT ${EVENT_COLUMNS} FROM inbox_pending p JOIN inbox USING (id)
             WHERE p.owner = $1 AND p.id > $2 ORDER BY p.id LIMIT $3`,
      values: [owner, afterId, limit],
    });
    return rows.map(inboxEvent);
  }

  async claimInbox(owner: string, now: number): Promise<number> {
    const { rowCount } = await this.turns.query({
      text: `UPDATE inbox_pending SET owner = $1 WHERE id IN (
               SELECT id FROM inbox_pending p
               WHERE p.owner IS NULL OR NOT EXISTS (
                 SELECT 1 FROM owners o WHERE o.id = p.owner AND o.lease_until > $2)
               FOR UPDATE SKIP LOCKED)`,
      values: [owner, now],
    });
    const taken = rowCount ?? 0;
    this.backlog += taken;
    return taken;
  }

  async inboxByRequest(requestIds: string[]): Promise<InboxEvent[]> {
    const rows = await this.turns.readAside<InboxRow>({
      text: `SELECT ${EVENT_COLUMNS} FROM inbox WHERE request_id = ANY($1::text[]) ORDER BY id`,
      values: [[...new Set(storedTexts(requestIds))]],
    });
    return rows.map(inboxEvent);
  }

  async inboxPosition(): Promise<number> {
    const rows = await this.turns.readAside<{ id: number }>({
      text: 'SELECT coalesce(max(id), 0) AS id FROM inbox',
      values: [],
    });
    return rows[0]?.id ?? 0;
  }

  async inboxAfter(service: string, afterId: number, limit: number): Promise<InboxEvent[]> {
    const rows = await this.turns.readAside<InboxRow>({
      text: `SELECT ${EVENT_COLUMNS} FROM inbox WHERE id > $1 AND service = $2 ORDER BY id LIMIT $3`,
      values: [afterId, service, limit],
    });
    return rows.map(inboxEvent);
  }

  inboxBacklog(): number {
    // Below 0 only for a moment (completeInbox): messages processed before their append counted them.
    return Math.max(0, this.backlog);
  }

  async recentInbox(limit: number): Promise<(InboxEvent & { processed: boolean })[]> {
    const rows = await this.turns.read<InboxRow & { processed: boolean }>({
      // The latest first, then whether each is pending: one look-up each, where the planner would rather read all
      // of inbox_pending (48 ms with 100,000 callbacks pending).
      text: `SELECT r.*, NOT EXISTS (SELECT 1 FROM inbox_pending p WHERE p.id = r.id) AS processed
             FROM (SELECT ${EVENT_COLUMNS} FROM inbox ORDER BY id DESC LIMIT $1) r ORDER BY r.id DESC`,
      values: [limit],
    });
    return rows.map((r) => ({ ...inboxEvent(r), processed: r.processed }));
  }

  /**
   * One statement: the messages still pending are taken out of inbox_pending, and the runs of those (and only
   * those) inserted. Two replicas completing one message (one whose lease expired meanwhile) both try: one
   * takes it out. Beside the
   * open turn: the runs it inserts are new, and no write of a turn is about them yet.
   */
  async completeInbox(processed: { eventId: number; runs: RunRecord[] }[]): Promise<RunRecord[]> {
    if (!processed.length) return [];
    const runs = processed.flatMap((p) => p.runs.map((r) => runRow(r, p.eventId)));
    const started = insertRuns(runs, 'WHERE r.event_id IN (SELECT id FROM marked)');
    const marked = await this.turns.readAside<{ id: number }>({
      text: `WITH marked AS (
               DELETE FROM inbox_pending WHERE id = ANY($2::bigint[]) RETURNING id
             ), started AS (${started.text})
             SELECT id FROM marked`,
      values: [...started.values, processed.map((p) => p.eventId)],
    });
    const done = new Set(marked.map((m) => m.id));
    // Not clamped at 0: a read of the store may see a commit of this process, and process its messages, before the
    // append that stored them has counted them (appendInbox counts once its query answers).
    this.backlog -= done.size;
    return processed.filter((p) => done.has(p.eventId)).flatMap((p) => p.runs);
  }
}
