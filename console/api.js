/* global fetch, URLSearchParams */
/**
 * The one door to the console's JSON API (docs/console.md). Every page goes through it so that the session
 * cookie, the anti-forgery header on actions and the handling of a lapsed session live in one place.
 */

/** An API call that did not answer 2xx, or did not answer at all (status 0). */
export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} message
   */
  constructor(status, message) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
  }
}

/** @type {() => void} */
let unauthorized = () => {};
/** Sign-ins of this tab so far: a 401 to a request sent before the last one says nothing of the session now. */
let signIns = 0;

/**
 * Who shows the sign-in form: any 401, from any page, lands there, so a lapsed session never leaves a page
 * silently empty. An action that a console read without signing in (on loopback) cannot do says why in the
 * action it keeps as it asks (console/pending.js).
 * @param {() => void} handler
 */
export function onUnauthorized(handler) {
  unauthorized = handler;
}

/**
 * Calls `/console/api<path>` and answers its JSON (null for 204). A POST carries the header a page of another
 * site cannot send, which the daemon requires of every action.
 * @param {string} path
 * @param {{ method?: string, body?: unknown, signal?: AbortSignal }} [options]
 */
export async function api(path, { method = 'GET', body, signal } = {}) {
  /** @type {Record<string, string>} */
  const headers = { accept: 'application/json' };
  if (method !== 'GET') {
    headers['content-type'] = 'application/json';
    headers['x-fleetbook-console'] = '1';
  }
  const session = signIns;
  let res;
  try {
    res = await fetch(`/console/api${path}`, {
      method,
      headers,
      credentials: 'same-origin',
      signal,
      body: method === 'GET' ? undefined : JSON.stringify(body ?? {}),
    });
  } catch (err) {
    if (signal?.aborted) throw err;
    throw new ApiError(0, `The daemon did not answer (${/** @type {Error} */ (err).message}).`);
  }
  if (res.status === 401 && path !== '/session') {
    if (session === signIns) unauthorized();
    throw new ApiError(401, 'Sign in to continue.');
  }
  if (!res.ok) throw new ApiError(res.status, await errorText(res));
  return res.status === 204 ? null : res.json();
}

/**
 * The `{ error }` the daemon answers with, or the bare status line when the body is something else (a proxy's
 * page, an empty 502).
 * @param {Response} res
 */
async function errorText(res) {
  const text = await res.text().catch(() => '');
  try {
    const body = JSON.parse(text);
    if (body && typeof body.error === 'string') return body.error;
  } catch {
    // not JSON: fall through to the status line
  }
  return `${res.status} ${res.statusText || 'error'}`.trim();
}

/**
 * Exchanges the console token for the session cookie.
 * @param {string} token
 */
export async function signIn(token) {
  try {
    await api('/session', { method: 'POST', body: { token } });
    signIns++;
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) throw new ApiError(401, 'That token is not right.');
    throw err;
  }
}

/**
 * A query string of the non-empty values, with its `?`, or '' when there are none: empty filters are left
 * out rather than sent as `status=` which the daemon would reject as a bad value.
 * @param {Record<string, string | number | undefined | null>} params
 */
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params))
    if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** @param {string} s */
export const enc = (s) => encodeURIComponent(s);
