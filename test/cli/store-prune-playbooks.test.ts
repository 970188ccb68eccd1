/**
 * `fleetbook store prune --playbooks DIR`: a backfill (`fleetbook run --scheduled-at`) of a fire its schedule has
 * not passed is kept however long ago it ended, as a daemon catching up must not make that night up again; once
 * its schedule's key is gone (its cron or time zone edited, its playbook removed), no schedule will pass that
 * fire. `serve` prunes such backfills, knowing the schedules it loaded; `store prune` loads none, and kept them
 * for ever. Given the playbooks the daemons run, it prunes them as `serve` does. Child processes on a state file
 * written here (dist/ must be built).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { fleetbook, stateFile } from '../helpers/cli.js';
import { tempDir } from '../runner/helpers.js';

const DAY = 24 * 60 * 60 * 1000;
const ago = (days: number) => new Date(Date.now() - days * DAY).toISOString();
const NIGHTLY = 'nightly#UTC#0 2 * * *';
/** The schedule of a playbook since removed. */
const GONE = 'gone#UTC#0 2 * * *';
const NIGHTLY_YAML = `version: 1
name: nightly
on: { schedule: { cron: '0 2 * * *' } }
steps:
  - id: say
    uses: log
    with: { message: hi }
`;

describe('fleetbook store prune --playbooks: backfills of schedules no longer loaded (child process)', function () {
  this.timeout(60_000);
  let tmp: { dir: string; close(): Promise<void> };
  let playbooks: string;
  before(async () => {
    tmp = await tempDir();
    playbooks = join(tmp.dir, 'playbooks');
    await mkdir(playbooks);
    await writeFile(join(playbooks, 'nightly.yaml'), NIGHTLY_YAML);
  });
  after(() => tmp.close());

  /** Each test's state file: a backfill of each schedule, ended 100 days ago, ahead of the last fire each recorded. */
  const { env, withStore } = stateFile(
    async (store) => {
      for (const [id, schedule] of [
        ['b0000000-0000-4000-8000-000000000001', NIGHTLY],
        ['b0000000-0000-4000-8000-000000000002', GONE],
      ] as const) {
        await store.recordFire(schedule, ago(102));
        store.createRun({
          id,
          playbook: schedule.split('#')[0] as string,
          status: 'succeeded',
          trigger: { type: 'schedule', schedule, scheduledAt: ago(101), reason: 'backfill' },
          inputs: {},
          startedAt: ago(100),
          endedAt: ago(100),
        });
      }
    },
    { each: true },
  );
  const left = () => withStore(async (store) => (await store.listRuns()).map((r) => r.id.slice(-1)).sort());

  it('without --playbooks keeps both backfills; with them, prunes the one whose schedule is gone', async () => {
    const kept = await fleetbook(['store', 'prune', '--older-than', '30d'], env);
    expect([kept.code, kept.stderr]).to.deep.equal([0, '']);
    expect(kept.stdout).to.include('removed 0 run(s)');
    expect(await left()).to.deep.equal(['1', '2']);

    const r = await fleetbook(['store', 'prune', '--older-than', '30d', '--playbooks', playbooks], env);
    expect([r.code, r.stderr]).to.deep.equal([0, '']);
    expect(r.stdout).to.include('removed 1 run(s)');
    expect(await left()).to.deep.equal(['1']);
  });

  it('refuses playbooks with an error, pruning nothing', async () => {
    const broken = join(tmp.dir, 'broken');
    await mkdir(broken);
    await writeFile(
      join(broken, 'nightly.yaml'),
      NIGHTLY_YAML.replace("cron: '0 2 * * *'", "cron: '0 25 * * *'"),
    );
    const r = await fleetbook(['store', 'prune', '--older-than', '30d', '--playbooks', broken], env);
    expect(r.code).to.equal(2);
    expect(r.stderr).to.match(
      /^fleetbook store prune: 1 error\(s\) in the playbooks of .*broken; nothing pruned:\n/,
    );
    expect(r.stderr).to.include('nightly.yaml:3:');
    expect(await left()).to.deep.equal(['1', '2']);
  });
});
