/**
 * Delivery of callback messages to registered listeners (public-api-facts.md, "Connectivity callbacks").
 *
 * A message is POSTed with the envelope `{ username, password, <payload…>, callbackCount,
 * maxCallbackThreshold }`, the credentials being those set on the listener. A message not answered 2xx is
 * sent again after a delay that doubles each time, until `maxCallbackThreshold` attempts in all; so delivery
 * is at least once and listeners see duplicates, as with the real service. Every attempt is counted.
 *
 * Location messages are signed: `X-Fleetbook-Signature: sha256=<hex HMAC-SHA256 of the raw body>` with the
 * shared secret, since the real service signs them with a header whose name is not public.
 */
import { createHmac } from 'node:crypto';
import { Agent, request } from '../util/undici.js';
import { silentLogger, type Logger } from '../log.js';

/** The signature header of Location callbacks, as Node.js presents it (lower case). */
export const SIGNATURE_HEADER = 'x-fleetbook-signature';

export interface ListenerTarget {
  url: string;
  username?: string;
  password?: string;
}

export interface CallbackMessage {
  /** The callback service the listener was registered for. */
  service: string;
  accountName: string;
  /** What the message reports, e.g. `suspendResponse`; with requestId, what a listener deduplicates on. */
  kind: string;
  /** The envelope members between the credentials and the counters, starting with `requestId`. */
  payload: { requestId: string } & Record<string, unknown>;
  /** Signs the body with the shared secret (Location messages). */
  sign: boolean;
}

export interface Attempt {
  /** Wall-clock time of the attempt. */
  at: string;
  status?: number;
  error?: string;
}

export interface Delivery {
  id: number;
  service: string;
  accountName: string;
  url: string;
  requestId: string;
  kind: string;
  state: 'pending' | 'delivered' | 'failed' | 'cancelled';
  maxCallbackThreshold: number;
  attempts: Attempt[];
  /** The payload of the first attempt (later attempts differ only in callbackCount). */
  body: Record<string, unknown>;
}

export interface DispatcherOptions {
  secret: string;
  /** Deliveries in flight at once. @default 32 */
  concurrency?: number;
  /** Time allowed for a listener to answer, in ms. @default 10000 */
  timeoutMs?: number;
  /** Deliveries remembered for `GET /_emulator/callbacks`. @default 10000 */
  keep?: number;
  logger?: Logger;
}

interface Job {
  delivery: Delivery;
  target: ListenerTarget;
  message: CallbackMessage;
  retryMs: number;
  generation: number;
}

export class CallbackDispatcher {
  readonly secret: string;
  readonly stats = { messages: 0, attempts: 0, delivered: 0, failed: 0 };
  private readonly agent: Agent;
  private readonly concurrency: number;
  private readonly timeoutMs: number;
  private readonly keep: number;
  private readonly log: Logger;
  /** Jobs to send, from `head` on (a head index, not shift(): a 20,000-job queue would be copied per job). */
  private ready: (Job | undefined)[] = [];
  private head = 0;
  /** The messages waiting to be sent again, by the timer that sends them. */
  private readonly timers = new Map<NodeJS.Timeout, Job>();
  private readonly log_: Delivery[] = [];
  private active = 0;
  private pumpScheduled = false;
  private nextId = 1;
  private generation = 0;
  private closed = false;
  private idleWaiters: (() => void)[] = [];

  constructor(o: DispatcherOptions) {
    this.secret = o.secret;
    this.concurrency = o.concurrency ?? 32;
    this.timeoutMs = o.timeoutMs ?? 10_000;
    this.keep = o.keep ?? 10_000;
    this.log = o.logger ?? silentLogger;
    this.agent = new Agent({ connections: this.concurrency, keepAliveTimeout: 4_000 });
  }

  /** Queues a message for a listener; the record it returns is updated as attempts are made. */
  send(
    target: ListenerTarget,
    message: CallbackMessage,
    maxCallbackThreshold: number,
    retryMs: number,
  ): Delivery {
    const delivery: Delivery = {
      id: this.nextId++,
      service: message.service,
      accountName: message.accountName,
      url: target.url,
      requestId: message.payload.requestId,
      kind: message.kind,
      state: 'pending',
      maxCallbackThreshold,
      attempts: [],
      body: this.body(target, message, 1, maxCallbackThreshold),
    };
    this.stats.messages++;
    this.log_.push(delivery);
    // Trimmed in steps of `keep`, not one by one: a 20,000-device request sends 20,000 messages.
    if (this.log_.length >= 2 * this.keep) this.log_.splice(0, this.log_.length - this.keep);
    this.ready.push({ delivery, target, message, retryMs, generation: this.generation });
    // After the current turn, so that the answer carrying the requestId leaves before its callback; once for
    // all the messages of the turn.
    if (!this.pumpScheduled) {
      this.pumpScheduled = true;
      setImmediate(() => {
        this.pumpScheduled = false;
        this.pump();
      });
    }
    return delivery;
  }

