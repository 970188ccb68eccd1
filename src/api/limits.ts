/** Limits of spec section 8 that both the schemas and the code that splits or checks requests use. */

/** At most 10,000 devices per location report request. */
export const MAX_REPORT_DEVICES = 10_000;
/** At most 2,000 devices in the exclusion list. */
export const MAX_EXCLUSIONS = 2_000;
