/**
 * The connections to the service, one HTTP exchange over undici, and the mapping of what can go wrong onto the
 * error catalog. Retries, auth and rate live in client.ts; this file only connects, sends and reads.
 */
import { EventEmitter } from 'node:events';
import { Pool, type Dispatcher } from '../util/undici.js';
import { AbortedError, ApiError, FleetbookError, NetworkError, type ErrorBodyShape } from '../errors.js';
import { parseRetryAfter } from '../retry.js';
import type { Method } from './catalog.js';

export interface Timeouts {
  /** Time to wait for the response headers, in ms. @default 30000 */
  headersMs: number;
  /** Time allowed between two chunks of the body, in ms. @default 30000 */
  bodyMs: number;
}

/**
 * The keep-alive connections to the service's origin: `inFlight`, as many as the client's areas let be in flight
 * together, so that a request an area starts (its rate budget counts it then) never waits for a connection, to
 * leave later with the next ones.
 */
export function servicePool(origin: string, inFlight: number, timeouts: Timeouts): Pool {
  return new Pool(origin, {
    connections: inFlight,
    pipelining: 1,
    keepAliveTimeout: 4_000,
    connectTimeout: 10_000,
    headersTimeout: timeouts.headersMs,
    bodyTimeout: timeouts.bodyMs,
  });
}

export interface Exchange {
  action: string;
  method: Method;
  /** Path below the origin, base path included, e.g. `/api/loc/v1/consents`. */
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** For an untrusted certificate: how to trust a private CA. */
const TRUST = 'a private CA is trusted by giving its certificate in NODE_EXTRA_CA_CERTS';
/**
 * TLS handshakes that failed, before the request was written, in words that say what to check: OpenSSL's own
 * text ("ssl3_get_record:wrong version number") does not.
 */
const TLS_FAILURES: Record<string, string> = {
  ERR_SSL_WRONG_VERSION_NUMBER:
    'the server did not answer in TLS: does the API URL say https for a port that speaks http?',
  ERR_TLS_CERT_ALTNAME_INVALID:
    "the server's TLS certificate is not for this host name: check the API URL's host",
  CERT_HAS_EXPIRED: `the server's TLS certificate has expired; ${TRUST}`,
  DEPTH_ZERO_SELF_SIGNED_CERT: `the server's TLS certificate is self-signed and not trusted; ${TRUST}`,
  SELF_SIGNED_CERT_IN_CHAIN: `the server's TLS certificate chain ends in a CA this machine does not trust; ${TRUST}`,
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: `the server's TLS certificate is issued by a CA this machine does not trust; ${TRUST}`,
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: `the server's TLS certificate cannot be verified (its issuer is not trusted); ${TRUST}`,
};

/** Causes that prove the request never reached the service. */
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
  ...Object.keys(TLS_FAILURES),
]);

/**
 * A dispatcher that tells each request of `send` when its connection is about to write it (`onRequestStart`, which
 * undici calls for a request given a connection, just before it writes its first byte), and first calls its
 * `beforeWrite` (see send), aborting the request with what it throws: a check that must hold when the request
 * leaves, not only when it was queued (a process stopped in between would send it when it runs again). An error
 * before that moment (the connection refused, reset during its TLS handshake, its name not found, the pool closed)
 * proves that nothing of the request was written, whatever its code.
 */
export function written(dispatcher: Dispatcher): Written {
  return dispatcher.compose((dispatch) => (opts, handler) => {
    const o = opts as { beforeWrite?: () => void; writing?: Writing };
    return dispatch(opts, o.writing ? new Watched(handler, o.writing, o.beforeWrite) : handler);
  }) as Written;
}

/** A dispatcher made by `written`, the only kind `send` takes: it says when a request starts to be written. */
export type Written = Dispatcher & { readonly [WRITTEN]: true };
declare const WRITTEN: unique symbol;

/** Whether undici has given a request to a connection to write: set as it begins to. */
interface Writing {
  started: boolean;
}

type Handler = Dispatcher.DispatchHandler;
type Controller = Dispatcher.DispatchController;

/** A request's handler, which notes when its connection is about to write it, after `check`: what it throws aborts it unsent. */
class Watched implements Handler {
  constructor(
    private readonly h: Handler,
    private readonly writing: Writing,
    private readonly check: (() => void) | undefined,
  ) {}

