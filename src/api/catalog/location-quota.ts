/** The location quota of an account: its subscription and the transactions it used. */
import { entry } from './entry.js';
import { Q } from './load-schemas.js';
import type { Operation } from './operation.js';

const read = { area: 'loc', mutating: false, retrySafe: true, errorShape: 'errorCode' } as const;

export const LOCATION_QUOTA = {
  'location.subscription': entry(
    {
      action: 'location.subscription',
      summary: 'The location subscription of an account: license type and transactions per billing cycle.',
      method: 'GET',
      path: '/loc/v1/subscriptions/{accountName}',
      ...read,
    },
    () => Q().LocationSubscriptionRequest,
    () => Q().LocationSubscription,
  ),
  'location.usage': entry(
    {
      action: 'location.usage',
      summary: 'Location transactions of an account in a period (with its managed accounts, for a primary).',
      method: 'POST',
      path: '/loc/v1/usage',
      ...read,
    },
    () => Q().LocationUsageRequest,
    () => Q().LocationUsage,
  ),
} as const satisfies Record<string, Operation>;
