/**
 * `notify.webhook`: a JSON body to a URL, only to public addresses unless FLEETBOOK_WEBHOOK_ALLOW names the
 * destination. Loopback (the daemon itself, the emulator's control API), link-local (cloud metadata at
 * 169.254.169.254), private, unspecified and the other special ranges are refused.
 *
 * The address judged is the one connected to, not the URL's text: an address in the URL is judged before
 * anything is sent, and a name is judged by the connector's DNS lookup, every address it resolves to, on every
 * new connection. A name that resolves to 127.0.0.1, or that answers a public address first and a private one
 * later (DNS rebinding), is refused at the connection that would have reached it.
 *
 * On the embedded emulator (no FLEETBOOK_API_URL) nothing is sent at all, to any address, unless
 * FLEETBOOK_EMULATOR_WEBHOOKS=send: its events are made up, and the webhook URLs of an operator's environment
 * are real channels (a loopback URL may be a relay to one). The step fails, naming the host, why and the
 * setting, rather than succeed without sending: a page that did not go out is never read as one that did.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, request, type Dispatcher } from '../util/undici.js';
import { networkError } from '../api/http.js';
import { ApiError, ConfigError } from '../errors.js';
import { EMULATOR_WEBHOOKS_SETTING, headerProblem, RefusedError, WEBHOOK_ALLOW_SETTING } from './policy.js';

const ACTION = 'notify.webhook';
type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** What `notify.webhook` may connect to, compiled once from FLEETBOOK_WEBHOOK_ALLOW. */
export interface WebhookPolicy {
  /** The allowlist as configured. */
  readonly allow: readonly string[];
  /** True when the host name is on the allowlist by name: every address it resolves to is then allowed. */
  allowsHost(host: string): boolean;
  /** Why `address` may not be connected to (e.g. "a loopback address"); undefined when it may. */
  refusal(address: string): string | undefined;
  /** The dispatcher whose connections are judged as they are made. */
  dispatcher(): Dispatcher;
  /**
   * The DNS lookup those connections make, judged: a name not allowed by name, any of whose addresses is
   * refused, fails with a RefusedError. A dry run asks it, and connects to nothing.
   */
  readonly lookup: LookupFunction;
  /** Why a URL may not be sent to whatever its address (a playbook test's own receivers only), if it may not. */
  confine?: (url: URL) => string | undefined;
  /** True on the embedded emulator unless FLEETBOOK_EMULATOR_WEBHOOKS=send: nothing is sent, anywhere. */
  readonly heldBack: boolean;
}

export interface WebhookPolicyOptions {
  /** The DNS lookup the connector judges. @default dns.lookup */
  lookup?: LookupFunction;
  /** Refuses a URL, before any lookup, with the reason it returns: see WebhookPolicy.confine. */
  confine?: (url: URL) => string | undefined;
  /** Sends nothing: see WebhookPolicy.heldBack. @default false */
  heldBack?: boolean;
}

