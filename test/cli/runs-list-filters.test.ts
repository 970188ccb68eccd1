/**
 * `fleetbook runs list` filters as the console's runs list does: `--trigger` (callback, schedule, manual) and
 * `--since` (a duration back from now, or a time), beside `--playbook` and `--status`; what it says when none
 * matches names every filter. Before, "last night's scheduled runs" meant listing the latest 1,000 and reading
 * them. Child processes of the built CLI (dist/ must be built) on a state file written here.
 */
import { expect } from 'chai';
import { fleetbook, stateFile } from '../helpers/cli.js';

const HOUR = 3_600_000;
const NOW = Date.now();
/** id, playbook, trigger, started hours ago, status */
const RUNS = [
  ['a0000000-0000-4000-8000-000000000001', 'nightly', 'schedule', 2, 'succeeded'],
  ['a0000000-0000-4000-8000-000000000002', 'nightly', 'manual', 30, 'failed'],
  ['a0000000-0000-4000-8000-000000000003', 'overuse', 'callback', 0.2, 'succeeded'],
] as const;

describe('fleetbook runs list: --trigger and --since (child process)', function () {
  this.timeout(30_000);
  const { env } = stateFile((store) => {
    for (const [id, playbook, type, ago, status] of RUNS) {
      const at = new Date(NOW - ago * HOUR).toISOString();
      store.createRun({
        id,
        playbook,
        status,
        trigger: type === 'callback' ? { type, service: 'DeviceUsage' } : { type },
        inputs: {},
        startedAt: at,
        endedAt: at,
      });
    }
  });

  const listed = async (...flags: string[]) => {
    const r = await fleetbook(['runs', 'list', '--json', ...flags], env);
    expect([r.code, r.stderr], flags.join(' ')).to.deep.equal([0, '']);
    return (JSON.parse(r.stdout) as { id: string }[]).map((x) => x.id.slice(-1));
  };

  it('keeps the runs of a trigger, and those started since a duration ago or a time', async () => {
    expect(await listed('--trigger', 'schedule')).to.deep.equal(['1']);
    expect(await listed('--trigger', 'callback')).to.deep.equal(['3']);
    expect(await listed('--since', '24h')).to.deep.equal(['3', '1']);
    expect(await listed('--since', '1d12h')).to.deep.equal(['3', '1', '2']);
    expect(await listed('--since', new Date(NOW - HOUR).toISOString())).to.deep.equal(['3']);
    expect(await listed('--since', '3h', '--playbook', 'nightly', '--status', 'succeeded')).to.deep.equal([
      '1',
    ]);
  });

  it('says which filters matched no run', async () => {
    const r = await fleetbook(['runs', 'list', '--trigger', 'manual', '--since', '24h'], env);
    expect([r.code, r.stderr]).to.deep.equal([0, '']);
    expect(r.stdout).to.match(/^no manual runs since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\n$/);
    const of = await fleetbook(
      ['runs', 'list', '--playbook', 'nightly', '--status', 'failed', '--since', '1h'],
      env,
    );
    expect(of.stdout).to.match(/^no failed runs of playbook "nightly" since \S+\n$/);
  });

  it('refuses a trigger that is none and a --since that is neither a duration nor a time, exit 2', async () => {
    const cases: [string[], string][] = [
      [
        ['--trigger', 'cron'],
        'fleetbook: --trigger must be one of callback, schedule, manual (got "cron")\n',
      ],
      [
        ['--since', 'yesterday'],
        'fleetbook: --since must be a duration back from now (30m, 24h, 7d) or a time (ISO 8601: 2026-11-01, or 2026-11-01T08:00:00Z) (got "yesterday")\n',
      ],
      [['--since', ''], 'fleetbook: --since is empty (got ""): give a duration or a time, or leave it out\n'],
    ];
    for (const [flags, says] of cases) {
      const r = await fleetbook(['runs', 'list', ...flags], env);
      expect([r.code, r.stdout, r.stderr], flags.join(' ')).to.deep.equal([2, '', says]);
    }
  });
});
