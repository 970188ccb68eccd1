/**
 * `fleetbook logins` reads the store of FLEETBOOK_STATE, as `runs` does, and is held to the same usage (child
 * processes; dist/ must be built): a misspelt FLEETBOOK_ variable is warned of, since it would leave the
 * default state file in place without a word, and a word after `logins` that names no subcommand is said to
 * be one, not handed to `logins list` as an argument it does not take.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { SqliteStore } from '../../src/store/sqlite.js';
import { fleetbook } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

describe('fleetbook logins: usage as runs has it (child process)', function () {
  this.timeout(60_000);
  const env = { FLEETBOOK_STATE: join(tempDir('fb-logins-usage-'), 'state.db') };

  before(async () => {
    await new SqliteStore(env.FLEETBOOK_STATE).close();
  });

  for (const args of [['logins'], ['logins', 'list'], ['logins', 'clear', 'admin']])
    it(`${args.join(' ')} warns of a FLEETBOOK_ variable it does not know, naming the one meant`, async () => {
      const r = await fleetbook(args, { ...env, FLEETBOOK_STAET: 'elsewhere.db' });
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stderr.split('\n')[0]).to.equal(
        'fleetbook: warning: FLEETBOOK_STAET is set, but fleetbook reads no such variable (did you mean FLEETBOOK_STATE?)',
      );
    });

  it('logins lsit: exit 2, an unknown command', async () => {
    const r = await fleetbook(['logins', 'lsit'], env);
    expect([r.code, r.stdout, r.stderr.split('\n')[0]]).to.deep.equal([
      2,
      '',
      "error: unknown command 'lsit'",
    ]);
    expect(r.stderr).to.include('\nUsage: fleetbook logins ');
  });

  it('logins list extra: still refused as an argument list does not take', async () => {
    const r = await fleetbook(['logins', 'list', 'extra'], env);
    expect([r.code, r.stderr.split('\n')[0]]).to.deep.equal([
      2,
      "error: too many arguments for 'list'. Expected 0 arguments but got 1.",
    ]);
  });
});
