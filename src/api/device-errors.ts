/**
 * The per-device errors of spec section 7.3, row for row, with the exact type strings and a class:
 * - transient: the device or network may answer later; retry the device as it was;
 * - remediable: a changed argument fixes it (SVC CACHE UNAVAILABLE: cacheMode 1 or 2);
 * - permanent: retrying the same request cannot help.
 * test/device-errors.test.ts checks this table against the spec.
 */
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

/** The class of a 7.3 type; a type the spec does not list is treated as permanent, never dropped. */
export function deviceErrorClass(type: string): DeviceErrorClass {
  return isDeviceErrorType(type) ? DEVICE_ERRORS[type] : 'permanent';
}
