import { v7 } from 'uuid';

/**
 * A new run's id: a UUID of version 7 (RFC 9562), whose first 48 bits are the time in milliseconds. Runs made
 * one after the other have growing ids, so the store's indexes keyed by run id (runs, steps, ledger, locks) grow
 * at their end: a commit writes a few pages instead of one per run at random places in each index.
 */
export const newRunId = (): string => v7();
