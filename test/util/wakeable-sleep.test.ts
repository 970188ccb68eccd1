/**
 * A sleep that something else may end first (a run confirming devices sleeps until its poll interval, or until
 * the last device's callback wakes it): it ends once, by its timer, its wake or its signal, and leaves neither a
 * timer nor a listener behind.
 */
import { getEventListeners } from 'node:events';
import { expect } from 'chai';
import { VirtualClock, systemClock, wakeableSleep, type Clock } from '../../src/clock.js';

const listeners = (signal: AbortSignal) => getEventListeners(signal, 'abort').length;

describe('wakeableSleep', () => {
  it('ends at its time when nothing wakes it, and stops listening to the signal', async () => {
    const clock = new VirtualClock();
    const start = clock.now();
    const signal = new AbortController().signal;
    const sleep = wakeableSleep(clock, 5_000, signal);
    expect(listeners(signal)).to.equal(1);
    await sleep.slept;
    expect(clock.now() - start).to.equal(5_000);
    expect(listeners(signal)).to.equal(0);
  });

  it('a wake ends it at once; its timer is cancelled: it never fires, nor moves a virtual clock', async () => {
    const clock = new VirtualClock();
    const start = clock.now();
    const signal = new AbortController().signal;
    const sleep = wakeableSleep(clock, 5_000, signal);
    sleep.wake();
    await sleep.slept;
    expect(listeners(signal)).to.equal(0);
    // A later sleep is the next timer: the cancelled one did not move the clock on its way.
    await clock.sleep(10);
    expect(clock.now() - start).to.equal(10);
  });

  it('an abort rejects it with the signal reason, and cancels its timer', async () => {
    const clock = new VirtualClock();
    const start = clock.now();
    const controller = new AbortController();
    const sleep = wakeableSleep(clock, 5_000, controller.signal);
    const reason = new Error('cancelled from the console');
    controller.abort(reason);
    const error = await sleep.slept.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.equal(reason);
    await clock.sleep(10);
    expect(clock.now() - start).to.equal(10);
    // A wake after the end changes nothing.
    sleep.wake();
  });

  it('on a signal already aborted it rejects at once, without a timer', async () => {
    const controller = new AbortController();
    controller.abort(new Error('already'));
    const sleep = wakeableSleep(systemClock, 60_000, controller.signal);
    const error = await sleep.slept.then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error?.message).to.equal('already');
  });

  it('on the system clock, a wake cancels its timer (60 s that would hold the process)', async () => {
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
    const sleep = wakeableSleep(clock, 60_000, signal);
    sleep.wake();
    await sleep.slept;
    expect(cancelled).to.equal(1);
    expect(listeners(signal)).to.equal(0);
  });
});
