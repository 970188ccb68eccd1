/**
 * The per-device errors of spec section 7.3, row for row, with the exact type strings and a class:
 * - transient: the device or network may answer later; retry the device as it was;
 * - remediable: a changed argument fixes it (SVC CACHE UNAVAILABLE: cacheMode 1 or 2);
 * - permanent: retrying the same request cannot help.
 * test/client/device-error-catalog.test.ts checks this table against the spec. The carrier's own codes for
 * device-state actions are in a table of their own below (CARRIER_ERRORS), so that this one stays the spec's.
 */
import { closest } from '../util/closest.js';

export type DeviceErrorClass = 'transient' | 'remediable' | 'permanent';

export const DEVICE_ERRORS = {
  'SVC CACHE UNAVAILABLE': 'remediable',
  'SVC CONSENT CHECK FAILED': 'permanent',
  'SVC DEVICE TYPE CHECK FAILED': 'permanent',
  'SVC DEVICE DATA UNAVAILABLE': 'permanent',
  'SVC DEVICE LOCATION DATA UNAVAILABLE': 'transient',
  'SYSTEM FAILURE': 'transient',
  'UNSPECIFIED ERROR': 'permanent',
  'UNAUTHORIZED APPLICATION': 'permanent',
  'UNKNOWN SUBSCRIBER': 'permanent',
  'ABSENT SUBSCRIBER': 'transient',
  'POSITION METHOD FAILURE': 'transient',
  TIMEOUT: 'transient',
  'CONGESTION IN LOCATION SERVER': 'transient',
  'UNSUPPORTED VERSION': 'permanent',
  'TOO MANY POSITION ITEMS': 'permanent',
  'FORMAT ERROR': 'permanent',
  'SYNTAX ERROR': 'permanent',
  'PROTOCOL ELEMENT NOT SUPPORTED': 'permanent',
  'SERVICE NOT SUPPORTED': 'permanent',
  'PROTOCOL ELEMENT ATTRIBUTE NOT SUPPORTED': 'permanent',
  'INVALID PROTOCOL ELEMENT VALUE': 'permanent',
  'INVALID PROTOCOL ELEMENT ATTRIBUTE VALUE': 'permanent',
  'PROTOCOL ELEMENT VALUE NOT SUPPORTED': 'permanent',
  'PROTOCOL ELEMENT ATTRIBUTE VALUE NOT SUPPORTED': 'permanent',
  'CANCELLATION OF TRIGGERED LOCATION REQUEST': 'permanent',
  'QOP NOT ATTAINABLE': 'permanent',
  'POSITIONING NOT ALLOWED': 'permanent',
  'CONGESTION IN MOBILE NETWORK': 'transient',
  'DISALLOWED BY LOCAL REGULATIONS': 'permanent',
  'MISCONFIGURATION OF LOCATION SERVER': 'permanent',
  'TARGET MOVED TO NEW MSC/SGSN': 'transient',
  'STANDARD LOCATION REPORT SERVICE NOT SUPPORTED': 'permanent',
  'MLS CLIENT ERROR': 'permanent',
  'STANDARD LOCATION REPORT SERVICE NOT ACCEPTED': 'permanent',
  'SUBSCRIBER ID IN STANDARD LOCATION REPORT SERVICE NOT VALID': 'permanent',
  'INVALID SERVICE ID IN STANDARD LOCATION REPORT SERVICE': 'permanent',
} as const satisfies Record<string, DeviceErrorClass>;

export type DeviceErrorType = keyof typeof DEVICE_ERRORS;
export const DEVICE_ERROR_TYPES = Object.keys(DEVICE_ERRORS) as DeviceErrorType[];

export function isDeviceErrorType(type: string): type is DeviceErrorType {
  return Object.hasOwn(DEVICE_ERRORS, type);
}

/** The rows of the table that start with the neutral prefix, without it: `CACHE UNAVAILABLE`, ... */
const UNPREFIXED = new Set(
  DEVICE_ERROR_TYPES.filter((t) => t.startsWith('SVC ')).map((t) => t.slice('SVC '.length)),
);

/**
 * A per-device error type by the spec's name. "The neutral prefix SVC stands for a vendor prefix in the
 * source" (spec 7.3): the real service writes its vendor's prefix, one word, where the table writes `SVC`, so
 * `ACME CACHE UNAVAILABLE` is read as `SVC CACHE UNAVAILABLE`, and a playbook's rules, the ledger and the
 * error classes use the spec's names whatever the service calls itself. Only the rows that start with `SVC`
 * are read so; every other type is kept as sent.
 */
export function specErrorType(type: string): string {
  const space = type.indexOf(' ');
  const rest = type.slice(space + 1);
  return space > 0 && UNPREFIXED.has(rest) ? `SVC ${rest}` : type;
}

/**
 * Why the carrier did not carry out a device-state action (suspend, restore, activate, deactivate, plan change)
 * on one device: the `faultcode` of the device's CarrierService callback, and the `reason.code` of the
 * emulator's request record. The spec lists no codes for these; they are fleetbook's own, in the style of the
 * 7.3 table (src/emulator/ARCHITECTURE.md, docs/spec-decisions.md). Both are about the device's state, which
 * the same request cannot change: permanent.
 * - `INVALID DEVICE STATE`: the action does not apply to the device's state (suspending a pending device,
 *   restoring a pending one, activating a suspended one);
 * - `DEVICE DEACTIVATED`: the device is deactivated; only activation applies to it.
 */
