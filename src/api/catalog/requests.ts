/** The status of an asynchronous M2M request. */
import { C } from './load-schemas.js';
import type { Operation } from './operation.js';

export const REQUESTS = {
  'requests.status': {
    action: 'requests.status',
    summary: 'Status of a device action or SMS request: Pending, Success, Failure or PartialSuccess.',
    area: 'm2m',
    method: 'GET',
    path: '/m2m/v1/accounts/{accountName}/requests/{requestId}/status',
    get input() {
      return C().RequestStatusRequest;
    },
    get output() {
      return C().RequestStatusResponse;
    },
    mutating: false,
    retrySafe: true,
    errorShape: 'errorCode',
  },
} as const satisfies Record<string, Operation>;
