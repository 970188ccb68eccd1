/**
 * `fleetbook emulator` refuses a flag it cannot read before it starts (exit 2), naming the flag, what it takes,
 * and the text it got. It said "Expected `port` to be an integer from 0 to 65535, got `NaN`" (exit 1), and read
 * an empty `--port` or `--time-scale` as 0 and `--accounts 0x10` as 16 without a word. Child processes of the
 * built CLI (dist/ must be built).
 */
import { expect } from 'chai';
import { emulatorBanner, fleetbook } from '../helpers/cli.js';

describe('fleetbook emulator: flags it cannot read (child process)', function () {
  this.timeout(60_000);

  const CASES: [string[], string][] = [
    [['--port', 'abc'], '--port must be an integer from 0 to 65535, got "abc"'],
    [['--port', ''], '--port must be an integer from 0 to 65535, got ""'],
    [['--port', '65536'], '--port must be an integer from 0 to 65535, got "65536"'],
    [['--accounts', '0x10'], '--accounts must be an integer from 1 to 1000, got "0x10"'],
    [['--accounts', '0'], '--accounts must be an integer from 1 to 1000, got "0"'],
    [
      ['--devices-per-account', '2.5'],
      '--devices-per-account must be an integer from 0 to 5000000, got "2.5"',
    ],
    [
      ['--accounts', '1000', '--devices-per-account', '50000'],
      '--accounts × --devices-per-account must be at most 5000000 devices, got 50000000',
    ],
    [['--time-scale', ''], '--time-scale must be a number from 0 to 1000000 (e.g. 60 or 0.5), got ""'],
    [
      ['--time-scale', '1e308'],
      '--time-scale must be a number from 0 to 1000000 (e.g. 60 or 0.5), got "1e308"',
    ],
    [['--time-scale', '-1'], '--time-scale must be a number from 0 to 1000000 (e.g. 60 or 0.5), got "-1"'],
    [['--seed', ''], '--seed is empty: give a number or a word, or leave it out'],
  ];
  for (const [args, error] of CASES)
    it(`${args.map((a) => JSON.stringify(a)).join(' ')}: exit 2, naming the flag and what it takes`, async () => {
      // --port 0 unless the case is of --port: a case the emulator wrongly starts for ends at the timeout.
      const port = args.includes('--port') ? [] : ['--port', '0'];
      const r = await fleetbook(['emulator', ...port, ...args], {}, [], undefined, 10_000);
      expect([r.code, r.stdout, r.stderr]).to.deep.equal([2, '', `fleetbook: ${error}\n`]);
    });

  it('FLEETBOOK_LOG_LEVEL it does not know: exit 2, naming the variable and the levels (not every line dropped)', async () => {
    const r = await fleetbook(
      ['emulator', '--port', '0'],
      { FLEETBOOK_LOG_LEVEL: 'verbose' },
      [],
      undefined,
      10_000,
    );
    expect([r.code, r.stdout, r.stderr]).to.deep.equal([
      2,
      '',
      'fleetbook: FLEETBOOK_LOG_LEVEL must be one of error, warn, info, debug, got "verbose"\n',
    ]);
  });
});

describe('fleetbook emulator: its banner (child process)', function () {
  this.timeout(30_000);

  it('counts one account in the singular', async () => {
    expect(await emulatorBanner(['--accounts', '1'])).to.match(/seed {14}1: 1 account x 50 devices,/);
  });
});
