/**
 * Callback messages as the listener receives them (public-api-facts.md, "Connectivity callbacks"): who sent
 * them, what they report, and the durable group commit that stores them before they are acknowledged.
 */
import { createHmac, hash, timingSafeEqual } from 'node:crypto';
import type * as Events from '../events/index.js';
import { nulRefusal } from '../util/nul.js';
import { onFirstUse } from '../util/on-first-use.js';
import { InboxSyncError, type InboxEvent, type InboxMessage, type Store } from '../store/store.js';

export type Json = Record<string, unknown>;

/** The header of Location callbacks: `sha256=<hex HMAC-SHA256 of the raw body>` with the shared secret. */
export const SIGNATURE_HEADER = 'x-fleetbook-signature';

export interface ListenerCredentials {
  username: string;
  password: string;
  /** The HMAC key of Location callbacks. */
  secret?: string;
}

/**
 * What a message reports: the `…Response` member of the envelope, one level down inside `deviceResponse`
 * (`alertServiceResponse`, `suspendResponse`), else at the top (`locationReportResponse`). With `requestId`,
 * the key a listener deduplicates on.
 */
export function kindOf(body: Json): string | undefined {
  const inner = body.deviceResponse;
  if (inner && typeof inner === 'object' && !Array.isArray(inner)) {
    const k = Object.keys(inner).find((key) => key.endsWith('Response'));
    if (k) return k;
    return 'deviceResponse';
  }
  return Object.keys(body).find((key) => key.endsWith('Response'));
}

/**
 * The callback service of a message posted to the catch-all route, read from what it reports: the service
 * whose event schema names that `…Response` member, when only one does. A member several services send
 * (`faultResponse`) or none names gives undefined: such a message is refused there (serviceDoubt says why),
 * and must be posted to the route of its service.
 */
export function serviceOf(kind: string): string | undefined {
  const services = namers(kind);
  return services.length === 1 ? services[0] : undefined;
}

/** The services whose event schema names the `…Response` member `kind`, in the order of EVENT_SERVICES. */
function namers(kind: string): readonly string[] {
  kinds ??= responseKinds();
  return kinds.get(kind) ?? [];
}

/** Each `…Response` member of an event schema, at the top or in `deviceResponse`, with the services naming it. */
let kinds: Map<string, string[]> | undefined;

function responseKinds(): Map<string, string[]> {
  type Props = { properties?: Record<string, Props> };
  const map = new Map<string, string[]>();
  for (const [service, schema] of Object.entries(events().SCHEMAS)) {
    const top = (schema as Props).properties ?? {};
    const names = [...Object.keys(top), ...Object.keys(top.deviceResponse?.properties ?? {})];
    for (const kind of names) {
      if (!kind.endsWith('Response') || kind === 'deviceResponse') continue;
      const services = map.get(kind) ?? [];
      if (!services.includes(service)) map.set(kind, [...services, service]);
    }
  }
  return map;
}

/**
 * Why a message of `kind` posted to the catch-all route has no one service, and which it could be: the
 * services naming its `…Response` member, else those whose event schema takes it.
 */
function serviceDoubt(kind: string, body: Json): string {
  const route = 'post it to /callbacks/{service}, the route of its service, which removes the doubt';
  const named = namers(kind);
  if (named.length) return `\`${kind}\` is sent by ${named.join(', ')}: ${route}`;
  const event = eventOf(body);
  const fits = events().EVENT_SERVICES.filter((s) => events().fitsEvent(s, event));
  if (fits.length)
    return `\`${kind}\` tells no service; by their schemas the message could be from ${fits.join(', ')}: ${route}`;
  return `\`${kind}\` tells no service, and no service's schema takes this message: ${route} (${events().EVENT_SERVICES.join(', ')})`;
}

/** The event schemas, loaded by the first callback (`fleetbook run` without `--event` never needs them). */
const events = onFirstUse<typeof Events>(import.meta.url, '../events/index.js');

/** The longest `requestId` a callback may carry: the service's are UUIDs (36 characters). */
export const MAX_REQUEST_ID = 128;

/** One call, no Hash object: a callback's credentials are digested at every message. */
const digest = (s: string): Buffer => hash('sha256', s, 'buffer');
/** Digests of the expected values (the listener's credentials, the daemon's token): a few, made once each. */
const expectedDigests = new Map<string, Buffer>();

/**
 * A received value equals the expected one, compared in time that does not depend on where they differ
 * (hashes have equal lengths).
 */
export function same(received: string, expected: string): boolean {
  let e = expectedDigests.get(expected);
  if (!e) {
    if (expectedDigests.size >= 64) expectedDigests.clear();
    expectedDigests.set(expected, (e = digest(expected)));
  }
  return timingSafeEqual(digest(received), e);
}

