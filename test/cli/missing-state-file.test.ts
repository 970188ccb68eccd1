/**
 * The commands that only read or maintain a store (`runs`, `store`) refuse a SQLite state file that does not
 * exist (child processes; dist/ must be built): they created it, and a mistyped path answered "no runs", or
 * "compacted from 0.3 MB to 0.1 MB", exit 0, leaving a new empty store behind.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { fleetbook } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const COMMANDS = [
  ['runs', 'list'],
  ['runs', 'show', 'a0000000'],
  ['runs', 'cancel', 'a0000000'],
  ['store', 'migrate'],
  ['store', 'prune', '--older-than', '90d'],
  ['store', 'compact'],
];

const refusal = (file: string, origin: string) =>
  `fleetbook: the state file ${file} (${origin}) does not exist: check the path (\`fleetbook run\` and \`fleetbook serve\` create the file)\n`;

describe('a state file that does not exist (child process)', function () {
  this.timeout(60_000);

  for (const args of COMMANDS) {
    it(`${args.slice(0, 2).join(' ')} refuses it, exit 2, and creates nothing`, async () => {
      const dir = tempDir('fb-missing-');
      // In a folder that exists, and in one that does not.
      for (const file of [join(dir, 'never.db'), join(dir, 'x', 'nonexist.db')]) {
        const r = await fleetbook(args, { FLEETBOOK_STATE: file });
        expect([r.code, r.stdout, r.stderr]).to.deep.equal([2, '', refusal(file, 'FLEETBOOK_STATE')]);
      }
      expect(readdirSync(dir)).to.deep.equal([]);
    });
  }

  it('names --state when the path comes from the flag, and the default when nothing names it', async () => {
    const dir = tempDir('fb-missing-');
    const file = join(dir, 'nonexist.db');
    for (const args of COMMANDS.filter((c) => c[0] === 'store')) {
      const r = await fleetbook([...args, '--state', file], { FLEETBOOK_STATE: join(dir, 'other.db') });
      expect([r.code, r.stderr]).to.deep.equal([2, refusal(file, '--state')]);
    }
    const r = await fleetbook(['runs', 'list'], {}, [], dir);
    expect([r.code, r.stderr]).to.deep.equal([
      2,
      refusal('./.fleetbook/state.db', 'the default, FLEETBOOK_STATE being unset'),
    ]);
    expect(existsSync(join(dir, '.fleetbook'))).to.equal(false);
    expect(readdirSync(dir)).to.deep.equal([]);
  });
});
