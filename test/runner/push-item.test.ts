import { expect } from 'chai';
import { pushItem } from '../../src/runner/stored-items.js';
import type { ItemRuns } from '../../src/store/store.js';

describe('pushItem', () => {
  it('keeps devices of one kind in one run, and starts a run when the kind changes', () => {
    const runs: ItemRuns = [];
    for (const [kind, id] of [
      ['imei', '1'],
      ['imei', '2'],
      ['iccid', '3'],
      ['imei', '4'],
      ['imei', '5'],
    ] as const)
      pushItem(runs, kind, id);
    expect(runs).to.deep.equal([
      ['imei', ['1', '2']],
      ['iccid', ['3']],
      ['imei', ['4', '5']],
    ]);
  });
});
