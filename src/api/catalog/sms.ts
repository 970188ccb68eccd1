/** SMS to devices, and the mobile-originated SMS devices sent. */
import { entry } from './entry.js';
import { C, H } from './load-schemas.js';
import { normalizeIdentifiers } from './normalize.js';
import type { Operation } from './operation.js';

export const SMS = {
  'sms.send': {
    action: 'sms.send',
    summary: 'Send an SMS to devices (queued by the service).',
    area: 'm2m',
    method: 'POST',
    path: '/m2m/v1/sms',
    get input() {
      return C().SmsRequest;
    },
    get stepInput() {
      return C().SmsStep;
    },
    get output() {
      return C().RequestAccepted;
    },
    answersRequestId: true,
    mutating: true,
    retrySafe: false,
    errorShape: 'errorCode',
    normalize: normalizeIdentifiers,
    devicesIn: 'deviceIds',
    needsDevices: 'deviceIds',
  },
  'sms.history': entry(
    {
      action: 'sms.history',
      summary: "The SMS the account's devices sent (every page of 100).",
      area: 'm2m',
      method: 'GET',
      path: '/m2m/v1/sms/{accountName}/history',
      query: ['next'],
      paging: 'next',
      mutating: false,
      retrySafe: true,
      errorShape: 'errorCode',
    },
    () => H().SmsHistoryRequest,
    () => H().SmsHistory,
    () => H().SmsHistoryPage,
  ),
  'sms.startCallbacks': entry(
    {
      action: 'sms.startCallbacks',
      summary: "Start sending the devices' SMS to the account's EnhancedConnectivityService listener.",
      area: 'm2m',
      method: 'PUT',
      path: '/m2m/v1/sms/{accountName}/startCallbacks',
      mutating: true,
      // Starting again changes nothing.
      retrySafe: true,
      errorShape: 'errorCode',
    },
    () => H().StartSmsCallbacksRequest,
    () => H().SuccessResult,
  ),
} as const satisfies Record<string, Operation>;