  /** The latest `keep` deliveries, oldest first. */
  deliveries(): readonly Delivery[] {
    return this.log_.length > this.keep ? this.log_.slice(-this.keep) : this.log_;
  }

  /** Resolves when nothing is queued, in flight or waiting to be re-sent. */
  idle(): Promise<void> {
    if (this.active === 0 && this.queued() === 0 && this.timers.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Sends at once every message waiting to be sent again, its wait cut short (a test whose listener missed them
   * says when it is back, rather than wait out `callbackRetryMs`): how many there were.
   */
  resendNow(): number {
    const waiting = [...this.timers];
    this.timers.clear();
    for (const [timer, job] of waiting) {
      clearTimeout(timer);
      this.ready.push(job);
    }
    this.pump();
    return waiting.length;
  }

  /** Drops every pending message and the record of past ones (emulator reset). */
  reset(): void {
    this.generation++;
    for (const t of this.timers.keys()) clearTimeout(t);
    this.timers.clear();
    for (let i = this.head; i < this.ready.length; i++) (this.ready[i] as Job).delivery.state = 'cancelled';
    this.ready = [];
    this.head = 0;
    this.log_.length = 0;
    this.stats.messages = this.stats.attempts = this.stats.delivered = this.stats.failed = 0;
    this.checkIdle();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.reset();
    await this.agent.close().catch(() => undefined);
  }

  private body(
    target: ListenerTarget,
    m: CallbackMessage,
    count: number,
    max: number,
  ): Record<string, unknown> {
    return {
      username: target.username ?? '',
      password: target.password ?? '',
      ...m.payload,
      callbackCount: count,
      maxCallbackThreshold: max,
    };
  }

  private queued(): number {
    return this.ready.length - this.head;
  }

  private pump(): void {
    while (!this.closed && this.active < this.concurrency && this.queued() > 0) {
      const job = this.ready[this.head] as Job;
      this.ready[this.head++] = undefined;
      if (this.head === this.ready.length) {
        this.ready = [];
        this.head = 0;
      } else if (this.head >= 4096 && 2 * this.head >= this.ready.length) {
        this.ready = this.ready.slice(this.head);
        this.head = 0;
      }
      this.active++;
      void this.attempt(job).finally(() => {
        this.active--;
        this.pump();
        this.checkIdle();
      });
    }
  }

  private checkIdle(): void {
    if (this.active === 0 && this.queued() === 0 && this.timers.size === 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  private async attempt(job: Job): Promise<void> {
    const { delivery: d, target, message } = job;
    const count = d.attempts.length + 1;
    const text = JSON.stringify(
      count === 1 ? d.body : this.body(target, message, count, d.maxCallbackThreshold),
    );
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'fleetbook-emulator',
    };
    if (message.sign)
      headers[SIGNATURE_HEADER] = `sha256=${createHmac('sha256', this.secret).update(text).digest('hex')}`;
    const attempt: Attempt = { at: new Date().toISOString() };
    d.attempts.push(attempt);
    this.stats.attempts++;
    let ok = false;
    try {
      const res = await request(target.url, {
        method: 'POST',
        headers,
        body: text,
        dispatcher: this.agent,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
      });
      await res.body.dump();
      attempt.status = res.statusCode;
      ok = res.statusCode >= 200 && res.statusCode < 300;
    } catch (e) {
      attempt.error = (e as Error).message;
    }
    if (job.generation !== this.generation) return;
    if (ok) {
      d.state = 'delivered';
      this.stats.delivered++;
      return;
    }
    if (count >= d.maxCallbackThreshold || this.closed) {
      d.state = 'failed';
      this.stats.failed++;
      this.log.warn('callback not acknowledged; giving up', {
        service: d.service,
        url: d.url,
        requestId: d.requestId,
        attempts: count,
      });
      return;
    }
    const timer = setTimeout(
      () => {
        this.timers.delete(timer);
        if (job.generation !== this.generation) return;
        this.ready.push(job);
        this.pump();
      },
      job.retryMs * 2 ** (count - 1),
    );
    timer.unref();
    this.timers.set(timer, job);
  }
}
