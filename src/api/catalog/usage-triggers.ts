/** Location usage triggers of the subscription area. */
import { U } from './load-schemas.js';
import { normalizeUsageTrigger } from './normalize.js';
import type { Operation } from './operation.js';

export const USAGE_TRIGGERS = {
  'usageTriggers.create': {
    action: 'usageTriggers.create',
    summary: 'Create a location usage trigger.',
    area: 'subsc',
    method: 'POST',
    path: '/subsc/v1/usage/triggers',
    get input() {
      return U().CreateUsageTriggerRequest;
    },
    get output() {
      return U().UsageTrigger;
    },
    mutating: true,
    retrySafe: false,
    errorShape: 'errorCode',
    normalize: normalizeUsageTrigger,
  },
  'usageTriggers.update': {
    action: 'usageTriggers.update',
    summary: 'Update a location usage trigger.',
    area: 'subsc',
    method: 'POST',
    path: '/subsc/v1/usage/triggers/{triggerId}',
    get input() {
      return U().UpdateUsageTriggerRequest;
    },
    get output() {
      return U().UsageTrigger;
    },
    mutating: true,
    retrySafe: true,
    errorShape: 'errorCode',
    normalize: normalizeUsageTrigger,
  },
  'usageTriggers.delete': {
    action: 'usageTriggers.delete',
    summary: 'Delete a location usage trigger.',
    area: 'subsc',
    method: 'DELETE',
    path: '/subsc/v1/usage/accounts/{accountName}/triggers/{triggerId}',
    get input() {
      return U().DeleteUsageTriggerRequest;
    },
    get output() {
      return U().SuccessResponse;
    },
    mutating: true,
    retrySafe: true,
    removes: { notFound: /not found/i, answer: () => ({ success: true }) },
    errorShape: 'errorCode',
  },
} as const satisfies Record<string, Operation>;