  onRequestStart(controller: Controller, context: unknown): void {
    try {
      this.check?.();
    } catch (e) {
      controller.abort(e as Error);
      return;
    }
    this.h.onRequestStart?.(controller, context);
    // Unless its own handler aborted it there (its signal aborted while it waited for a connection): not written.
    if (!controller.aborted) this.writing.started = true;
  }
  onRequestUpgrade(...a: Parameters<NonNullable<Handler['onRequestUpgrade']>>): void {
    this.h.onRequestUpgrade?.(...a);
  }
  onResponseStart(...a: Parameters<NonNullable<Handler['onResponseStart']>>): void {
    this.h.onResponseStart?.(...a);
  }
  onResponseData(...a: Parameters<NonNullable<Handler['onResponseData']>>): void {
    this.h.onResponseData?.(...a);
  }
  onResponseEnd(...a: Parameters<NonNullable<Handler['onResponseEnd']>>): void {
    this.h.onResponseEnd?.(...a);
  }
  onResponseError(...a: Parameters<NonNullable<Handler['onResponseError']>>): void {
    this.h.onResponseError?.(...a);
  }
}

/**
 * One request, on a dispatcher made by `written`: `beforeWrite` is called as the request is about to be written
 * (what it throws fails the request as it is, unsent), and a network error that came before then is one of a
 * request not sent, whatever its code.
 */
export async function send(
  dispatcher: Written,
  origin: string,
  x: Exchange,
  timeouts: Timeouts,
  signal?: AbortSignal,
  beforeWrite?: () => void,
): Promise<RawResponse> {
  const writing: Writing = { started: false };
  try {
    const res = await dispatcher.request({
      ...({ writing, ...(beforeWrite ? { beforeWrite } : {}) } as object),
      origin,
      path: x.path,
      method: x.method,
      headers: x.headers,
      body: x.body ?? null,
      headersTimeout: timeouts.headersMs,
      bodyTimeout: timeouts.bodyMs,
      signal: signal ? emitterOf(signal) : null,
    });
    const text = await res.body.text();
    return { status: res.statusCode, headers: res.headers, text };
  } catch (e) {
    if (e instanceof FleetbookError) throw e;
    throw networkError(x.action, e, signal, writing.started);
  }
}

/**
 * An AbortSignal as undici also takes one: an EventEmitter that emits `abort`, with the signal's `aborted` and
 * `reason`. undici adds a listener for each request and removes it at the end; on an AbortSignal (an
 * EventTarget, with every listener an object of its own) that cost about 50 us a request, on an emitter next to
 * nothing. One emitter per signal, which listens to the signal once.
 */
class AbortEmitter extends EventEmitter {
  constructor(private readonly signal: AbortSignal) {
    super();
    // Every request in flight under the signal listens: a fan-out has many.
    this.setMaxListeners(0);
    signal.addEventListener('abort', () => this.emit('abort'), { once: true });
  }

  get aborted(): boolean {
    return this.signal.aborted;
  }

  get reason(): unknown {
    return this.signal.reason;
  }
}

const emitters = new WeakMap<AbortSignal, AbortEmitter>();

function emitterOf(signal: AbortSignal): AbortEmitter {
  let e = emitters.get(signal);
  if (!e) emitters.set(signal, (e = new AbortEmitter(signal)));
  return e;
}

/**
 * A failure below HTTP as the one error type: cancelled (AbortedError), or a NetworkError; each says whether it was
 * sent. A request may have been sent unless `mayBeWritten` is false (the error came before its connection began to
 * write it: `written`) or, for a NetworkError, its cause proves otherwise (NOT_SENT).
 */
export function networkError(
  action: string,
  e: unknown,
  signal?: AbortSignal,
  mayBeWritten = true,
): FleetbookError {
  if (signal?.aborted) return new AbortedError(action, mayBeWritten, { cause: e });
  const err = e as { code?: string; message?: string; cause?: { code?: string } };
  const code = err.code && err.code !== 'UND_ERR' ? err.code : (err.cause?.code ?? 'UNKNOWN');
  const cause = err.cause?.code && NOT_SENT.has(err.cause.code) ? err.cause.code : code;
  const sent = mayBeWritten && !NOT_SENT.has(cause);
  const said = TLS_FAILURES[cause] ?? err.message ?? String(e);
  return new NetworkError(action, cause, sent, `${said} (${cause})`, { cause: e });
}