export const CARRIER_ERRORS = {
  'INVALID DEVICE STATE': 'permanent',
  'DEVICE DEACTIVATED': 'permanent',
} as const satisfies Record<string, DeviceErrorClass>;

export type CarrierErrorType = keyof typeof CARRIER_ERRORS;
export const CARRIER_ERROR_TYPES = Object.keys(CARRIER_ERRORS) as CarrierErrorType[];

export function isCarrierErrorType(type: string): type is CarrierErrorType {
  return Object.hasOwn(CARRIER_ERRORS, type);
}

/**
 * fleetbook's own type for a device whose request the service reports finished (`Failure`, `PartialSuccess`) and
 * that is not in the action's target state, as read from its state: without its callback, no reason is known (one that comes after the run puts the service's reason in its place).
 */
export const STATE_NOT_CHANGED = 'STATE NOT CHANGED';

/**
 * The types fleetbook itself records for a device, beside the service's (7.3) and the carrier's: what each says,
 * with its class (none for a device `skipped`), for docs/errors.md. The code names them by these keys.
 */
export const OWN_DEVICE_TYPES = {
  'OUTCOME UNKNOWN': [
    'retryable',
    "The request was sent and no answer says whether the service acted on it (a connection lost after sending, an answer lost for good, a cancel or a step's timeout while the request or a read of the device's state after it was on its way): the device is `unconfirmed`, and its request is not sent again blindly.",
  ],
  NETWORK: [
    'retryable',
    'The request never reached the service (a refused connection, a name that did not resolve, a connection lost before a byte of the request was written, such as one reset during its TLS handshake): the device is `failed` at once, and `retry.on: [network]` sends it again.',
  ],
  'ALREADY IN TARGET STATE': [
    null,
    'Skipped: the step waited for another run holding the device, and read it already in the target state; nothing was sent.',
  ],
  'LIMIT EXCEEDED': [
    null,
    "Skipped: acting on it would have passed the playbook's `limits`; nothing was sent.",
  ],
  'DRY RUN': [null, 'Skipped: a dry run, which sends nothing that changes anything.'],
  'MALFORMED ANSWER': [
    'permanent',
    "The service's answer could not be kept as it came (a NUL character in its request id, txid, msid, time or error type), or the answer of an action the spec answers with a request id (a device action, an SMS) has none to follow it by: the device is `unconfirmed` unless a read of its state shows the change, and the step fails.",
  ],
  ERROR: ['permanent', 'The whole request failed for a reason of no other type.'],
} as const satisfies Record<string, readonly ['retryable' | 'permanent' | null, string]>;

export type OwnDeviceType = keyof typeof OWN_DEVICE_TYPES;

/** The types of a device that failed or stayed unconfirmed (a class); the others are of a skipped one (none). */
type FailureType = {
  [K in OwnDeviceType]: (typeof OWN_DEVICE_TYPES)[K][0] extends null ? never : K;
}[OwnDeviceType];

/** One of OWN_DEVICE_TYPES with its class, as a device result carries them. */
export const ownType = <T extends FailureType>(type: T) => ({
  errorType: type,
  errorClass: OWN_DEVICE_TYPES[type][0] as NonNullable<(typeof OWN_DEVICE_TYPES)[T][0]>,
});

/** The per-device error types a device-state action's devices can fail with. */
export const DEVICE_STATE_ERROR_TYPES: readonly string[] = [...CARRIER_ERROR_TYPES, STATE_NOT_CHANGED];

/**
 * The class of a per-device error type: a 7.3 type or a carrier code. A type neither table lists is treated as
 * permanent, never dropped.
 */
export function deviceErrorClass(type: string): DeviceErrorClass {
  if (isDeviceErrorType(type)) return DEVICE_ERRORS[type];
  return isCarrierErrorType(type) ? CARRIER_ERRORS[type] : 'permanent';
}

/**
 * Every type fleetbook records for a device: spec 7.3's (with SVC for the vendor's prefix), the carrier's codes,
 * and its own. A device whose whole request failed has the request's code besides (an API error code the service
 * sent, `HTTP_503`, a FB_ code), which no list holds.
 */
export const RECORDED_DEVICE_TYPES: readonly string[] = [
  ...DEVICE_ERROR_TYPES,
  ...CARRIER_ERROR_TYPES,
  STATE_NOT_CHANGED,
  ...Object.keys(OWN_DEVICE_TYPES),
];

/**
 * The type meant by `type`, which is none of `known`: its spec name when it has a vendor's prefix for SVC
 * (`ACME CACHE UNAVAILABLE`; `spec`), else the closest of `known`; undefined when none is close.
 */
export function meantType(
  type: string,
  known: readonly string[],
): { type: string; spec: boolean } | undefined {
  const spec = specErrorType(type);
  if (spec !== type) return { type: spec, spec: true };
  const [near] = closest(type, known, 1);
  return near === undefined ? undefined : { type: near, spec: false };
}
