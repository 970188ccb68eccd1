/**
 * What the spec fixes that both the schemas and the code that splits or checks requests use: the limits of its
 * section 8, and the one service of the managed accounts.
 */

/** At most 10,000 devices per location report request. */
export const MAX_REPORT_DEVICES = 10_000;
/** The synchronous aggregated usage report answers for at most this many devices. */
export const MAX_SYNC_REPORT_DEVICES = 10;
/** At most 2,000 devices in the exclusion list. */
export const MAX_EXCLUSIONS = 2_000;

/**
 * The service of a managed-account operation: `Location`, the only one spec 2.5 gives. The service answers any
 * other, in any case, `Invalid Service Name` (7.2); the usage triggers' `location`, which it takes in any case
 * (public-api-facts.md), is not this one.
 */
export const MANAGED_SERVICE = 'Location';
