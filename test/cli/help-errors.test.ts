/**
 * A command line that names no command says what is wrong before the usage it prints (child process; dist/ must
 * be built). Commander printed the usage alone and exited 2, so that `fleetbook store` read as the help asked
 * for. `help` of a command that does not exist: help-of-a-subcommand.test.ts.
 */
import { expect } from 'chai';
import { fleetbook } from '../helpers/cli.js';

describe('usage errors that print the usage (child process)', function () {
  this.timeout(30_000);

  const CASES: [string[], string, string][] = [
    [
      [],
      'error: missing command: give one of validate, fmt, schema, call, run, test, serve, runs, device, logins, store, emulator, actions',
      'Usage: fleetbook [options] [command]',
    ],
    [
      ['store'],
      'error: missing command: give one of migrate, prune, compact',
      'Usage: fleetbook store [options] [command]',
    ],
  ];
  for (const [args, error, usage] of CASES)
    it(`fleetbook ${args.join(' ')}: exit 2, saying what is wrong, then the usage`, async () => {
      const r = await fleetbook(args, {});
      expect([r.code, r.stdout, ...r.stderr.split('\n').slice(0, 3)]).to.deep.equal([
        2,
        '',
        error,
        '',
        usage,
      ]);
    });

  it('an error already said is not said twice: the usage follows it alone', async () => {
    const r = await fleetbook(['runs', 'lsit'], {});
    expect([r.code, ...r.stderr.split('\n').slice(0, 3)]).to.deep.equal([
      2,
      "error: unknown command 'lsit'",
      '',
      'Usage: fleetbook runs [options] [command]',
    ]);
  });

  it('help asked for is no error: stdout, exit 0', async () => {
    for (const args of [['help'], ['--help'], ['help', 'run'], ['store', '--help']]) {
      const r = await fleetbook(args, {});
      expect([args, r.code, r.stderr]).to.deep.equal([args, 0, '']);
      expect(r.stdout).to.match(/^Usage: fleetbook /);
    }
  });
});
