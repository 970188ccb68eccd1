/**
 * The emulator's options have one set of limits, said the same way by `startEmulator` and by the control API's
 * reset (and by `fleetbook emulator`, under its flags' names: test/cli/emulator-flags.test.ts). Each had its own
 * copy, worded its own way: startEmulator said "Expected `timeScale` to be …", reset "accounts must be an integer
 * from 1 up" for 0 and "Expected `accounts` to be … from 1 to 1000" for 5000. Real HTTP to a loopback emulator.
 */
import { expect } from 'chai';
import { DEFAULT_FAULTS } from '../../src/emulator/faults.js';
import { startEmulator, type Emulator, type EmulatorOptions, type Faults } from '../../src/emulator/index.js';
import { OptionError } from '../../src/emulator/limits.js';
import { emulator, Raw } from './helpers.js';

const CASES: [Partial<EmulatorOptions>, string][] = [
  [{ seed: '' }, 'seed is empty: give a number or a word, or leave it out'],
  [{ timeScale: 2e6 }, 'timeScale must be a number from 0 to 1000000 (e.g. 60 or 0.5), got 2000000'],
  [{ timeScale: -1 }, 'timeScale must be a number from 0 to 1000000 (e.g. 60 or 0.5), got -1'],
  [{ accounts: 0 }, 'accounts must be an integer from 1 to 1000, got 0'],
  [{ accounts: 5000 }, 'accounts must be an integer from 1 to 1000, got 5000'],
  [{ accounts: 2.5 }, 'accounts must be an integer from 1 to 1000, got 2.5'],
  [{ devicesPerAccount: -1 }, 'devicesPerAccount must be an integer from 0 to 5000000, got -1'],
  [
    { accounts: 1000, devicesPerAccount: 50_000 },
    'accounts × devicesPerAccount must be at most 5000000 devices, got 50000000',
  ],
];