/**
 * Whether a message comes from the service: the credentials set on the listener at registration, or, for
 * Location messages (which carry none), the HMAC of the raw body. A signature counts only for a Location
 * message posted to the Location route (or the route of no service): the key signs Location messages and
 * nothing else.
 */
export function authentic(
  body: Json,
  raw: Buffer,
  signature: string | undefined,
  creds: ListenerCredentials,
  route: string | undefined,
): boolean {
  if (signature !== undefined) {
    const kind = kindOf(body);
    const location = kind !== undefined && serviceOf(kind) === 'Location';
    if (!creds.secret || !location || (route !== undefined && route !== 'Location')) return false;
    const expected = `sha256=${createHmac('sha256', creds.secret).update(raw).digest('hex')}`;
    return same(signature, expected);
  }
  const u = typeof body.username === 'string' ? body.username : '';
  const p = typeof body.password === 'string' ? body.password : '';
  // Both compared at once, in one digest: no early exit that tells which one was wrong.
  return same(pair(u, p), pair(creds.username, creds.password));
}

/** A username and a password as one string, the username's length first: no two pairs give the same one. */
const pair = (username: string, password: string): string => `${username.length}:${username}${password}`;

/** What a playbook reads as `event`: the message without the listener's credentials and delivery counters. */
function eventOf(body: Json): Json {
  const { username: _u, password: _p, callbackCount: _c, maxCallbackThreshold: _m, ...event } = body;
  return event;
}

/**
 * The message to store: the envelope without the listener's credentials (secrets are never stored) and
 * without the delivery counters (a re-sent message differs only in them).
 */
export function toMessage(service: string, kind: string, body: Json, receivedAt: string): InboxMessage {
  const payload = eventOf(body);
  const first = Array.isArray(body.deviceIds) ? (body.deviceIds[0] as Json | undefined) : undefined;
  const device = first ? `${String(first.kind).toLowerCase()}:${String(first.id)}` : undefined;
  return {
    service,
    kind,
    requestId: String(body.requestId),
    ...(device !== undefined ? { device } : {}),
    payload,
    receivedAt,
  };
}

/**
 * Why a callback whose request id, or a device identifier of its `deviceIds`, has a NUL character is refused
 * (nulRefusal). The PostgreSQL store kept U+FFFD in its place, the SQLite store the NUL: a message stored
 * otherwise on each.
 */
function nulMember(body: Json): string | undefined {
  const request = nulRefusal(body.requestId, 'requestId', 'no request id');
  if (request || !Array.isArray(body.deviceIds)) return request;
  for (const [i, d] of (body.deviceIds as unknown[]).entries())
    for (const member of ['id', 'kind'])
      if (typeof d === 'object' && d !== null) {
        const why = nulRefusal((d as Json)[member], `deviceIds/${i}/${member}`, 'no device identifier');
        if (why) return why;
      }
  return undefined;
}

/**
 * A callback as the listener stores it, or why the listener refuses it (400): `named` is the service of the
 * route it was posted to, else read from what it reports. `fleetbook run --event` and `fleetbook test` make
 * their events here too, so that a run sees exactly what the daemon would give it.
 */
export function callbackMessage(
  body: Json,
  named: string | undefined,
  receivedAt: string,
): InboxMessage | string {
  const kind = kindOf(body);
  if (typeof body.requestId !== 'string' || !body.requestId || !kind)
    return 'a callback has a requestId and a …Response member';
  if (body.requestId.length > MAX_REQUEST_ID)
    return `a requestId of ${body.requestId.length} characters: the service's are UUIDs (at most ${MAX_REQUEST_ID} are taken)`;
  const nul = nulMember(body);
  if (nul) return nul;
  if (named !== undefined && !events().isEventService(named)) return events().unknownService(named);
  const service = named ?? serviceOf(kind);
  if (service === undefined) return serviceDoubt(kind, body);
  return toMessage(service, kind, body, receivedAt);
}

/**
 * How deep a callback's JSON may nest. The service's messages nest a few levels; a much deeper one is refused
 * (400) as it is read, before it joins a commit: serializing it again (JSON.stringify, the matcher's
 * expressions) recurses once per level and overflows the stack near 5,000 levels.
 */
export const MAX_DEPTH = 64;

/**
 * Whether the JSON text `raw` nests objects and arrays deeper than `limit`, read from its bytes before it is
 * parsed (brackets inside strings do not count). It stops at the first level past the limit. Strings are
 * skipped by searching for their closing quote (native), so a typical body costs a fraction of its parse.
 */
