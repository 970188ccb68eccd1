/** The range of an entry's ids (id-range.ts), and which entries' ranges hold a device. */
import { expect } from 'chai';
import { bracketing, idRange } from '../../src/store/id-range.js';

describe('the range of the ids of a ledger entry', () => {
  it('is their least and greatest, or open where UTF-16 orders them differently from UTF-8', () => {
    expect(idRange(['35', '12', '99', '50'])).to.deep.equal({ min: '12', max: '99' });
    expect(idRange(['7'])).to.deep.equal({ min: '7', max: '7' });
    // In UTF-16, a surrogate (U+1F600) comes before U+E000; in UTF-8 after it.
    expect(idRange(['a\u{1F600}', 'a\uE000'])).to.deep.equal({ min: '', max: null });
  });

  it('tells the entries whose range holds an asked device of their step', () => {
    const entries = [
      { seq: 1, step: 's', min_id: '10', max_id: '19' },
      { seq: 2, step: 's', min_id: '20', max_id: '29' },
      { seq: 3, step: 't', min_id: '10', max_id: '19' },
      { seq: 4, step: 's', min_id: '', max_id: null },
      { seq: 5, step: 's', min_id: '15', max_id: '15' },
    ];
    expect(bracketing(entries, ['s\u000015'])).to.deep.equal([1, 4, 5]);
    expect(bracketing(entries, ['s\u000030', 's\u000009'])).to.deep.equal([4]);
    expect(bracketing(entries, ['s\u000021', 't\u000019'])).to.deep.equal([2, 3, 4]);
    // An asked id compared in UTF-16 against ranges in UTF-8 order: every entry of its step.
    expect(bracketing(entries, ['s\u0000\uE000'])).to.deep.equal([1, 2, 4, 5]);
  });
});
