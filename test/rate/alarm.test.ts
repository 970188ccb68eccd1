/**
 * An alarm's sleep (a request waiting for its area's ceiling, a run waiting for its devices' callbacks) ends
 * once, by its timer, a ring or its signal, and leaves neither a timer nor a listener behind.
 */
import { getEventListeners } from 'node:events';
import { expect } from 'chai';
import { VirtualClock, systemClock, type Clock } from '../../src/clock.js';
import { Alarm } from '../../src/rate/alarm.js';

const listeners = (signal: AbortSignal) => getEventListeners(signal, 'abort').length;
/** Real time for a virtual clock's pending timers to fire (it fires one per turn of the event loop). */
const settled = () => new Promise((r) => setTimeout(r, 20));
const rejection = (p: Promise<void>) =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

describe('Alarm', () => {
  it('a sleep ends at its time when nothing rings, and stops listening to the signal', async () => {
    const clock = new VirtualClock();
    const start = clock.now();
    const signal = new AbortController().signal;
    const slept = new Alarm(clock).sleep(5_000, signal);
    expect(listeners(signal)).to.equal(1);
    await slept;
    expect(clock.now() - start).to.equal(5_000);
    expect(listeners(signal)).to.equal(0);
  });

  it('a ring ends it at once; its timer is cancelled: it never fires, nor moves a virtual clock', async () => {
    const clock = new VirtualClock();
    const start = clock.now();
    const signal = new AbortController().signal;
    const alarm = new Alarm(clock);
    const slept = alarm.sleep(5_000, signal);
    alarm.ring();
    await slept;
    expect(listeners(signal)).to.equal(0);
    // Given time to run its timers, the virtual clock has none: it stays where it was.
    await settled();
    expect(clock.now()).to.equal(start);
  });

  it('an abort rejects it with the signal reason, and cancels its timer', async () => {
    const clock = new VirtualClock();
    const start = clock.now();
    const controller = new AbortController();
    const alarm = new Alarm(clock);
    const slept = alarm.sleep(5_000, controller.signal);
    const reason = new Error('cancelled from the console');
    controller.abort(reason);
    expect(await rejection(slept)).to.equal(reason);
    await settled();
    expect(clock.now()).to.equal(start);
    // A ring after the end changes nothing.
    alarm.ring();
  });

  it('on a signal already aborted it rejects at once, without a timer', async () => {
    const clock = new VirtualClock();
    const controller = new AbortController();
    controller.abort(new Error('already'));
    const error = (await rejection(new Alarm(clock).sleep(60_000, controller.signal))) as Error;
    expect(error.message).to.equal('already');
    expect(clock.sleeps).to.deep.equal([]);
  });

  it('a sleep of Infinity has no timer: only a ring ends it', async () => {
    const clock = new VirtualClock();
    const alarm = new Alarm(clock);
    const slept = alarm.sleep(Infinity);
    expect(clock.sleeps).to.deep.equal([]);
    alarm.ring();
    await slept;
  });

  it('on the system clock, a ring cancels its timer (60 s that would hold the process)', async () => {
    let cancelled = 0;
    const clock: Clock = {
      ...systemClock,
      timer: (ms, fire) => {
        const cancel = systemClock.timer(ms, fire);
        return () => {
          cancelled++;
          cancel();
        };
      },
    };
    const signal = new AbortController().signal;
    const alarm = new Alarm(clock);
    const slept = alarm.sleep(60_000, signal);
    alarm.ring();
    await slept;
    expect(cancelled).to.equal(1);
    expect(listeners(signal)).to.equal(0);
  });
});
