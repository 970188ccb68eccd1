/**
 * What the listener spends on callbacks before it knows who sent them. A callback authenticates by its body
 * (credentials inside the JSON, or an HMAC of the raw bytes), so each one is read and parsed before anything
 * is known about its sender; these bounds keep that cheap, as a reverse proxy in front would:
 *
 * - a budget of failures per address: an address whose callbacks were refused before authenticating
 *   (`failures` in `windowMs`: wrong credentials, malformed, too large) is answered 429 with `Retry-After`
 *   until its window ends, before its body is read;
 * - a bound on the body bytes read and not yet authenticated, all addresses together and per address: past it,
 *   a request is answered 503 with `Retry-After` before its body is read.
 */
import { isIPv4 } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * The key an address is counted under: an IPv4 address as it is, an IPv6 address by its /64 prefix (one
 * host is commonly given a whole /64, so counting single IPv6 addresses would count nothing).
 */
export function addressKey(ip: string): string {
  if (isIPv4(ip)) return ip;
  try {
    const a = ipaddr.parse(ip);
    if (a.kind() === 'ipv4') return a.toString();
    const v6 = a as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
    return `${v6.parts
      .slice(0, 4)
      .map((p) => p.toString(16))
      .join(':')}::/64`;
  } catch {
    return ip;
  }
}

/**
 * Failures per address in fixed windows: the first failure of an address opens a window of `windowMs`; once
 * the address has `limit` failures in it, it is refused until the window ends. At most `maxAddresses` are
 * remembered (the oldest windows are forgotten first), so that many addresses cannot grow it without bound.
 */
export class FailureBudget {
  private readonly windows = new Map<string, { failures: number; endsAt: number }>();

  /**
   * @param limit Failures an address may have per window; 0 turns the budget off.
   * @param windowMs The length of a window.
   * @param now The clock. @default Date.now
   * @param maxAddresses Addresses remembered at most. @default 100000
   */
  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxAddresses = 100_000,
  ) {}

  /** Whole seconds until `address` may send again; 0 when it may now. */
  blockedFor(address: string): number {
    if (this.limit === 0) return 0;
    const w = this.windows.get(address);
    if (!w || w.failures < this.limit) return 0;
    const left = w.endsAt - this.now();
    return left > 0 ? Math.ceil(left / 1000) : 0;
  }

  /** Counts a failure of `address`. */
  fail(address: string): void {
    if (this.limit === 0) return;
    const now = this.now();
    const w = this.windows.get(address);
    if (w && w.endsAt > now) {
      w.failures++;
      return;
    }
    // A new window goes to the end of the map's order, which is then the order of the windows' ends.
    this.windows.delete(address);
    this.windows.set(address, { failures: 1, endsAt: now + this.windowMs });
    // Ended windows are at the front: dropped here, a few at a time. Past maxAddresses, live ones too.
    for (const [key, old] of this.windows) {
      if (old.endsAt > now && this.windows.size <= this.maxAddresses) break;
      this.windows.delete(key);
    }
  }
}

/**
 * Body bytes admitted and not yet released, in total and per address. A request reserves the bytes it will
 * send (its Content-Length, or the body limit when it does not say) before its body is read, and releases them
 * once it is authenticated or answered.
 */
export class PendingBytes {
  private total = 0;
  private readonly byAddress = new Map<string, number>();

  /**
   * @param limit Bytes admitted at once, all addresses together.
   * @param perAddress Bytes admitted at once for one address.
   */
  constructor(
    private readonly limit: number,
    private readonly perAddress: number,
  ) {}

  /** Bytes admitted now (for tests and metrics). */
  get used(): number {
    return this.total;
  }

  /** Reserves `bytes` for `address`; false, reserving nothing, when that would pass either bound. */
  take(address: string, bytes: number): boolean {
    if (bytes === 0) return true;
    const mine = this.byAddress.get(address) ?? 0;
    if (this.total + bytes > this.limit || mine + bytes > this.perAddress) return false;
    this.total += bytes;
    this.byAddress.set(address, mine + bytes);
    return true;
  }

  /** Releases bytes `take` reserved. */
  give(address: string, bytes: number): void {
    if (bytes === 0) return;
    this.total -= bytes;
    const left = (this.byAddress.get(address) ?? 0) - bytes;
    if (left > 0) this.byAddress.set(address, left);
    else this.byAddress.delete(address);
  }
}

/**
 * The charset a Content-Type declares, lower case; undefined when it declares none. JSON is UTF-8 (RFC 8259
 * section 8.1): the listener decodes bodies as UTF-8 and refuses any other declared charset.
 */
export function charsetOf(contentType: string | undefined): string | undefined {
  if (!contentType) return undefined;
  const m = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i.exec(contentType);
  return m ? (m[1] ?? m[2] ?? '').toLowerCase() : undefined;
}

/** Whether a declared charset is one of UTF-8's names. */
export const isUtf8 = (charset: string): boolean => charset === 'utf-8' || charset === 'utf8';
