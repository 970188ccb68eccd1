/**
 * `fleetbook store compact` (child process on a state file written here; dist/ must be built): SQLite reuses the
 * pages that pruning frees, but never gives them back to the file system, so a state file stayed at the size of
 * its largest year. Compacting rewrites it without them; it refuses while a process holds the file, and on
 * PostgreSQL.
 */
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { Lease } from '../../src/store/lease.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { fleetbook, stateFile } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const DAY = 24 * 60 * 60 * 1000;
const ago = (days: number) => new Date(Date.now() - days * DAY).toISOString();
const mb = (file: string) => statSync(file).size / 2 ** 20;

describe('fleetbook store compact', function () {
  this.timeout(60_000);

  describe('on a state file of a run a prune removes', () => {
    // A run of 200,000 devices that ended 100 days ago, and one of yesterday.
    const state = stateFile((store) => {
      for (const [id, days, devices] of [
        ['a0000000-0000-4000-8000-000000000001', 100, 200_000],
        ['a0000000-0000-4000-8000-000000000002', 1, 10],
      ] as const) {
        store.createRun({
          id,
          playbook: 'nightly',
          status: 'succeeded',
          trigger: { type: 'schedule' },
          inputs: {},
          startedAt: ago(days),
          endedAt: ago(days),
        });
        for (let from = 0; from < devices; from += 10_000) {
          const ids = Array.from({ length: Math.min(10_000, devices - from) }, (_, i) =>
            String(350_000_000_000_000 + from + i),
          );
          store.recordDevices(
            id,
            'locate',
            [{ ids, kind: 'imei', outcome: 'succeeded', attempts: 1 }],
            ago(days),
          );
        }
      }
    });

    it('gives back the space a prune freed, and keeps what is left', async () => {
      const file = state.file;
      const pruned = await fleetbook(['store', 'prune', '--older-than', '30d'], state.env);
      expect(pruned.stdout).to.include('removed 1 run(s)');
      const full = mb(file);
      expect(full, 'the file after the prune (MB)').to.be.above(2);

      const r = await fleetbook(['store', 'compact'], state.env);
      expect([r.code, r.stderr]).to.deep.equal([0, '']);
      expect(r.stdout).to.match(
        /^the state file .*state\.db \(FLEETBOOK_STATE\): compacted from [\d.]+ MB to [\d.]+ MB\n$/,
      );
      expect(mb(file), 'the file after compact (MB)').to.be.below(full / 4);
      await state.withStore(async (after) => {
        expect((await after.listRuns()).map((run) => run.id)).to.deep.equal([
          'a0000000-0000-4000-8000-000000000002',
        ]);
        expect(await after.deviceResults('a0000000-0000-4000-8000-000000000002')).to.have.length(10);
      });
    });
  });

  it('says the size the file had before the command, not once opened', async () => {
    // An empty file is a database without a schema: opening it migrates it. The size before was measured after
    // that, and said 0.3 MB.
    const file = join(tempDir('fb-compact-'), 'state.db');
    writeFileSync(file, '');
    const r = await fleetbook(['store', 'compact', '--state', file], {});
    expect([r.code, r.stderr]).to.deep.equal([0, '']);
    expect(r.stdout).to.match(/: compacted from 0\.0 MB to 0\.1 MB\n$/);
  });

  it('refuses while a process holds the file, naming it, and on PostgreSQL', async () => {
    const file = join(tempDir('fb-compact-'), 'state.db');
    const store = new SqliteStore(file);
    const lease = await Lease.acquire({
      store,
      role: 'daemon',
      leaseMs: 15_000,
      exclusive: true,
      onLost: () => undefined,
    });
    try {
      const r = await fleetbook(['store', 'compact'], { FLEETBOOK_STATE: file });
      expect(r.code).to.equal(2);
      expect(r.stderr).to.match(
        new RegExp(
          `^fleetbook store compact: the state file .* is in use by fleetbook serve \\(pid ${process.pid} on .*\\): stop it first`,
        ),
      );
    } finally {
      await lease.release();
      await store.close();
    }
    const pg = await fleetbook(['store', 'compact', '--state', 'postgres://user@localhost/fleetbook'], {});
    expect(pg.code).to.equal(2);
    expect(pg.stderr).to.match(
      /^fleetbook store compact: a SQLite state file only\. On PostgreSQL, autovacuum/,
    );
  });
});
