import { expect } from 'chai';
import { isoTime } from '../../src/clock.js';

describe('isoTime', () => {
  it('gives what toISOString gives, across seconds, days, years and the edges of its fast path', () => {
    const edges = [
      0,
      1,
      999,
      1000,
      59_999,
      60_000,
      86_399_999,
      86_400_000,
      Date.UTC(2024, 1, 29, 23, 59, 59, 999),
      Date.UTC(2026, 11, 31, 23, 59, 59, 999),
      Date.UTC(2027, 0, 1),
      253_402_300_799_999,
      253_402_300_800_000,
      -1,
      -1000,
      1234.9,
      -8.64e15 + 1000,
    ];
    // Random times, then the same second again (the prefix reused) and a second back (made again).
    let seed = 1;
    const random = () => ((seed = (seed * 48271) % 2147483647) / 2147483647) * 4e12;
    const times = [...edges, ...Array.from({ length: 2000 }, random)].flatMap((t) => [t, t + 7, t - 1000]);
    for (const t of times) expect(isoTime(t), String(t)).to.equal(new Date(t).toISOString());
  });

  it('throws as toISOString does for a time that is not one', () => {
    expect(isoTime(8.64e15)).to.equal(new Date(8.64e15).toISOString());
    expect(() => isoTime(Number.NaN)).to.throw(RangeError);
    expect(() => isoTime(8.64e15 + 1)).to.throw(RangeError);
  });
});
