/**
 * The count of one user's session logins that may have failed since the last that succeeded: five consecutive
 * failed logins lock the user (spec/public-api-facts.md, which names no time after which the count starts
 * again: it does when a login succeeds). The service counts them whatever process sent them, so the count is
 * kept where every process that logs in as the user reads it: the store (SQLite file or PostgreSQL database) of
 * a `fleetbook run`, a `fleetbook call` and a daemon, by the service's URL and the user name. A process with no
 * store of the service (the embedded emulator, `fleetbook test`) keeps it in memory (MemoryLoginCounts).
 *
 * Each login is counted as it is sent, a row of its own, and what it came to settles its row: a login that
 * succeeded removes the rows clearedBySuccess names, one the service did not act on (429, 503, never sent,
 * refused for its bearer token: credentials.ts loginOutcome) removes its own, and one refused or whose answer was
 * lost stays counted. A row still `sending` counts too: whatever it comes to, it may be a failure, and a process
 * killed while it was in flight never settles it.
 */

/** A service as the count names it: its base URL's origin and path, without a trailing slash. */
export function serviceKey(url: URL): string {
  return url.origin + url.pathname.replace(/\/+$/, '');
}

/** Who logs in, and where: the service's base URL (origin and path, no trailing slash) and the user name. */
export interface LoginUser {
  service: string;
  username: string;
}

/** A login counted: sent since the last that succeeded, and not known to have left the count as it was. */
export interface CountedLogin extends LoginUser {
  /** Made up by its sender: its row. */
  id: string;
  /** When it was sent, in ms since the epoch. */
  sentAt: number;
  /** `sending`: no answer yet, or its process went before one; `refused`: a 4xx; `lost`: a network error, 5xx. */
  state: 'sending' | 'refused' | 'lost';
  /** What it failed with, once it did. */
  error?: string;
}

/**
 * What a login counted came to. `not-acted`: the service did not look at the user's credentials (429, 503, never
 * sent, a 401 whose challenge refuses its bearer token).
 */
export type LoginSettlement = 'succeeded' | 'not-acted' | 'refused' | 'lost';

/** Where the logins are counted: the store's (shared by the processes on it), or a process's memory. */
export interface LoginCounts {
  /** Whether every process on the store reads this count (`fleetbook logins` shows it), or only this one. */
  readonly shared: boolean;
  /**
   * Counts the login `id` as `user` about to be sent at `now`, unless `limit` are counted already: then it
   * counts nothing and returns those, oldest first.
   */
  claim(user: LoginUser, id: string, now: number, limit: number): Promise<CountedLogin[] | undefined>;
  /** What the login `id` came to (`error`: with what it failed). */
  settle(user: LoginUser, id: string, outcome: LoginSettlement, now: number, error?: string): Promise<void>;
  /** Every login counted, by service and user name, each user's oldest first. */
  list(): Promise<CountedLogin[]>;
  /**
   * Forgets the logins counted as `username`, on `service` only when given, else on every service: an operator's
   * word that it may log in. Gives those forgotten, oldest first.
   */
  clear(username: string, service?: string): Promise<CountedLogin[]>;
}

/**
 * How long a login stays `sending` before a success sent after it may take it for one whose process went
 * without settling it: longer than any login request lasts (its headers and body time out at 30 s each).
 */
export const SENDING_LAPSE_MS = 10 * 60_000;

/**
 * What a login that succeeded (`id`; sent at `now` when it is not among them) clears of its user's `counted`
 * logins, one rule for every LoginCounts: its own, and of those sent at or before it, each that ended (refused,
 * or its answer lost: the service's count started again after it), that has been `sending` longer than
 * SENDING_LAPSE_MS, or whose process went without settling it (`gone`: for a store's rows, a process of this host
 * known gone, store/lease.ts's knownDead). Those sent after it stay: the service may count them after the success.
 */
export function clearedBySuccess<R extends CountedLogin>(
  counted: readonly R[],
  id: string,
  now: number,
  gone: (r: R) => boolean = () => false,
): R[] {
  const sentAt = counted.find((r) => r.id === id)?.sentAt ?? now;
  return counted.filter(
    (r) =>
      r.id === id ||
      (r.sentAt <= sentAt && (r.state !== 'sending' || r.sentAt < now - SENDING_LAPSE_MS || gone(r))),
  );
}

/** The logins counted, in the memory of one process. */
export class MemoryLoginCounts implements LoginCounts {
  readonly shared = false;
  private rows: CountedLogin[] = [];

  async claim(user: LoginUser, id: string, now: number, limit: number): Promise<CountedLogin[] | undefined> {
    const counted = this.rows.filter((r) => same(r, user));
    if (counted.length >= limit) return counted;
    this.rows.push({ ...user, id, sentAt: now, state: 'sending' });
    return undefined;
  }

  async settle(
    user: LoginUser,
    id: string,
    outcome: LoginSettlement,
    now: number,
    error?: string,
  ): Promise<void> {
    const own = this.rows.find((r) => same(r, user) && r.id === id);
    if (outcome === 'succeeded') {
      const users = this.rows.filter((r) => same(r, user));
      const cleared = new Set(clearedBySuccess(users, id, now));
      this.rows = this.rows.filter((r) => !cleared.has(r));
    } else if (outcome === 'not-acted') this.rows = this.rows.filter((r) => r !== own);
    else if (own) Object.assign(own, { state: outcome, ...(error !== undefined ? { error } : {}) });
    // Forgotten meanwhile (`fleetbook logins clear`): it failed after, and counts again.
    else
      this.rows.push({ ...user, id, sentAt: now, state: outcome, ...(error !== undefined ? { error } : {}) });
  }

  async list(): Promise<CountedLogin[]> {
    return this.rows.map((r) => ({ ...r }));
  }

  async clear(username: string, service?: string): Promise<CountedLogin[]> {
    const goes = (r: CountedLogin) =>
      r.username === username && (service === undefined || r.service === service);
    const gone = this.rows.filter(goes);
    this.rows = this.rows.filter((r) => !goes(r));
    return gone;
  }
}

function same(r: LoginUser, user: LoginUser): boolean {
  return r.service === user.service && r.username === user.username;
}

/** One user's logins counted on one service, as `fleetbook logins` and the daemon's `/status` show them. */
export interface UserLogins extends LoginUser {
  /** The logins that may have failed since the last that succeeded. */
  failed: number;
  /** Whether no process on the store sends another login as the user until the count is cleared. */
  stopped: boolean;
  logins: { sentAt: string; state: CountedLogin['state']; error?: string }[];
}

/** `rows` (CountedLogin, each user's oldest first) by service and user; `limit`: the count that stops logins. */
export function byUser(rows: readonly CountedLogin[], limit: number): UserLogins[] {
  const out = new Map<string, UserLogins>();
  for (const r of rows) {
    const key = JSON.stringify([r.service, r.username]);
    let u = out.get(key);
    if (!u)
      out.set(key, (u = { service: r.service, username: r.username, failed: 0, stopped: false, logins: [] }));
    u.failed++;
    u.stopped = u.failed >= limit;
    u.logins.push({
      sentAt: new Date(r.sentAt).toISOString(),
      state: r.state,
      ...(r.error !== undefined ? { error: r.error } : {}),
    });
  }
  return [...out.values()];
}
