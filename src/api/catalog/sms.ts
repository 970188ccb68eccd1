/** SMS to devices. */
import { C } from './load-schemas.js';
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
    get output() {
      return C().RequestAccepted;
    },
    mutating: true,
    retrySafe: false,
    errorShape: 'errorCode',
    normalize: normalizeIdentifiers,
    devicesIn: 'deviceIds',
  },
} as const satisfies Record<string, Operation>;
