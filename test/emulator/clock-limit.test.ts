/**
 * The simulated clock goes no further than 9999-12-31T23:59:59.999Z, whichever way it is moved: the control API's
 * advance, `emulator.advance()`, the start time, and running by itself at the highest timeScale. Past it the API
 * would write five-digit years. Only the control API's advance refused it; the others went past.
 */
import { expect } from 'chai';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { startTimeProblem } from '../../src/emulator/limits.js';
import { LATEST, MAX_TIME_SCALE, SimClock } from '../../src/emulator/sim-clock.js';
import { emulator, Raw } from './helpers.js';

const END = '9999-12-31T23:59:59.999Z';

/** The error `f` throws or rejects with; fails when it does neither. */
async function failure(f: () => unknown): Promise<Error> {
  try {
    await f();
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected it to fail');
}

describe('emulator: the simulated clock stops at the end of year 9999', () => {
  describe('SimClock', () => {
    it('running at the highest timeScale from near the end, it stays at the end', () => {
      let wall = 1_000;
      const clock = new SimClock(LATEST - 60_000, MAX_TIME_SCALE, () => wall);
      // A real hour at this speed is about 114 simulated years.
      wall += 3_600_000;
      expect(new Date(clock.now()).toISOString()).to.equal(END);
      wall += 3_600_000;
      expect(clock.now()).to.equal(LATEST);
      // Slowed down there, it does not jump back, and stays.
      clock.setTimeScale(1);
      expect(clock.now()).to.equal(LATEST);
      wall += 1_000;
      expect(clock.now()).to.equal(LATEST);
    });

    it('refuses an advance past the end, and keeps its time', () => {
      const clock = new SimClock(LATEST - 10_000, 0, () => 0);
      const e = (() => {
        try {
          clock.advance(10.001);
        } catch (err) {
          return err as Error;
        }
        return undefined;
      })();
      expect(e?.message).to.equal(
        `seconds must be a number from 0 to 10: the clock goes no further than ${END} (now 9999-12-31T23:59:49.999Z); got 10.001`,
      );
      expect(clock.now()).to.equal(LATEST - 10_000);
      clock.advance(10);
      expect(clock.now()).to.equal(LATEST);
    });

    it('takes no start past the end (limits.ts, checked on each way in before the clock is made)', () => {
      expect(startTimeProblem(LATEST + 1)).to.equal(
        `startTime must be no later than ${END}, got +010000-01-01T00:00:00.000Z`,
      );
      expect(startTimeProblem(LATEST)).to.equal(undefined);
    });
  });

  describe('startEmulator', () => {
    let emu: Emulator | undefined;
    afterEach(async () => {
      await emu?.close();
      emu = undefined;
    });

    it('refuses a startTime past the end, naming it', async () => {
      for (const startTime of ['+010000-01-01T00:00:00Z', LATEST + 1]) {
        const e = await failure(async () => {
          emu = await startEmulator({ startTime, timeScale: 0 });
        });
        expect(e.message, String(startTime)).to.equal(
          `startTime must be no later than ${END}, got +010000-01-01T00:00:00.000Z`,
        );
      }
      emu = await startEmulator({ startTime: END, timeScale: 0 });
      expect(emu.now()).to.equal(LATEST);
    });

    it('emulator.advance() refuses an advance past the end, and keeps its time', async () => {
      emu = await emulator({ startTime: LATEST - 86_400_000 });
      const e = await failure(() => emu!.advance(1e12));
      expect(e).to.be.instanceOf(RangeError);
      expect(e.message).to.equal(
        `seconds must be a number from 0 to 86400: the clock goes no further than ${END} (now 9999-12-30T23:59:59.999Z); got 1000000000000`,
      );
      expect(emu.now()).to.equal(LATEST - 86_400_000);
      // A backward advance is no advance either.
      expect((await failure(() => emu!.advance(-1))).message).to.match(
        /^seconds must be a number from 0 to 86400/,
      );
      emu.advance(86_400);
      expect(emu.now()).to.equal(LATEST);
    });

    it('running by itself at the highest timeScale, it stops at the end (real HTTP)', async () => {
      let wall = Date.now();
      emu = await startEmulator({
        startTime: LATEST - 86_400_000,
        timeScale: MAX_TIME_SCALE,
        wallClock: () => wall,
      });
      const raw = new Raw(emu);
      // A real hour: about 114 years of simulated time.
      wall += 3_600_000;
      const clock = await raw.send('GET', '/_emulator/clock');
      expect([clock.status, clock.body]).to.deep.equal([200, { now: END, timeScale: MAX_TIME_SCALE }]);
      const accounts = await raw.send('GET', '/_emulator/accounts?devices=0');
      expect([accounts.status, (accounts.body as { now: string }).now]).to.deep.equal([200, END]);
      const advance = await raw.send('POST', '/_emulator/clock/advance', { seconds: 1 });
      expect([advance.status, advance.body]).to.deep.equal([
        400,
        {
          error: `seconds must be a number from 0 to 0: the clock goes no further than ${END} (now ${END}); got 1`,
        },
      ]);
    });
  });
});
