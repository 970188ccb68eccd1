import { expect } from 'chai';
import { jsonFits } from '../../src/util/json-size.js';

describe('jsonFits', () => {
  const values: unknown[] = [
    null,
    42,
    -3.5,
    true,
    'plain text',
    [],
    {},
    [1, 'two', { three: [3, null, false] }],
    { a: 1, b: undefined, c: { d: 'x', e: [] } },
    { devices: Array.from({ length: 50 }, (_, i) => ({ id: `35345678${i}`, kind: 'imei' })) },
  ];

  it("says whether a value's JSON text fits, at the exact length JSON.stringify writes", () => {
    for (const v of values) {
      const n = JSON.stringify(v ?? null).length;
      expect(jsonFits(v, n), JSON.stringify(v)).to.equal(true);
      expect(jsonFits(v, n - 1), JSON.stringify(v)).to.equal(false);
    }
  });

  it('stops at the limit: a list of a million devices is not walked whole', () => {
    let read = 0;
    const devices = new Proxy(
      Array.from({ length: 1_000_000 }, (_, i) => ({ id: String(i), kind: 'imei' })),
      {
        get(target, key, receiver) {
          if (typeof key === 'string' && /^\d+$/.test(key)) read++;
          return Reflect.get(target, key, receiver) as unknown;
        },
      },
    );
    expect(jsonFits({ devices }, 256 * 1024)).to.equal(false);
    expect(read).to.be.below(20_000);
  });
});
