import { randomFillSync } from 'node:crypto';
import { v7 } from 'uuid';

/**
 * Random bytes for sixteen ids at a time: uuid's v7 asks `crypto.getRandomValues` for 16 bytes at every id, and
 * an id cost 2.4-2.5 us in Node 20 (a daemon makes one per run); from a pool of 256 bytes, 0.6-1.0 us.
 */
const pool = Buffer.alloc(256);
let taken = pool.length;
/** The last id's millisecond and sequence, as uuid's v7 keeps them when it draws its own random bytes. */
let msecs = -Infinity;
let seq = 0;

/**
 * A new run's id: a UUID of version 7 (RFC 9562), whose first 48 bits are the time in milliseconds. Runs made
 * one after the other have growing ids, so the store's indexes keyed by run id (runs, steps, ledger, locks) grow
 * at their end: a commit writes a few pages instead of one per run at random places in each index. Within one
 * millisecond the ids grow by a 32-bit sequence that starts at a random value, as uuid's own v7 does.
 */
export function newRunId(): string {
  if (taken === pool.length) {
    randomFillSync(pool);
    taken = 0;
  }
  const random = pool.subarray(taken, taken + 16);
  const now = Date.now();
  if (now > msecs) {
    msecs = now;
    seq = pool.readUInt32BE(taken + 6) & 0x7fffffff;
  } else if ((seq = (seq + 1) | 0) === 0) msecs++;
  taken += 16;
  return v7({ random, msecs, seq });
}
