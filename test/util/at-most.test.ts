import { expect } from 'chai';
import { eachAtMost } from '../../src/util/at-most.js';

const tick = () => new Promise((r) => setTimeout(r, 5));

describe('eachAtMost', () => {
  it('runs at most `width` calls at once, and takes an item only when a call ends', async () => {
    let running = 0;
    let most = 0;
    const taken: number[] = [];
    function* items() {
      for (let i = 0; i < 10; i++) {
        taken.push(i);
        // Never more items taken than calls under way plus the one about to start.
        expect(taken.length - done.length).to.be.at.most(3);
        yield i;
      }
    }
    const done: number[] = [];
    await eachAtMost(items(), 3, async (i) => {
      running++;
      most = Math.max(most, running);
      await tick();
      running--;
      done.push(i);
    });
    expect(most).to.equal(3);
    expect([...done].sort((a, b) => a - b)).to.deep.equal([...Array(10).keys()]);
  });

  it('stops taking items after a failure, and throws it once the calls under way have ended', async () => {
    const started: number[] = [];
    const ended: number[] = [];
    const failure = await eachAtMost([0, 1, 2, 3, 4, 5, 6, 7], 2, async (i) => {
      started.push(i);
      await tick();
      if (i === 1) throw new Error('item 1 failed');
      await tick();
      ended.push(i);
    }).catch((e: Error) => e);
    expect((failure as Error).message).to.equal('item 1 failed');
    // Item 0 was under way and ended; nothing after the failure was started but what had begun.
    expect(ended).to.include(0);
    expect(started.length).to.be.at.most(3);
  });
});
