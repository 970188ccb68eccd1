/**
 * Errors the emulator answers with. A handler throws a `Failure` (status, code, message); the server renders
 * it in the body shape of the operation's area (spec section 7):
 * - `errorCode`: `{ errorCode, errorMessage }` (location, usage triggers, managed accounts, connectivity);
 * - `error`: `{ error, error_description }` (price plan triggers);
 * - `error+cause`: `{ error, error_description, cause }` (sensor insights).
 */
import type { ErrorShape } from '../api/catalog.js';
import { SESSION_EXPIRED_MESSAGE } from '../errors.js';

export class Failure extends Error {
  readonly status: number;
  readonly code: string;
  /** For the sensor shape: what in the request caused it. */
  readonly detail?: string;
  readonly headers?: Record<string, string>;

  constructor(
    status: number,
    code: string,
    message: string,
    detail?: string,
    headers?: Record<string, string>,
  ) {
    super(message);
    this.status = status;
    this.code = code;
    if (detail !== undefined) this.detail = detail;
    if (headers !== undefined) this.headers = headers;
  }
}

export function renderError(shape: ErrorShape, f: Failure): Record<string, string> {
  switch (shape) {
    case 'error':
      return { error: f.code, error_description: f.message };
    case 'error+cause':
      return { error: f.code, error_description: f.message, cause: f.detail ?? f.message };
    default:
      return { errorCode: f.code, errorMessage: f.message };
  }
}

const bad = (message: string, code = 'INVALID_PARAMETER') => new Failure(400, code, message);

/** Spec 7.1 and 7.2, row for row. Functions take the value a message names. */
export const E = {
  unableToCancel: () => bad('Unable to Cancel'),
  invalidJson: () => bad('Invalid JSON'),
  deviceNotFound: () => bad('Device not found'),
  cacheUnavailable: () => bad('Location cache has no data for this device', 'CACHE_UNAVAILABLE'),
  conflictingDeviceList: (code = 'INVALID_PARAMETER') => bad('Conflicting device list', code),
  consentCheckFailed: () => bad('Consent check failed'),
  ownership: (code = 'INVALID_PARAMETER') => bad('Ownership or MDN validation failed', code),
  accountNotFound: (account: string) => bad(`UWS verification failure (Could not find account ${account})`),
  sessionExpired: () => bad(SESSION_EXPIRED_MESSAGE),
  deviceTypeCheckFailed: () => bad('Device type check failed'),
  invalidAccountName: () => bad('Invalid account name'),
  unregisteredAccount: () => bad('Unregistered account'),
  invalidAccuracyMode: () => bad('Invalid accuracy mode'),
  invalidCacheMode: () => bad('Invalid cache mode'),
  emptyDeviceList: () => bad('Empty device list'),
  maxDevicesExceeded: () => bad('Per request max devices exceeded'),
  duplicateDevices: () => bad('Duplicate devices'),
  inputBinding: () => bad('Input Binding Error'),
  invalidKind: () => bad('Invalid device kind. Valid kinds are IMEI, MEID or ESN'),
  invalidIdFormat: (code = 'INVALID_PARAMETER') => bad('Invalid device ID format', code),
  failedToGetLocation: (status = 400) => new Failure(status, 'INTERNAL_ERROR', 'Failed to get location'),
  failToVerifyDevice: () => bad('Fail to verify device', 'INTERNAL_ERROR'),
  maxExclusions: () => bad('Max exclusion devices over limit', 'PARAMETER_ERROR'),
  duplicateExclusions: () => bad('Duplicate exclusion devices', 'PARAMETER_ERROR'),
  noAccess: () =>
    new Failure(401, 'INVALID_ACCESS', 'The access policy denied the resource operation for this user'),
  internal: () => new Failure(500, 'INTERNAL_ERROR', 'Internal system error'),

  // 7.2
  notProvisioned: () => bad('Acct Not Provisioned With Provided Parameters. Check service & type fields'),
  invalidServiceName: () => bad('Invalid Service Name'),
  primaryNotRegistered: () => bad('Primary account not registered'),
  txdMismatch: () => bad('Txd Mismatch'),
  contactNoAccess: (account: string) =>
    bad(`UWS account validation failed(The contact does not have access to the account ${account}.)`),

  // Not in the spec's tables: our own wording, in the same style (ARCHITECTURE.md).
  invalid: (message: string, detail?: string) => new Failure(400, 'INVALID_PARAMETER', message, detail),
  notFound: (message: string) => new Failure(404, 'NOT_FOUND', message),
  unauthorized: (message: string) => new Failure(401, 'UNAUTHORIZED', message),
  tooManyRequests: (retryAfterSeconds: number) =>
    new Failure(429, 'TOO_MANY_REQUESTS', 'Too many requests', undefined, {
      'retry-after': String(retryAfterSeconds),
    }),
} as const;
