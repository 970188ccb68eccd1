/* global sessionStorage */
/**
 * The action a sign-in stands in front of: a run to start (its form as filled) or a run to cancel, refused for
 * want of a session on a console read without one (on loopback). It is kept as it is asked, and kept on once
 * refused: the sign-in form says why from here (signInReason). It is kept in the tab's sessionStorage, so that
 * a reload during sign-in, or signing in by the token address, still gives the form or the run's page back; it
 * goes with the tab, and once given back or once the run is started. It never holds a secret: the fields named
 * like one (as the daemon masks them in a run's inputs) stay in the page's memory, and are typed again after a
 * reload. The run page and the run form send their action through here (send), kept and dropped the same way.
 */

import { api, ApiError } from './api.js';

const KEY = 'fleetbook-console-pending';

/**
 * @typedef {{ kind: 'start', playbook: string, values: Record<string, string | boolean>, withheld: string[],
 *   dryRun?: boolean }} StartAction
 * `values`: the typed text of each field (a checkbox: whether it is checked) but the secrets; `withheld`: the
 * fields left out as secrets; `dryRun`: a dry run was asked for.
 * @typedef {{ kind: 'cancel', run: string }} CancelAction
 * @typedef {(StartAction | CancelAction) & { hash: string, reason: string }} Pending
 * `hash`: the page it was asked on; `reason`: what the sign-in form says of it.
 */

/** @type {Pending | undefined} The same, when the browser refuses sessionStorage (a private mode may). */
let inMemory;
/** The secrets typed in the form of the pending start: this page's memory only, gone with a reload. */
let secrets = /** @type {Record<string, string | boolean>} */ ({});

/**
 * Whether a field's typed text holds a secret: it is JSON (a list's, an object's) with a key named like one at any
 * depth, or text that does not read as JSON and names one. `secretName`: the names the daemon masks as secrets,
 * served with the playbooks (src/util/secrets.ts SECRET_KEY); without it, any such text may.
 * @param {string | boolean} value
 * @param {RegExp | undefined} secretName
 */
export function holdsSecret(value, secretName) {
  if (typeof value !== 'string' || !/[[{]/.test(value)) return false;
  if (!secretName) return true;
  /** @param {unknown} v @returns {boolean} */
  const holds = (v) =>
    v !== null &&
    typeof v === 'object' &&
    Object.entries(v).some(([k, x]) => (!Array.isArray(v) && secretName.test(k)) || holds(x));
  try {
    return holds(JSON.parse(value));
  } catch {
    return secretName.test(value);
  }
}

/**
 * Keeps the start of a run that may be refused for want of a session: the secrets in memory, the rest in the
 * tab's storage. Kept before it is asked, and dropped once it is answered but by a 401, so that the sign-in
 * form reads its reason here.
 * @param {{ playbook: string, typed: Record<string, string | boolean>, withheld: string[], dryRun: boolean,
 *   hash: string, reason: string }} start
 * `withheld`: the fields that hold a secret (named like one, or holding one), kept in memory only.
 */
export function keepStart({ playbook, typed, withheld, dryRun, hash, reason }) {
  /** @type {Record<string, string | boolean>} */
  const values = {};
  secrets = {};
  for (const [input, value] of Object.entries(typed))
    if (withheld.includes(input)) secrets[input] = value;
    else values[input] = value;
  keep({ kind: 'start', playbook, values, withheld: Object.keys(secrets), dryRun, hash, reason });
}

/**
 * Keeps the cancel of a run that may be refused for want of a session, as keepStart keeps a start.
 * @param {{ run: string, hash: string, reason: string }} cancel
 */
export function keepCancel({ run, hash, reason }) {
  secrets = {};
  keep({ kind: 'cancel', run, hash, reason });
}

/**
 * Sends an action a sign-in may stand in front of (a POST of `body` to `path`), kept by `keep` (keepStart,
 * keepCancel) before it is asked, so that a 401 brings the sign-in form saying why. `busy(true)` as it goes. Its
 * answer is given to `answered`, once forgotten. Refused for want of a session (401), it stays kept and nothing
 * else is done: the sign-in form has taken the page's place, and gives it back once signed in. Any other refusal
 * is forgotten, and said by `failed` after `busy(false)`.
 * @param {{ keep: () => void, path: string, body?: unknown, busy: (on: boolean) => void,
 *   answered: (answer: any) => void, failed: (message: string) => void }} action
 */
export async function send({ keep, path, body, busy, answered, failed }) {
  keep();
  busy(true);
  let answer;
  try {
    answer = await api(path, { method: 'POST', body });
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return;
    drop();
    busy(false);
    failed(/** @type {Error} */ (err).message);
    return;
  }
  drop();
  answered(answer);
}

/** @param {Pending} p */
function keep(p) {
  inMemory = p;
  try {
    sessionStorage.setItem(KEY, JSON.stringify(p));
    inMemory = undefined;
  } catch {
    // no storage in this browser: the page's memory holds it, as long as the page lives
  }
}

/** The action waiting for sign-in, or undefined. @returns {Pending | undefined} */
export function pending() {
  try {
    const text = sessionStorage.getItem(KEY);
    if (text) {
      const p = JSON.parse(text);
      if (p && (p.kind === 'start' || p.kind === 'cancel') && typeof p.hash === 'string') return p;
    }
  } catch {
    // unreadable, or no storage: what memory holds
  }
  return inMemory;
}

/** Forgets the action waiting for sign-in: given back, done, or given up. */
export function drop() {
  inMemory = undefined;
  secrets = {};
  try {
    sessionStorage.removeItem(KEY);
  } catch {
    // no storage
  }
}

/**
 * The form of `playbook` as filled when its start was refused, taken once (it is forgotten): its values, the
 * secrets among them that this page still holds, whether a dry run was asked for, and what to say of the secret
 * fields to type again (the page was reloaded), or ''.
 * @param {string} playbook
 * @returns {{ values: Record<string, string | boolean>, dryRun: boolean, retype: string } | undefined}
 */
export function takeStart(playbook) {
  const p = pending();
  if (p?.kind !== 'start' || p.playbook !== playbook) return undefined;
  const held = secrets;
  drop();
  return {
    values: { ...p.values, ...held },
    dryRun: p.dryRun === true,
    retype: retypeText((p.withheld ?? []).filter((input) => !(input in held))),
  };
}

/**
 * What the operator is told of the secret fields to type again.
 * @param {string[]} inputs
 */
function retypeText(inputs) {
  if (!inputs.length) return '';
  const names = inputs.length > 1 ? `${inputs.slice(0, -1).join(', ')} and ${inputs.at(-1)}` : inputs[0];
  return `Type ${names} again: ${inputs.length > 1 ? 'secrets are' : 'a secret is'} not kept over a reload.`;
}

/**
 * What the sign-in form says of the action waiting for it, and of the secrets of its form to type again (this page
 * no longer holds them: it was reloaded); null when none waits.
 * @returns {string | null}
 */
export function signInReason() {
  const p = pending();
  if (!p) return null;
  const retype =
    p.kind === 'start' ? retypeText((p.withheld ?? []).filter((input) => !(input in secrets))) : '';
  return retype ? `${p.reason} ${retype}` : p.reason;
}

/**
 * Whether the cancel of `run` waits for sign-in; taken once (it is forgotten).
 * @param {string} run
 */
export function takeCancel(run) {
  const p = pending();
  if (p?.kind !== 'cancel' || p.run !== run) return false;
  drop();
  return true;
}