/**
 * A 2xx answer's body: its JSON, or null when empty. Any other body (a proxy's sign-in page, a captive portal)
 * is not the service's answer, whose bodies are all JSON (spec, conventions): it fails the call as an opaque
 * error answer, `permanent`, rather than hand a page of HTML to the caller as the result.
 */
export function successBody(action: string, res: RawResponse, now: number): unknown {
  const body = parseBody(res.text);
  if (typeof body !== 'string') return body;
  const type = res.headers['content-type'];
  throw apiError(
    action,
    {
      ...res,
      text: `the answer is not JSON${type ? ` (${String(type)})` : ''}, so not the service's: ${body}`,
    },
    now,
  );
}

/** A body: JSON when it parses, null when empty, the text otherwise. */
export function parseBody(text: string): unknown {
  if (text.trim() === '') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** Any error answer as an ApiError: the three body shapes of spec section 7, `errorUrl`, or opaque text. */
export function apiError(action: string, res: RawResponse, now: number): ApiError {
  const body = parseBody(res.text);
  let shape: ErrorBodyShape = 'opaque';
  let apiCode = `HTTP_${res.status}`;
  let apiMessage = typeof body === 'string' ? body.slice(0, 500) : res.text.slice(0, 500);
  let errorUrl: string | undefined;
  let cause: string | undefined;
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const b = body as Record<string, unknown>;
    if (typeof b.errorCode === 'string' || typeof b.errorMessage === 'string') {
      shape = 'errorCode';
      apiCode = str(b.errorCode) ?? apiCode;
      apiMessage = str(b.errorMessage) ?? '';
      errorUrl = str(b.errorUrl);
    } else if (typeof b.error === 'string' || typeof b.error_description === 'string') {
      cause = str(b.cause);
      shape = cause !== undefined ? 'error+cause' : 'error';
      apiCode = str(b.error) ?? apiCode;
      apiMessage = str(b.error_description) ?? '';
    } else {
      apiMessage = res.text.slice(0, 500);
    }
  }
  if (apiMessage === '') apiMessage = `HTTP ${res.status}`;
  const retryAfterMs = parseRetryAfter(res.headers['retry-after'], now);
  return new ApiError({
    status: res.status,
    bearerRefused: res.status === 401 && refusesBearer(res.headers['www-authenticate']),
    apiCode,
    apiMessage,
    action,
    shape,
    ...(errorUrl !== undefined ? { errorUrl } : {}),
    ...(cause !== undefined ? { cause } : {}),
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  });
}

/**
 * Whether a 401's `WWW-Authenticate` is the challenge of RFC 6750 section 3.1 for a bearer token sent and refused
 * (unknown, revoked, expired): the `Bearer` scheme with `error="invalid_token"`. The spec shows no answer to a
 * refused bearer token, nor to a wrong password at the login; this challenge is the bearer scheme's own word for the
 * first, and so the one sign fleetbook trusts that a login was refused for its token and not the user's password.
 * A 401 without it (another challenge, none, an error code in the body only) is not taken for the token's: a login
 * so refused is counted as a failed login of the user, the safe side (docs/spec-decisions.md).
 */
export function refusesBearer(challenge: string | string[] | undefined): boolean {
  const all = Array.isArray(challenge) ? challenge.join(', ') : (challenge ?? '');
  // The Bearer challenge's parameters up to the next scheme, quoted strings skipped whole.
  const bearer = /(?:^|,)\s*Bearer((?:\s*,?\s*[\w-]+\s*=\s*(?:"(?:[^"\\]|\\.)*"|[^\s,"]*))*)/i.exec(all);
  return (
    bearer !== null &&
    /(?:^|[\s,])error\s*=\s*(?:"invalid_token"|invalid_token(?![^\s,]))/i.test(
      (bearer[1] ?? '').replace(/"(?:[^"\\]|\\.)*"/g, (q) => (q === '"invalid_token"' ? q : '""')),
    )
  );
}

function str(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  return typeof v === 'string' ? v : JSON.stringify(v);
}
