/**
 * Callback messages as the listener receives them (public-api-facts.md, "Connectivity callbacks"): who sent
 * them, what they report, and the durable group commit that stores them before they are acknowledged.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { InboxMessage, Store } from '../store/store.js';

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

/** The callback service of a message posted to the catch-all route, read from what it reports. */
export function serviceOf(kind: string): string {
  if (kind === 'alertServiceResponse') return 'DeviceUsage';
  if (kind === 'locationReportResponse' || kind === 'usageTriggerResponse') return 'Location';
  return 'CarrierService';
}

/** Equal strings, compared in time that does not depend on where they differ (hashes have equal lengths). */
export function same(a: string, b: string): boolean {
  const h = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(h(a), h(b));
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
  // Both compared, always: no early exit that tells which one was wrong.
  return same(u, creds.username) && same(p, creds.password);
}

/**
 * The message to store: the envelope without the listener's credentials (secrets are never stored) and
 * without the delivery counters (a re-sent message differs only in them).
 */
export function toMessage(service: string, kind: string, body: Json, receivedAt: string): InboxMessage {
  const { username: _u, password: _p, callbackCount: _c, maxCallbackThreshold: _m, ...payload } = body;
  return { service, kind, requestId: String(body.requestId), payload, receivedAt };
}

/**
 * Group commit: messages that arrive while a commit is being written go together in the next one, so one
 * fsync acknowledges many messages. Each caller learns whether its message was stored or a duplicate only
 * once the transaction holding it is on disk.
 */
export class GroupCommit {
  private batch: {
    message: InboxMessage;
    resolve: (r: 'stored' | 'duplicate') => void;
    reject: (e: Error) => void;
  }[] = [];
  private scheduled = false;
  /** Messages accepted and not yet committed. */
  get waiting(): number {
    return this.batch.length;
  }

  constructor(
    private readonly store: Pick<Store, 'appendInbox'>,
    private readonly onCommit: (stored: number) => void,
  ) {}

  add(message: InboxMessage): Promise<'stored' | 'duplicate'> {
    return new Promise((resolve, reject) => {
      this.batch.push({ message, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        // After the I/O phase: every request already read in this turn of the loop joins the commit.
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.batch;
    this.batch = [];
    if (!batch.length) return;
    let results: ('stored' | 'duplicate')[];
    try {
      results = this.store.appendInbox(batch.map((b) => b.message));
    } catch (e) {
      for (const b of batch) b.reject(e as Error);
      return;
    }
    batch.forEach((b, i) => b.resolve(results[i] as 'stored' | 'duplicate'));
    this.onCommit(results.filter((r) => r === 'stored').length);
  }
}
