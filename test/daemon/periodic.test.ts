/**
 * The daemon's background passes (Periodic: pruning, the callbacks that come after their run): one at a time,
 * however often they are asked for, and none once stopped.
 */
import { expect } from 'chai';
import { Periodic } from '../../src/daemon/periodic.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('daemon: periodic passes', () => {
  it('a kick during a pass makes one more pass after it, never two at once', async () => {
    let running = 0;
    let most = 0;
    let passes = 0;
    const p = new Periodic(60_000, async () => {
      running++;
      most = Math.max(most, running);
      await sleep(30);
      running--;
      passes++;
    });
    p.kick();
    for (let i = 0; i < 10; i++) p.kick();
    await sleep(120);
    expect([passes, most]).to.deep.equal([2, 1]);
    await p.stop();
  });

  it('soon: one pass for every ask within the time', async () => {
    let passes = 0;
    const p = new Periodic(60_000, async () => void passes++);
    for (let i = 0; i < 50; i++) p.soon(40);
    await sleep(10);
    expect(passes).to.equal(0);
    await sleep(80);
    expect(passes).to.equal(1);
    p.soon(20);
    await p.stop();
    await sleep(50);
    expect(passes, 'none after stop').to.equal(1);
  });

  it('stop waits for the pass under way', async () => {
    let ended = false;
    const p = new Periodic(60_000, async () => {
      await sleep(40);
      ended = true;
    });
    p.kick();
    await p.stop();
    expect(ended).to.equal(true);
  });
});
