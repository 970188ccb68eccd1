/**
 * `fleetbook store prune --playbooks DIR`: a backfill (`fleetbook run --scheduled-at`) of a fire its schedule has
 * not passed is kept however long ago it ended, as a daemon catching up must not make that night up again; once
 * its schedule's key is gone (its cron or time zone edited, its playbook removed), no schedule will pass that
 * fire. `serve` prunes such backfills, knowing the schedules it loaded; `store prune` loads none, and kept them
 * for ever. Given the playbooks the daemons run, it prunes them as `serve` does, once no prune pass has found
 * their schedule loaded for a day. Child processes on a state file written here (dist/ must be built).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { SqliteStore } from '../../src/store/sqlite.js';
import { fleetbook } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

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
  let tmp: string;
  let playbooks: string;
  before(async () => {
    tmp = tempDir('fleetbook-store-prune-playbooks-');
    playbooks = join(tmp, 'playbooks');
    await mkdir(playbooks);
    await writeFile(join(playbooks, 'nightly.yaml'), NIGHTLY_YAML);
  });

  /**
   * A state file with a backfill of each schedule, ended 100 days ago, ahead of the last fire each recorded; both
   * schedules last recorded loaded `loaded` days ago (by a daemon's prune pass), or never.
   */
  async function seeded(name: string, loaded: number | null = 2): Promise<string> {
    const file = join(tmp, name);
    const store = new SqliteStore(file);
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
    if (loaded !== null) await store.recordLoaded([NIGHTLY, GONE], ago(loaded));
    await store.close();
    return file;
  }
  const left = async (file: string) => {
    const store = new SqliteStore(file);
    try {
      return (await store.listRuns()).map((r) => r.id.slice(-1)).sort();
    } finally {
      await store.close();
    }
  };

  it('without --playbooks keeps both backfills; with them, prunes the one whose schedule is gone', async () => {
    const file = await seeded('prune.db');
    const kept = await fleetbook(['store', 'prune', '--older-than', '30d'], { FLEETBOOK_STATE: file });
    expect([kept.code, kept.stderr]).to.deep.equal([0, '']);
    expect(kept.stdout).to.include('removed 0 run(s)');
    expect(await left(file)).to.deep.equal(['1', '2']);

    const r = await fleetbook(['store', 'prune', '--older-than', '30d', '--playbooks', playbooks], {
      FLEETBOOK_STATE: file,
    });
    expect([r.code, r.stderr]).to.deep.equal([0, '']);
    expect(r.stdout).to.include('removed 1 run(s)');
    expect(await left(file)).to.deep.equal(['1']);
  });

  it('keeps the backfill of a schedule gone for less than a day, or never recorded loaded, for a day', async () => {
    for (const [name, loaded] of [
      ['recent.db', 0.5],
      ['never.db', null],
    ] as const) {
      const file = await seeded(name, loaded);
      const r = await fleetbook(['store', 'prune', '--older-than', '30d', '--playbooks', playbooks], {
        FLEETBOOK_STATE: file,
      });
      expect([r.code, r.stderr]).to.deep.equal([0, '']);
      expect(r.stdout, name).to.include('removed 0 run(s)');
      expect(await left(file)).to.deep.equal(['1', '2']);
    }
  });

  it('refuses playbooks with an error, pruning nothing', async () => {
    const file = await seeded('broken.db');
    const broken = join(tmp, 'broken');
    await mkdir(broken);
    await writeFile(
      join(broken, 'nightly.yaml'),
      NIGHTLY_YAML.replace("cron: '0 2 * * *'", "cron: '0 25 * * *'"),
    );
    const r = await fleetbook(['store', 'prune', '--older-than', '30d', '--playbooks', broken], {
      FLEETBOOK_STATE: file,
    });
    expect(r.code).to.equal(2);
    expect(r.stderr).to.match(
      /^fleetbook store prune: 1 error\(s\) in the playbooks of .*broken; nothing pruned:\n/,
    );
    expect(r.stderr).to.include('nightly.yaml:3:');
    expect(await left(file)).to.deep.equal(['1', '2']);
  });
});
