/** Run ids grow with time, so that the store's indexes keyed by run id grow at their end. */
import { expect } from 'chai';
import { newRunId } from '../../src/runner/run-id.js';

describe('run ids', () => {
  it('are UUIDs whose text order is the order they were made in, within one millisecond too', () => {
    const ids = Array.from({ length: 10_000 }, newRunId);
    for (const id of ids)
      expect(id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect([...ids].sort()).to.deep.equal(ids);
    expect(new Set(ids).size).to.equal(ids.length);
  });

  it('end in random bits, fresh for each id: not repeated from one batch of random bytes to the next', () => {
    const tails = Array.from({ length: 10_000 }, () => newRunId().slice(-12));
    // 48 random bits each: a repeat among 10,000 would be a pool handed out twice.
    expect(new Set(tails).size).to.equal(tails.length);
  });

  it('begin with the time they were made', () => {
    const before = Date.now();
    const ms = parseInt(newRunId().replace('-', '').slice(0, 12), 16);
    expect(ms).to.be.within(before, Date.now());
  });
});
