/**
 * Error selectors of `retry.on` and `devices.retry.on`, and which of them an action can actually meet, so
 * that `fleetbook validate` rejects a retry that can never fire (as actionlint does for workflows).
 *
 * Step `retry.on` selectors:
 * - `http.4xx`, `http.5xx`, `http.429`, ...: the HTTP status class or code of an API error;
 * - an API error code (`INTERNAL_ERROR`, `INVALID_PARAMETER`, ...), where the spec lists the action's codes;
 * - `network`: no HTTP answer (refused, reset, timed out); `timeout`: the step's own timeout;
 * - `retryable`: any error of that retry class.
 * `devices.retry.on` and `devices.ignore` take per-device error types of spec section 7.3, for actions that
 * report them, and the carrier's codes (and STATE NOT CHANGED) for device-state actions.
 */
import { ACTIONS, CATALOG, isAction, type Operation } from '../api/catalog.js';
import { DEVICE_ERRORS, DEVICE_STATE_ERROR_TYPES, isDeviceErrorType } from '../api/device-errors.js';
import { isEngineAction } from './engine.js';

/** API error codes per area where the spec shows them (section 7); elsewhere any code is possible. */
const AREA_CODES: Partial<Record<Operation['area'], readonly string[]>> = {
  loc: ['INVALID_PARAMETER', 'CACHE_UNAVAILABLE', 'INTERNAL_ERROR', 'PARAMETER_ERROR', 'INVALID_ACCESS'],
  subsc: ['INVALID_PARAMETER', 'INTERNAL_ERROR', 'INVALID_ACCESS'],
};

/** The API error codes the spec shows for `action`'s area; undefined where it shows none (any code). */
export function apiErrorCodes(action: string): readonly string[] | undefined {
  return isAction(action) ? AREA_CODES[(CATALOG[action] as Operation).area] : undefined;
}

const GENERIC = new Set(['network', 'timeout', 'retryable']);
const HTTP = /^http\.([45]xx|[45][0-9]{2})$/;

/** Why `selector` can never match an error of `action` in a step `retry.on`; undefined when it can. */
export function stepSelectorProblem(action: string | undefined, selector: string): string | undefined {
  if (GENERIC.has(selector)) return undefined;
  if (isDeviceErrorType(selector)) {
    return `\`${selector}\` is a per-device error: retry those devices with \`devices.retry\`, not the whole step`;
  }
  if (selector === 'session')
    return '`session` errors are renewed by the client itself (one login, then a replay)';
  if (selector === 'permanent')
    return '`permanent` errors fail the same way every time; retrying cannot help';
  const api = action !== undefined && isAction(action);
  if (HTTP.test(selector)) {
    return api || action === 'notify.webhook' ? undefined : `\`${action ?? 'this step'}\` makes no HTTP call`;
  }
  if (/^[A-Z][A-Z0-9_]*$/.test(selector)) {
    if (!api) return `\`${action ?? 'this step'}\` cannot return API error code \`${selector}\``;
    const codes = apiErrorCodes(action);
    if (codes && !codes.includes(selector)) {
      return `\`${action}\` cannot return API error code \`${selector}\` (it can return ${codes.join(', ')})`;
    }
    return undefined;
  }
  return `unknown error selector \`${selector}\`: use http.5xx, http.429, an API error code, network, timeout or retryable`;
}

/**
 * Why a step of `action` cannot say `confirm:`: only device-state actions answer with a request id and carry
 * it out later, device by device; the others' answer is their outcome. Undefined when it can.
 */
export function confirmProblem(action: string): string | undefined {
  if (isAction(action) && (CATALOG[action] as Operation).strategy === 'deviceState') return undefined;
  const which = ACTIONS.filter((a) => (CATALOG[a] as Operation).strategy === 'deviceState');
  return `\`confirm\` applies to the actions the carrier carries out later (${which.join(', ')}); \`${action}\` answers with its outcome, so there is nothing to confirm`;
}

/**
 * Why a step of `action` cannot say `wait: { for: completion }`: only a location report's result comes after
 * its answer (the report is made meanwhile); the others' answer is their result. Undefined when it can.
 */
export function completionProblem(action: string): string | undefined {
  if (isAction(action) && (CATALOG[action] as Operation).strategy === 'locationReport') return undefined;
  const which = ACTIONS.filter((a) => (CATALOG[a] as Operation).strategy === 'locationReport');
  return `\`wait: { for: completion }\` applies to the actions whose result comes later (${which.join(', ')}); \`${action}\` has its result when it returns, so there is nothing to wait for`;
}

/**
 * Why a wait's `poll` cannot call `action`: a poll calls it every interval until `until` holds, outside the
 * checks of a step that changes things (dry run, `limits`, the ledger). Only an API call that reads can be
 * polled. Undefined when it can.
 */
export function pollProblem(action: string): string | undefined {
  if (isAction(action) && !(CATALOG[action] as Operation).mutating && !action.startsWith('session.'))
    return undefined;
  if (!isAction(action))
    return `\`${action}\` is no API call: a poll asks the service for something every interval until \`until\` holds`;
  return `\`${action}\` changes things: a poll calls its action every interval until \`until\` holds, in a dry run too and past \`limits\`, so it can only read; make the change in a step before the wait`;
}

/** Why `type` cannot be a per-device error of `action` (`devices.retry.on`, `devices.ignore`). */
export function deviceSelectorProblem(action: string | undefined, type: string): string | undefined {
  if (action !== undefined && isAction(action) && (CATALOG[action] as Operation).strategy === 'deviceState') {
    if (DEVICE_STATE_ERROR_TYPES.includes(type)) return undefined;
    return `\`${type}\` is not a per-device error of \`${action}\` (it can report ${DEVICE_STATE_ERROR_TYPES.join(', ')})`;
  }
  const reports =
    action !== undefined && isAction(action) && (CATALOG[action] as Operation).deviceErrors === true;
  if (!reports) {
    const what = action && (isAction(action) || isEngineAction(action)) ? `\`${action}\`` : 'this step';
    return `${what} reports no per-device errors of spec section 7.3`;
  }
  if (!isDeviceErrorType(type)) {
    const near = Object.keys(DEVICE_ERRORS).filter(
      (t) => t.includes(type.toUpperCase()) || type.toUpperCase().includes(t),
    );
    return `\`${type}\` is not a per-device error type of spec section 7.3${near.length ? ` (did you mean \`${near[0]}\`?)` : ''}`;
  }
  return undefined;
}