export function nestsDeeperThan(raw: Buffer, limit: number): boolean {
  let depth = 0;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (c === 0x22) {
      // To the closing quote: the next quote preceded by an even number of backslashes.
      for (;;) {
        const q = raw.indexOf(0x22, i + 1);
        if (q < 0) return false; // unterminated: the parser says so
        let b = q - 1;
        while (raw[b] === 0x5c) b--;
        i = q;
        if ((q - 1 - b) % 2 === 0) break;
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/**
 * Why the inbox did not take a message. `status` 400: this message cannot be stored, and sending it again will
 * not change that. 503: the store failed (disk full, I/O error); the sender sends it again after `retryAfter`
 * seconds.
 */
export class InboxRefusal extends Error {
  constructor(
    message: string,
    readonly status: 400 | 503,
    readonly retryAfter: number | undefined,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'InboxRefusal';
  }
}

/** Seconds a sender waits before sending again a message the store failed to write. */
export const STORE_RETRY_AFTER = 30;

/**
 * What a failed insert means for the sender. The message is at fault only when it cannot be serialized (a
 * RangeError: too deep for the stack) or is too big for SQLite; anything else is the store's failure (disk
 * full, I/O error, a lock) and answered 503: a 400 would make the service drop a message it may send again.
 */
export function refusalOf(e: unknown): InboxRefusal {
  const err = e instanceof Error ? e : new Error(String(e));
  const code = (err as { code?: unknown }).code;
  if (err instanceof RangeError || code === 'SQLITE_TOOBIG')
    return new InboxRefusal(`the message cannot be stored: ${err.message}`, 400, undefined, { cause: err });
  return new InboxRefusal(
    code === 'SQLITE_FULL'
      ? 'the inbox is out of disk space; send again later'
      : 'the inbox cannot store messages now; send again later',
    503,
    STORE_RETRY_AFTER,
    { cause: err },
  );
}

type Pending = {
  message: InboxMessage;
  resolve: (r: 'stored' | 'duplicate') => void;
  reject: (e: InboxRefusal) => void;
};

/**
 * Group commit: messages that arrive while a commit is being written and synced go together in the next one,
 * so one fsync acknowledges many messages; the sync runs off the event loop, which goes on reading messages
 * meanwhile. Each caller learns whether its message was stored or a duplicate only once the transaction
 * holding it is on disk.
 *
 * A message the store cannot take fails the whole transaction; the messages of that commit are then stored
 * one by one, so that only that message is refused (an InboxRefusal) and the others are acknowledged. A
 * transaction written and not synced (a failing disk) refuses all its messages: the service sends them again.
 */
export class GroupCommit {
  private batch: Pending[] = [];
  private scheduled = false;
  /** A commit is being written or synced: the next waits for it. */
  private writing = false;
  /** Messages accepted and not yet committed. */
  get waiting(): number {
    return this.batch.length;
  }

  constructor(
    private readonly store: Pick<Store, 'appendInbox'>,
    /** This process's lease: it holds the messages it stores, and matches them. */
    private readonly owner: string,
    /** The messages a commit stored (not the duplicates) with their ids, in order, once they are on disk. */
    private readonly onCommit: (stored: InboxEvent[]) => void,
  ) {}

  add(message: InboxMessage): Promise<'stored' | 'duplicate'> {
    return new Promise((resolve, reject) => {
      this.batch.push({ message, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.writing) return;
    this.scheduled = true;
    // After the I/O phase: every request already read in this turn of the loop joins the commit.
    setImmediate(() => void this.flush());
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    const batch = this.batch;
    this.batch = [];
    if (!batch.length) return;
    this.writing = true;
    try {
      let stored = await this.commit(batch);
      if (stored === undefined) {
        // Rare (a bad message or a failing disk): one transaction, and one fsync, per message.
        stored = [];
        for (const one of batch) stored.push(...((await this.commit([one])) ?? []));
      }
      if (stored.length) this.onCommit(stored);
    } finally {
      this.writing = false;
      if (this.batch.length) this.schedule();
    }
  }

  /** Messages stored by one transaction of `batch`; undefined when it failed and `batch` has several. */
  private async commit(batch: Pending[]): Promise<InboxEvent[] | undefined> {
    let results: (number | 'duplicate')[];
    try {
      results = await this.store.appendInbox(
        this.owner,
        batch.map((b) => b.message),
      );
    } catch (e) {
      if (batch.length > 1 && !(e instanceof InboxSyncError)) return undefined;
      for (const b of batch) b.reject(refusalOf(e));
      return [];
    }
    const stored: InboxEvent[] = [];
    batch.forEach((b, i) => {
      const id = results[i] as number | 'duplicate';
      if (id === 'duplicate') return b.resolve(id);
      stored.push({ id, ...b.message });
      b.resolve('stored');
    });
    return stored;
  }
}
