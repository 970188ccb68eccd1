/**
 * A flag that takes one value, given twice, is refused (exit 2) with both values, before the command does
 * anything: commander kept the last, so `store prune --older-than 90d ... --older-than 1d` pruned all but a day
 * without a word about the first. Child processes of the built CLI (dist/ must be built).
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { fleetbook } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

describe('a one-value flag given twice (child process)', function () {
  this.timeout(60_000);
  const dir = tempDir('fb-twice-');
  const env = { FLEETBOOK_STATE: join(dir, 'state.db') };

  const CASES: [string[], string][] = [
    [
      ['store', 'prune', '--older-than', '90d', '--older-than', '1d'],
      `error: option '--older-than <duration>' is given twice ("90d" and "1d"): give it once`,
    ],
    [
      ['runs', 'list', '--limit', '5', '--limit', '1'],
      `error: option '--limit <n>' is given twice ("5" and "1"): give it once`,
    ],
    [
      ['runs', '--status', 'failed', '--status', 'running'],
      `error: option '--status <status>' is given twice ("failed" and "running"): give it once`,
    ],
    [
      ['emulator', '--port', '0', '--port', '8080'],
      `error: option '--port <n>' is given twice ("0" and "8080"): give it once`,
    ],
    [
      ['run', 'playbooks/nightly-location-report.yaml', '--event', 'a.json', '--event', 'b.json'],
      `error: option '--event <file>' is given twice ("a.json" and "b.json"): give it once`,
    ],
    [
      ['validate', '--format', 'json', 'playbooks', '--format=text'],
      `error: option '--format <format>' is given twice ("json" and "text"): give it once`,
    ],
  ];
  for (const [args, error] of CASES)
    it(`${args.join(' ')}: exit 2, naming both values`, async () => {
      const r = await fleetbook(args, env);
      expect([r.code, r.stdout, r.stderr.split('\n')[0]]).to.deep.equal([2, '', error]);
      expect(r.stderr).to.include('\nUsage: fleetbook ');
    });

  it('a flag that collects (--input) and a switch (--json) may still be given more than once', async () => {
    const r = await fleetbook(
      [
        'run',
        'playbooks/group-usage-check.yaml',
        '--input',
        'nosuch=1',
        '--input',
        'other=2',
        '--json',
        '--json',
      ],
      env,
    );
    // Past the flags: the inputs themselves are what is refused.
    expect([r.code, r.stderr]).to.deep.equal([
      2,
      'fleetbook: unknown input `nosuch` (declared: account, group, dailyLimitBytes)\n',
    ]);
  });
});
