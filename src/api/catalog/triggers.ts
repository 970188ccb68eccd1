/** Price plan usage triggers (/m2m/v2/triggers). */
import { T } from './load-schemas.js';
import { normalizeTrigger } from './normalize.js';
import { enc, type Json, type Operation } from './operation.js';

export const TRIGGERS = {
  'triggers.createPayAsYouGo': {
    action: 'triggers.createPayAsYouGo',
    summary: 'Create a pay-as-you-go price plan usage trigger.',
    area: 'm2m',
    method: 'POST',
    path: '/m2m/v2/triggers',
    get input() {
      return T().CreatePayAsYouGoRequest;
    },
    get output() {
      return T().TriggerIdResponse;
    },
    mutating: true,
    retrySafe: false,
    errorShape: 'error',
    normalize: normalizeTrigger,
  },
  'triggers.updateAccountGroupShare': {
    action: 'triggers.updateAccountGroupShare',
    summary: 'Overwrite an account-group-share price plan trigger.',
    area: 'm2m',
    method: 'PUT',
    path: '/m2m/v2/triggers',
    get input() {
      return T().UpdateAccountGroupShareRequest;
    },
    get output() {
      return T().TriggerIdResponse;
    },
    mutating: true,
    retrySafe: true,
    errorShape: 'error',
    normalize: normalizeTrigger,
  },
  'triggers.list': {
    action: 'triggers.list',
    summary: 'List price plan triggers: all, of one account, or one by id.',
    area: 'm2m',
    method: 'GET',
    path: '/m2m/v2/triggers',
    route: (i: Json) =>
      i.triggerId
        ? `/m2m/v2/triggers/${enc(i.triggerId)}`
        : i.accountName
          ? `/m2m/v2/triggers/accounts/${enc(i.accountName)}`
          : '/m2m/v2/triggers',
    get input() {
      return T().ListTriggersRequest;
    },
    get output() {
      return T().ListTriggersResponse;
    },
    mutating: false,
    retrySafe: true,
    errorShape: 'error',
  },
} as const satisfies Record<string, Operation>;
