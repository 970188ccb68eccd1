/**
 * `fleetbook help A B` prints the help of B, a subcommand of A (child processes; dist/ must be built). Commander's
 * help command read one name and left the rest: `help runs show` printed the help of `runs`, and so did
 * `help runs shwo`, with no word that `shwo` names nothing.
 */
import { expect } from 'chai';
import { fleetbook } from '../helpers/cli.js';

describe('help of a subcommand (child process)', function () {
  this.timeout(60_000);

  const SUBCOMMANDS = [
    ['runs', 'list'],
    ['runs', 'show'],
    ['runs', 'cancel'],
    ['logins', 'list'],
    ['logins', 'clear'],
    ['store', 'migrate'],
    ['store', 'prune'],
    ['store', 'compact'],
  ];
  for (const [group, sub] of SUBCOMMANDS)
    it(`help ${group} ${sub} prints what ${group} ${sub} --help prints`, async () => {
      const [help, flag] = await Promise.all([
        fleetbook(['help', group!, sub!], {}),
        fleetbook([group!, sub!, '--help'], {}),
      ]);
      expect(flag.stdout).to.match(new RegExp(`^Usage: fleetbook ${group} ${sub} `));
      expect([help.code, help.stdout, help.stderr]).to.deep.equal([0, flag.stdout, '']);
    });

  it('help of the help command is its own', async () => {
    const r = await fleetbook(['help', 'runs', 'help'], {});
    expect([r.code, r.stderr]).to.deep.equal([0, '']);
    expect(r.stdout).to.match(/^Usage: fleetbook runs help /);
  });

  const REFUSED: [string[], string[]][] = [
    [
      ['help', 'serv'],
      ["error: unknown command 'serv'", '(Did you mean serve?)', '', 'Usage: fleetbook [options] [command]'],
    ],
    [
      ['help', 'runs', 'shwo'],
      [
        "error: unknown command 'shwo'",
        '(Did you mean show?)',
        '',
        'Usage: fleetbook runs [options] [command]',
      ],
    ],
    [
      ['help', 'store', 'prnue'],
      [
        "error: unknown command 'prnue'",
        '(Did you mean prune?)',
        '',
        'Usage: fleetbook store [options] [command]',
      ],
    ],
    [
      ['runs', 'help', 'shwo'],
      [
        "error: unknown command 'shwo'",
        '(Did you mean show?)',
        '',
        'Usage: fleetbook runs [options] [command]',
      ],
    ],
    [
      ['help', 'runs', 'show', 'extra'],
      [
        "error: unknown command 'extra': 'runs show' has no commands",
        '',
        'Usage: fleetbook runs show [options] <id>',
        '',
      ],
    ],
    [
      ['help', 'run', 'extra'],
      [
        "error: unknown command 'extra': 'run' has no commands",
        '',
        'Usage: fleetbook run [options] <playbook>',
        '',
      ],
    ],
  ];
  for (const [args, lines] of REFUSED)
    it(`fleetbook ${args.join(' ')} is refused, naming the word, then the usage of the command it is under`, async () => {
      const r = await fleetbook(args, {});
      expect([r.code, r.stdout, ...r.stderr.split('\n').slice(0, lines.length)]).to.deep.equal([
        2,
        '',
        ...lines,
      ]);
    });
});
