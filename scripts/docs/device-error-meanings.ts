/** What each per-device error type of spec section 7.3 means, as the spec says it (docs/errors.md). */
import type { DeviceErrorType } from '../../src/api/device-errors.js';

export const DEVICE_ERROR_MEANINGS: Record<DeviceErrorType, string> = {
  'SVC CACHE UNAVAILABLE': 'No cached location; use cacheMode 1 or 2.',
  'SVC CONSENT CHECK FAILED': 'The device is in the exclusion list.',
  'SVC DEVICE TYPE CHECK FAILED': 'The device is not IoT (may be a phone or tablet).',
  'SVC DEVICE DATA UNAVAILABLE': 'The device is not found in the location system.',
  'SVC DEVICE LOCATION DATA UNAVAILABLE': 'No location information for the device.',
  'SYSTEM FAILURE': 'General problem in the location server.',
  'UNSPECIFIED ERROR': 'No other error applies, or privacy prevents showing one.',
  'UNAUTHORIZED APPLICATION': 'Requesting application not allowed, or wrong password.',
  'UNKNOWN SUBSCRIBER': 'No such subscription.',
  'ABSENT SUBSCRIBER': 'Device not reachable (off or out of range).',
  'POSITION METHOD FAILURE': 'Position could not be obtained.',
  TIMEOUT: 'Timer expiry for the requested event trigger.',
  'CONGESTION IN LOCATION SERVER': 'Not handled owing to congestion in the location server.',
  'UNSUPPORTED VERSION': 'Protocol version not supported.',
  'TOO MANY POSITION ITEMS': 'Too many position items in the request.',
  'FORMAT ERROR': 'A protocol element has an invalid format.',
  'SYNTAX ERROR': 'Invalid syntax.',
  'PROTOCOL ELEMENT NOT SUPPORTED': 'An element, or a result, is not supported.',
  'SERVICE NOT SUPPORTED': 'Requested service not supported.',
  'PROTOCOL ELEMENT ATTRIBUTE NOT SUPPORTED': 'An attribute is not supported.',
  'INVALID PROTOCOL ELEMENT VALUE': 'An element has an invalid value.',
  'INVALID PROTOCOL ELEMENT ATTRIBUTE VALUE': 'An attribute has a wrong value.',
  'PROTOCOL ELEMENT VALUE NOT SUPPORTED': 'A value of an element is not supported.',
  'PROTOCOL ELEMENT ATTRIBUTE VALUE NOT SUPPORTED': 'A value of an attribute is not supported.',
  'CANCELLATION OF TRIGGERED LOCATION REQUEST': 'The triggered location report was cancelled.',
  'QOP NOT ATTAINABLE': 'The requested quality of position cannot be provided.',
  'POSITIONING NOT ALLOWED': 'The subscriber does not allow positioning.',
  'CONGESTION IN MOBILE NETWORK': 'Not handled owing to congestion in the mobile network.',
  'DISALLOWED BY LOCAL REGULATIONS': 'Disallowed by regulatory requirements.',
  'MISCONFIGURATION OF LOCATION SERVER': 'Server not configured enough to calculate a position.',
  'TARGET MOVED TO NEW MSC/SGSN': 'Triggered request aborted because the target moved.',
  'STANDARD LOCATION REPORT SERVICE NOT SUPPORTED':
    'The client does not support the standard location report service.',
  'MLS CLIENT ERROR': 'An error occurred in the client.',
  'STANDARD LOCATION REPORT SERVICE NOT ACCEPTED': 'The client did not accept the standard location report.',
  'SUBSCRIBER ID IN STANDARD LOCATION REPORT SERVICE NOT VALID':
    'The subscriber in the report is not valid to the client.',
  'INVALID SERVICE ID IN STANDARD LOCATION REPORT SERVICE':
    'The service identity in the report is not valid to the client.',
};