describe('emulator: the limits of its options, one wording everywhere', () => {
  for (const [options, error] of CASES)
    it(`${JSON.stringify(options)}: startEmulator and POST /_emulator/reset refuse it alike`, async () => {
      let started: Emulator | undefined;
      let thrown: string | undefined;
      try {
        started = await startEmulator({ timeScale: 0, ...options });
      } catch (e) {
        thrown = (e as Error).message;
      }
      await started?.close();
      const emu = await emulator();
      try {
        const r = await new Raw(emu).send('POST', '/_emulator/reset', options);
        expect({ startEmulator: thrown, reset: [r.status, r.body] }).to.deep.equal({
          startEmulator: error,
          reset: [400, { error }],
        });
      } finally {
        await emu.close();
      }
    });

  it('startEmulator refuses a port out of range in the same words as --port', async () => {
    let thrown: string | undefined;
    try {
      await startEmulator({ port: 65536 });
    } catch (e) {
      thrown = (e as Error).message;
    }
    expect(thrown).to.equal('port must be an integer from 0 to 65535, got 65536');
  });

  it('a reset refused keeps the options the emulator had: the next reset is of the same world', async () => {
    const emu = await emulator({ accounts: 2, devicesPerAccount: 5 });
    try {
      const raw = new Raw(emu);
      expect(() => emu.reset({ accounts: 0 })).to.throw('accounts must be an integer from 1 to 1000, got 0');
      const r = await raw.send('POST', '/_emulator/reset', { devicesPerAccount: 5_000_000 });
      expect([r.status, r.body]).to.deep.equal([
        400,
        { error: 'accounts × devicesPerAccount must be at most 5000000 devices, got 10000000' },
      ]);
      // A reset of accounts 0 left them 0: every later reset that did not give them failed.
      emu.reset();
      const again = await raw.send('POST', '/_emulator/reset', {});
      expect([again.status, (again.body as { accounts: string[] }).accounts.length]).to.deep.equal([200, 2]);
      expect(emu.accountNames()).to.have.length(2);
    } finally {
      await emu.close();
    }
  });

  it('a reset by the library refuses as startEmulator does: the same error, the same words', async () => {
    const caught = async (f: () => unknown) => {
      try {
        await f();
      } catch (e) {
        return e as Error;
      }
      throw new Error('expected it to fail');
    };
    const start = await caught(() => startEmulator({ accounts: 0 }));
    const emu = await emulator({ accounts: 2, devicesPerAccount: 5 });
    try {
      const reset = await caught(() => emu.reset({ accounts: 0 }));
      // startEmulator threw a TypeError, emu.reset() a RangeError (the world's own check).
      for (const e of [start, reset]) {
        expect(e).to.be.instanceOf(OptionError);
        expect(e).to.be.instanceOf(RangeError);
        expect(e.message).to.equal('accounts must be an integer from 1 to 1000, got 0');
      }
    } finally {
      await emu.close();
    }
  });

  describe('faults', () => {
    const FAULT_CASES: [Record<string, unknown>, string][] = [
      [{ errorRate: 1.5 }, 'errorRate must be a number from 0 to 1'],
      [
        { processingSeconds: 4e7 },
        'processingSeconds must be a number from 0 to 31536000 (simulated seconds: a year)',
      ],
      [
        { deviceErrors: { 'NOT A TYPE': 0.1 } },
        'deviceErrors: `NOT A TYPE` is not an error type of spec section 7.3',
      ],
      [{ colour: 'red' }, 'unknown fault `colour`: the faults are ' + Object.keys(DEFAULT_FAULTS).join(', ')],
    ];
    for (const [faults, error] of FAULT_CASES)
      it(`${JSON.stringify(faults)}: startEmulator, setFaults and PUT /_emulator/faults refuse it alike`, async () => {
        // startEmulator said `Invalid faults: errorRate must be ...`, a TypeError; the control API said the rest.
        let started: Emulator | undefined;
        let thrown: Error | undefined;
        try {
          started = await startEmulator({ timeScale: 0, faults: faults as Partial<Faults> });
        } catch (e) {
          thrown = e as Error;
        }
        await started?.close();
        const emu = await emulator();
        try {
          let set: Error | undefined;
          try {
            emu.setFaults(faults as Partial<Faults>);
          } catch (e) {
            set = e as Error;
          }
          const r = await new Raw(emu).send('PUT', '/_emulator/faults', faults);
          expect({
            startEmulator: thrown?.message,
            setFaults: set?.message,
            put: [r.status, r.body],
          }).to.deep.equal({ startEmulator: error, setFaults: error, put: [400, { error }] });
          expect(thrown).to.be.instanceOf(OptionError);
          expect(set).to.be.instanceOf(OptionError);
        } finally {
          await emu.close();
        }
      });
  });

  describe('startTime', () => {
    const FORM =
      'an ISO 8601 date and time with its offset (2026-01-05T00:00:00Z, 2026-01-04T19:00:00-05:00) or milliseconds since the epoch';
    const START_CASES: [unknown, string][] = [
      ['soon', `startTime must be ${FORM}, got "soon"`],
      [true, `startTime must be ${FORM}, got true`],
      // Date.parse took these, each as a time of its own choosing: the year's first instant, March 7th of 2001,
      // midnight where the machine is, an overflowed day.
      ['2026', `startTime must be ${FORM}, got "2026"`],
      ['March 7', `startTime must be ${FORM}, got "March 7"`],
      ['2026-01-05T00:00:00', `startTime must be ${FORM}, got "2026-01-05T00:00:00"`],
      ['2026-01-05', `startTime must be ${FORM}, got "2026-01-05"`],
      ['Mon, 05 Jan 2026 00:00:00 GMT', `startTime must be ${FORM}, got "Mon, 05 Jan 2026 00:00:00 GMT"`],
      ['2026-02-30T00:00:00Z', 'startTime 2026-02-30T00:00:00Z is no time: that day or hour does not exist'],
      // Taken: the seeded devices were made in year -1, and billing cycles began in 1900.
      [
        '0000-06-01T00:00:00Z',
        'startTime must be no earlier than 0002-01-01T00:00:00.000Z (the API writes four-digit years, and the seeded devices were made up to 400 days before the start), got 0000-06-01T00:00:00.000Z',
      ],
      [
        -1e14,
        'startTime must be no earlier than 0002-01-01T00:00:00.000Z (the API writes four-digit years, and the seeded devices were made up to 400 days before the start), got -001199-02-15T14:13:20.000Z',
      ],
      [
        -1e300,
        'startTime must be no earlier than 0002-01-01T00:00:00.000Z (the API writes four-digit years, and the seeded devices were made up to 400 days before the start), got -1e+300',
      ],
      [
        '+010000-01-01T00:00:00Z',
        'startTime must be no later than 9999-12-31T23:59:59.999Z, got +010000-01-01T00:00:00.000Z',
      ],
    ];
    it('takes a time with Z or an offset, seconds and milliseconds optional, and milliseconds', async () => {
      for (const [startTime, iso] of [
        ['2026-01-05T00:00:00Z', '2026-01-05T00:00:00.000Z'],
        ['2026-01-04T19:00-05:00', '2026-01-05T00:00:00.000Z'],
        ['2026-01-05T05:30:00.250+05:30', '2026-01-05T00:00:00.250Z'],
        [Date.parse('2026-01-05T00:00:00Z'), '2026-01-05T00:00:00.000Z'],
      ] as const) {
        const emu = await startEmulator({ timeScale: 0, startTime });
        try {
          expect(new Date(emu.now()).toISOString(), String(startTime)).to.equal(iso);
        } finally {
          await emu.close();
        }
      }
    });

    for (const [startTime, error] of START_CASES)
      it(`${JSON.stringify(startTime)}: startEmulator refuses it, saying which times it takes`, async () => {
        let started: Emulator | undefined;
        let thrown: Error | undefined;
        try {
          started = await startEmulator({ timeScale: 0, startTime: startTime as string });
        } catch (e) {
          thrown = e as Error;
        }
        await started?.close();
        expect(thrown?.message).to.equal(error);
        expect(thrown).to.be.instanceOf(OptionError);
      });
  });
});
