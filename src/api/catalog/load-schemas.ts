/**
 * The request and response schemas of the catalog, by module. They are loaded when one is first read: checking
 * a valid request takes the validator the build generated (api/generated.ts), so a run never builds them.
 */
import { onFirstUse } from '../../util/on-first-use.js';
import type * as Accounts from '../schemas/accounts.js';
import type * as Connectivity from '../schemas/connectivity.js';
import type * as Groups from '../schemas/groups.js';
import type * as History from '../schemas/history.js';
import type * as Location from '../schemas/location.js';
import type * as Quota from '../schemas/quota.js';
import type * as Sensors from '../schemas/sensors.js';
import type * as Subscriptions from '../schemas/subscriptions.js';
import type * as Triggers from '../schemas/triggers.js';
import type * as Usage from '../schemas/usage.js';

export const C = onFirstUse<typeof Connectivity>(import.meta.url, '../schemas/connectivity.js');
export const L = onFirstUse<typeof Location>(import.meta.url, '../schemas/location.js');
export const S = onFirstUse<typeof Sensors>(import.meta.url, '../schemas/sensors.js');
export const U = onFirstUse<typeof Subscriptions>(import.meta.url, '../schemas/subscriptions.js');
export const T = onFirstUse<typeof Triggers>(import.meta.url, '../schemas/triggers.js');
export const A = onFirstUse<typeof Accounts>(import.meta.url, '../schemas/accounts.js');
export const G = onFirstUse<typeof Groups>(import.meta.url, '../schemas/groups.js');
export const H = onFirstUse<typeof History>(import.meta.url, '../schemas/history.js');
export const Q = onFirstUse<typeof Quota>(import.meta.url, '../schemas/quota.js');
export const R = onFirstUse<typeof Usage>(import.meta.url, '../schemas/usage.js');