const HOST_NAME =
  /^(?=.{1,253}\.?$)[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*\.?$/;

/** Plain words for ipaddr.js's range names. */
const RANGE_WORDS: Record<string, string> = {
  loopback: 'a loopback address',
  linkLocal: 'a link-local address (where cloud metadata services answer)',
  private: 'a private address',
  uniqueLocal: 'a private (unique local) address',
  unspecified: 'the unspecified address',
  carrierGradeNat: 'a shared (carrier-grade NAT) address',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
  deprecatedSiteLocal: 'a site-local address',
};

/** `[::1]` → `::1`; lower case, no trailing dot. */
function bareHost(host: string): string {
  return host
    .replace(/^\[(.*)\]$/, '$1')
    .toLowerCase()
    .replace(/\.$/, '');
}

/**
 * The allowlist, checked: each entry a host name, an address or a CIDR range. A wrong entry is a ConfigError
 * naming FLEETBOOK_WEBHOOK_ALLOW, at start-up.
 */
export function compileWebhookPolicy(
  allow: readonly string[] = [],
  o: WebhookPolicyOptions = {},
): WebhookPolicy {
  const hosts = new Set<string>();
  const ranges: [Address, number][] = [];
  const wrong: string[] = [];
  for (const raw of allow) {
    const entry = bareHost(raw.trim());
    if (entry === '') continue;
    try {
      if (entry.includes('/')) ranges.push(ipaddr.parseCIDR(entry));
      else if (isIP(entry)) {
        const a = ipaddr.parse(entry);
        ranges.push([a, a.kind() === 'ipv4' ? 32 : 128]);
      } else if (HOST_NAME.test(entry)) hosts.add(entry);
      else wrong.push(raw);
    } catch {
      wrong.push(raw);
    }
  }
  if (wrong.length)
    throw new ConfigError(
      `invalid configuration:\n  ${WEBHOOK_ALLOW_SETTING}: ${wrong.map((w) => JSON.stringify(w)).join(', ')} ${wrong.length === 1 ? 'is' : 'are'} not a host name, an address or a CIDR range (e.g. hooks.internal.example, 10.1.2.3, 10.0.0.0/8)`,
    );
  const allowsHost = (host: string) => hosts.has(bareHost(host));
  const refusal = (address: string): string | undefined => {
    let a: Address;
    try {
      a = ipaddr.process(bareHost(address));
    } catch {
      return 'not an address';
    }
    if (ranges.some(([net, bits]) => net.kind() === a.kind() && a.match(net, bits))) return undefined;
    const range = a.range();
    if (range === 'unicast') return undefined;
    // NAT64 (64:ff9b::/96): an IPv6-only network's way to any IPv4 address; the IPv4 address is what counts.
    if (range === 'rfc6052' && a.kind() === 'ipv6' && a.match(ipaddr.parseCIDR('64:ff9b::/96'))) {
      const b = (a as ipaddr.IPv6).toByteArray().slice(12);
      return refusal(b.join('.'));
    }
    return RANGE_WORDS[range] ?? `a non-public address (${range})`;
  };
  const base = o.lookup ?? (dnsLookup as unknown as LookupFunction);
  const lookup = guardedLookup(base, allowsHost, refusal);
  let agent: Agent | undefined;
  return Object.freeze({
    allow: Object.freeze([...allow]),
    allowsHost,
    refusal,
    dispatcher: () => (agent ??= new Agent({ connect: { lookup } })),
    lookup,
    ...(o.confine ? { confine: o.confine } : {}),
    heldBack: o.heldBack ?? false,
  });
}

/** A DNS lookup that fails, with a RefusedError, when any address of a name not allowed by name is refused. */
function guardedLookup(
  base: LookupFunction,
  allowsHost: (host: string) => boolean,
  refusal: (address: string) => string | undefined,
): LookupFunction {
  return (hostname, options, callback) => {
    base(hostname, { ...options, all: true }, (err, result) => {
      const done = callback as (e: Error | null, address?: string | LookupAddress[], family?: number) => void;
      if (err) return done(err);
      const addresses = (
        Array.isArray(result) ? result : [{ address: result, family: 0 }]
      ) as LookupAddress[];
      if (!allowsHost(hostname)) {
        for (const { address } of addresses) {
          const why = refusal(address);
          if (why) return done(refused(hostname, `it resolves to ${address}, ${why}`));
        }
      }
      const first = addresses[0];
      if (options.all) return done(null, addresses);
      if (!first) return done(Object.assign(new Error(`${hostname}: no address`), { code: 'ENOTFOUND' }));
      return done(null, first.address, first.family);
    });
  };
}

/** `localhost` and the names below it (RFC 6761), which resolve to loopback. */
const LOCALHOST = /^(.+\.)?localhost$/;

/**
 * Why the policy refuses `host` when it is `localhost` or a name below it, not on the allowlist: judged as its
 * loopback address, with no lookup (a webhook held back on the emulator looks nothing up).
 */
function localhostRefusal(host: string, policy: WebhookPolicy): string | undefined {
  return LOCALHOST.test(host) && !policy.allowsHost(host) ? policy.refusal('127.0.0.1') : undefined;
}

/**
 * A webhook held back on the embedded emulator. When the normal policy would refuse it too (a loopback or
 * private address not on the allowlist, which a user trying webhooks with `nc -l` meets), the one message
 * names both settings: sending from the emulator alone would only meet the next refusal.
 */
function held(host: string, policy: WebhookPolicy): RefusedError {
  const why = isIP(host) ? policy.refusal(host) : localhostRefusal(host, policy);
  const shown = isIP(host) === 6 ? `[${host}]` : host;
  return new RefusedError(
    ACTION,
    `not sent to ${shown}: fleetbook is on its embedded emulator (no FLEETBOOK_API_URL), whose events are made up, and holds webhooks back so as not to page a real channel; ${EMULATOR_WEBHOOKS_SETTING}=send sends them${why ? ` (${shown} is ${why}: it also needs ${WEBHOOK_ALLOW_SETTING})` : ''}`,
    EMULATOR_WEBHOOKS_SETTING,
  );
}

function refused(host: string, why: string): RefusedError {
  return new RefusedError(
    ACTION,
    `refused ${host}: ${why}; ${WEBHOOK_ALLOW_SETTING} (hosts, addresses or CIDR ranges) can allow it`,
    WEBHOOK_ALLOW_SETTING,
  );
}

/** The RefusedError a failed request carries (undici may wrap the connector's error), if any. */
function refusalOf(e: unknown): RefusedError | undefined {
  for (let x = e, depth = 0; x && depth < 5; x = (x as { cause?: unknown }).cause, depth++)
    if (x instanceof RefusedError) return x;
  return undefined;
}

export interface WebhookInput {
  url: string;
  method?: 'POST' | 'PUT';
  headers?: Record<string, string>;
  body?: unknown;
}

/**
 * What is judged of a webhook before anything leaves: its URL, its headers, the playbook test's confinement,
 * and an address in the URL. Gives the URL and its host, bare.
 */
function judged(input: WebhookInput, policy: WebhookPolicy): { url: URL; host: string } {
  let url: URL;
  try {
    url = new URL(String(input.url));
  } catch {
    // The URL is not echoed: it often carries a token.
    throw new RefusedError(ACTION, 'the url is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new RefusedError(ACTION, `only http and https URLs can be called, not ${url.protocol}`);
  const confined = policy.confine?.(url);
  if (confined) throw new RefusedError(ACTION, confined);
  for (const name of Object.keys(input.headers ?? {})) {
    const problem = headerProblem(name);
    if (problem) throw new RefusedError(ACTION, problem);
  }
  return { url, host: bareHost(url.hostname) };
}

/** The refusal of an address in the URL, judged before anything is sent (it is connected to without a lookup). */
function addressRefused(host: string, policy: WebhookPolicy): RefusedError | undefined {
  const why = isIP(host) ? policy.refusal(host) : undefined;
  return why ? refused(host, `it is ${why}`) : undefined;
}

/** A dry run's lookups of webhook hosts, by bare host name: each resolved once in a run (checkWebhook). */
export type HostLookups = Map<string, Promise<unknown>>;

/** The lookup errors that say a name has no address, which the real run's connection fails on as well. */
const UNRESOLVED = new Set(['ENOTFOUND', 'ENODATA']);

/**
 * A dry run's check of a webhook it plans: what the real run refuses before it sends, and the address policy
 * (FLEETBOOK_WEBHOOK_ALLOW), with the real run's RefusedError. A name is resolved, as the real run's connection
 * would resolve it, and every address judged (not those of a name allowed by name); nothing is connected to. A name that does not resolve (no such
 * name, no address) fails with the real run's network error; a lookup that failed for a while (a DNS server that
 * did not answer) passes, as the real run's retries may get past it. `lookups` keeps what a run found of each host,
 * so that a loop looks a host up once, not at every iteration. On the embedded emulator, where webhooks are held
 * back, nothing is looked up (not even a DNS query about the channel leaves the machine): only an address in the
 * URL and `localhost` are judged, as the real run with FLEETBOOK_EMULATOR_WEBHOOKS=send would judge them.
 */
export async function checkWebhook(
  input: WebhookInput,
  policy: WebhookPolicy,
  lookups: HostLookups = new Map(),
): Promise<void> {
  const { host } = judged(input, policy);
  const now = addressRefused(host, policy);
  if (now) throw now;
  if (isIP(host)) return;
  if (policy.heldBack) {
    const why = localhostRefusal(host, policy);
    if (why) throw refused(host, `it resolves to 127.0.0.1, ${why}`);
    return;
  }
  let looked = lookups.get(host);
  if (!looked) {
    looked = new Promise<unknown>((resolve) => policy.lookup(host, { all: true }, (e) => resolve(e)));
    lookups.set(host, looked);
  }
  const error = await looked;
  const refusal = refusalOf(error);
  if (refusal) throw refusal;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && UNRESOLVED.has(code)) throw networkError(ACTION, error);
}

/** Sends the webhook; an answer of 300 or more is an ApiError, so that `retry.on: [http.5xx]` applies. */
export async function sendWebhook(
  input: WebhookInput,
  policy: WebhookPolicy,
  signal?: AbortSignal,
): Promise<{ status: number }> {
  const { url, host } = judged(input, policy);
  const headers = input.headers ?? {};
  // Before any lookup: on the emulator not even a DNS query about the channel leaves the machine.
  if (policy.heldBack) throw held(host, policy);
  const refusal = addressRefused(host, policy);
  if (refusal) throw refusal;
  let res: Dispatcher.ResponseData;
  try {
    res = await request(url, {
      dispatcher: policy.dispatcher(),
      method: input.method ?? 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(input.body ?? {}),
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
      signal: signal ?? null,
    });
  } catch (e) {
    // A refused address, or a failure below HTTP as the client's calls have it, so `retry.on: [network]` applies.
    throw refusalOf(e) ?? networkError(ACTION, e, signal);
  }
  const text = await res.body.text();
  if (res.statusCode >= 300) {
    throw new ApiError({
      status: res.statusCode,
      apiCode: `HTTP_${res.statusCode}`,
      apiMessage: `the webhook answered: ${text.slice(0, 200)}`,
      action: ACTION,
      shape: 'opaque',
    });
  }
  return { status: res.statusCode };
}
