/**
 * The tables of the commands that read the store (`runs list`, `device`, `logins list`): columns two spaces
 * apart, each as wide as its widest cell, and no line ending in spaces where its last cells are empty (a
 * device's `accepted` result has no error type nor data to show).
 */
import { expect } from 'chai';
import { aligned } from '../../src/cli/store-access.js';

describe('cli: aligned tables', () => {
  it('pads each column to its widest cell, and ends each line at its last text', () => {
    expect(
      aligned([
        ['AT', 'OUTCOME', 'ERROR TYPE OR RESULT'],
        ['2026-12-02', 'accepted', ''],
        ['2026-12-02', 'failed', 'SVC DEVICE TYPE CHECK FAILED'],
      ]),
    ).to.equal(
      'AT          OUTCOME   ERROR TYPE OR RESULT\n' +
        '2026-12-02  accepted\n' +
        '2026-12-02  failed    SVC DEVICE TYPE CHECK FAILED\n',
    );
  });
});
