/**
 * The daemon's background passes (Periodic: pruning, the callbacks that come after their run): one at a time,
 * however often they are asked for, and none once stopped. On a clock the test moves, with passes that end when
 * the test ends them: nothing here depends on how fast the machine is.
 */
import { expect } from 'chai';
import { Periodic } from '../../src/daemon/periodic.js';
import { ManualClock } from '../helpers/manual-clock.js';

/** Work whose passes each wait until the test ends them. */
function heldWork() {
  const ends: (() => void)[] = [];
  const w = {
    started: 0,
    ended: 0,
    running: 0,
    most: 0,
    /** Ends the oldest pass under way. */
    end: () => ends.shift()?.(),
    pass: () =>
      new Promise<void>((resolve) => {
        w.started++;
        w.running++;
        w.most = Math.max(w.most, w.running);
        ends.push(() => {
          w.running--;
          w.ended++;
          resolve();
        });
      }),
  };
  return w;
}

/** Lets the promises settled so far run (a pass's end, and the pass it starts). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('daemon: periodic passes', () => {
  it('a kick during a pass makes one more pass after it, never two at once', async () => {
    const w = heldWork();
    const p = new Periodic(60_000, w.pass, new ManualClock());
    p.kick();
    for (let i = 0; i < 10; i++) p.kick();
    expect([w.started, w.running]).to.deep.equal([1, 1]);
    w.end();
    await settle();
    expect(w.started, 'one more pass after the first, for all ten kicks').to.equal(2);
    w.end();
    await settle();
    expect([w.started, w.ended, w.most]).to.deep.equal([2, 2, 1]);
    await p.stop();
  });

  it('passes at start and then every interval, on its clock', async () => {
    const clock = new ManualClock();
    const w = heldWork();
    const p = new Periodic(60_000, w.pass, clock);
    p.start();
    await settle();
    expect(w.started, 'at start').to.equal(1);
    w.end();
    await clock.advance(59_999);
    expect(w.started, 'before the interval').to.equal(1);
    await clock.advance(1);
    expect(w.started, 'at the interval').to.equal(2);
    // A pass longer than the interval: the next one comes once it ends, and the interval keeps its beat.
    await clock.advance(60_000);
    expect(w.started, 'while the second pass is under way').to.equal(2);
    w.end();
    await settle();
    expect(w.started, 'after it').to.equal(3);
    w.end();
    await clock.advance(60_000);
    expect(w.started, 'at the third interval').to.equal(4);
    w.end();
    await p.stop();
    expect(clock.pending, 'timers left once stopped').to.equal(0);
  });

  it('soon: one pass for every ask within the time', async () => {
    const clock = new ManualClock();
    let passes = 0;
    const p = new Periodic(60_000, async () => void passes++, clock);
    for (let i = 0; i < 50; i++) p.soon(40);
    expect(clock.pending, 'one timer for fifty asks').to.equal(1);
    await clock.advance(39);
    expect(passes).to.equal(0);
    await clock.advance(1);
    expect(passes).to.equal(1);
    p.soon(20);
    await p.stop();
    expect(clock.pending, 'timers left once stopped').to.equal(0);
    await clock.advance(50);
    expect(passes, 'none after stop').to.equal(1);
  });

  it('stop waits for the pass under way', async () => {
    const w = heldWork();
    const p = new Periodic(60_000, w.pass, new ManualClock());
    p.kick();
    let stopped = false;
    const stopping = p.stop().then(() => (stopped = true));
    await settle();
    expect(stopped, 'before the pass ended').to.equal(false);
    w.end();
    await stopping;
    expect([stopped, w.ended]).to.deep.equal([true, 1]);
  });
});
