/**
 * Retention (`fleetbook store prune`, FLEETBOOK_RETENTION), on every backend: the runs that ended before a time go
 * with everything the store keeps for them, a batch at a time; a run not ended stays whatever its age, and so do
 * the callbacks not processed.
 */
import { expect } from 'chai';
import type { Store } from '../../src/store/store.js';
import { forEachBackend } from './backends.js';
import { imei, message, MISS, run } from './fixtures.js';

const OLD = '2026-08-01T00:00:00.000Z';
const CUTOFF = '2026-09-01T00:00:00.000Z';
const RECENT = '2026-11-20T00:00:00.000Z';

forEachBackend('retention: pruning what ended long ago', (b) => {
  let store: Store;

  /** A run with a checkpoint, items and ledger entries (one of them repeated: the latest-result tables too). */
  async function withRecords(id: string, o: Parameters<typeof run>[1]): Promise<void> {
    store.createRun(run(id, { startedAt: OLD, ...o }));
    store.saveStep(id, 'list', { status: 'succeeded' });
    store.appendItems(id, 'list', 0, [['imei', ['1', '2']]]);
    store.recordDevices(
      id,
      'locate',
      [{ ids: [imei(1)], kind: 'imei', outcome: 'failed', errorType: MISS, attempts: 1 }],
      OLD,
    );
    store.recordDevices(
      id,
      'locate',
      [{ ids: [imei(1), imei(2)], kind: 'imei', outcome: 'succeeded', attempts: 2 }],
      OLD,
    );
    await store.durable();
  }

  const count = async (table: string, runId: string) =>
    (
      await b.query<{ n: number | string }>(
        store,
        `SELECT count(*) AS n FROM ${table} WHERE run_id = '${runId}'`,
      )
    ).map((r) => Number(r.n))[0];

  beforeEach(async () => {
    store = await b.open();
  });

  it('removes the runs ended before the time, with their records, and keeps the others', async () => {
    await withRecords('old-1', { status: 'succeeded', endedAt: '2026-08-02T00:00:00.000Z' });
    await withRecords('old-2', { status: 'failed', endedAt: '2026-08-03T00:00:00.000Z' });
    await withRecords('old-3', { status: 'cancelled', endedAt: '2026-08-04T00:00:00.000Z' });
    await withRecords('recent', { status: 'succeeded', endedAt: RECENT });
    // Started long ago, still running (a wait of weeks): never removed.
    await withRecords('running', {});
    // The console keeps the superseded entries of an ended run it paged through.
    await store.latestAmong('old-1', []);
    expect(await count('ledger_superseded_runs', 'old-1'), 'old-1 grouped').to.equal(1);
    expect(await count('ledger_superseded', 'old-1'), 'its retried entry').to.equal(1);

    // Two at a time, oldest first.
    expect(await store.pruneEnded(CUTOFF, 2)).to.deep.include({ runs: 2, ledgerEntries: 4 });
    expect(await store.getRun('old-1')).to.equal(undefined);
    expect(await store.getRun('old-2')).to.equal(undefined);
    expect((await store.getRun('old-3'))?.status).to.equal('cancelled');
    expect(await store.pruneEnded(CUTOFF, 2)).to.deep.include({ runs: 1 });
    expect(await store.pruneEnded(CUTOFF, 2)).to.deep.include({ runs: 0, ledgerEntries: 0 });

    for (const gone of ['old-1', 'old-2', 'old-3']) {
      for (const table of [
        'run_steps',
        'step_items',
        'ledger',
        'ledger_superseded',
        'ledger_superseded_runs',
      ])
        expect(await count(table, gone), `${table} of ${gone}`).to.equal(0);
      expect(await store.deviceResults(gone)).to.deep.equal([]);
    }
    for (const kept of ['recent', 'running']) {
      expect(await store.getRun(kept), kept).not.to.equal(undefined);
      expect(await count('run_steps', kept)).to.equal(1);
      expect(await count('step_items', kept)).to.equal(1);
      expect((await store.deviceResults(kept)).map((r) => r.outcome)).to.deep.equal([
        'succeeded',
        'succeeded',
      ]);
    }
    expect((await store.listRuns()).map((r) => r.id).sort()).to.deep.equal(['recent', 'running']);
  });

  it('keeps a backfill of a fire its schedule has not passed, until it has', async () => {
    const night = (id: string, schedule: string, at: string, reason = 'backfill') =>
      withRecords(id, {
        status: 'succeeded',
        endedAt: '2026-08-02T00:00:00.000Z',
        trigger: { type: 'schedule', schedule, scheduledAt: at, reason },
      });
    // The daemon of `nightly` stopped after its fire of Jul 30; two nights after it were run by hand.
    await store.recordFire('nightly#UTC#0 2 * * *', '2026-07-30T02:00:00.000Z');
    await night('ahead', 'nightly#UTC#0 2 * * *', '2026-07-31T02:00:00.000Z');
    await night('passed', 'nightly#UTC#0 2 * * *', '2026-07-29T02:00:00.000Z');
    // A schedule no daemon ever started: at its first start it makes up nothing.
    await night('unknown', 'other#UTC#0 2 * * *', '2026-07-31T02:00:00.000Z');
    await night('missed', 'nightly#UTC#0 2 * * *', '2026-07-31T02:00:00.000Z', 'missed');
    await withRecords('manual', { status: 'succeeded', endedAt: '2026-08-02T00:00:00.000Z' });

    expect(await store.pruneEnded(CUTOFF, 100)).to.deep.include({ runs: 4 });
    expect((await store.listRuns()).map((r) => r.id)).to.deep.equal(['ahead']);
    // The daemon caught up past that night: the backfill goes as any run.
    await store.recordFire('nightly#UTC#0 2 * * *', '2026-08-01T02:00:00.000Z');
    expect(await store.pruneEnded(CUTOFF, 100)).to.deep.include({ runs: 1 });
    expect(await store.listRuns()).to.deep.equal([]);
  });

  it('removes the callbacks processed before the time, never one still to process', async () => {
    const stored = (await store.appendInbox('me', [
      { ...message('old-done'), receivedAt: OLD },
      { ...message('old-pending'), receivedAt: OLD },
      { ...message('recent-done'), receivedAt: RECENT },
    ])) as number[];
    await store.completeInbox([
      { eventId: stored[0]!, runs: [] },
      { eventId: stored[2]!, runs: [] },
    ]);
    expect(await store.pruneEnded(CUTOFF, 100)).to.deep.equal({
      runs: 0,
      ledgerEntries: 0,
      callbacks: 1,
      versions: 0,
    });
    expect((await store.pendingInbox('me', 10)).map((e) => e.id)).to.deep.equal([stored[1]]);
    expect((await store.recentInbox(10)).map((e) => e.id).sort()).to.deep.equal(
      [stored[1], stored[2]].sort(),
    );
    expect(await store.pruneEnded(CUTOFF, 100)).to.deep.equal({
      runs: 0,
      ledgerEntries: 0,
      callbacks: 0,
      versions: 0,
    });
  });

  it('removes the playbook versions saved before the time that no run names any more', async () => {
    for (const v of ['v-old', 'v-running', 'v-unused', 'v-again'])
      await store.savePlaybookVersion(v, `{"name":"${v}"}`);
    store.createRun(run('old', { version: 'v-old', status: 'succeeded', endedAt: OLD }));
    store.createRun(run('running', { version: 'v-running' }));
    await store.durable();
    const savedAt = (version: string, at: string) =>
      b.query(
        store,
        `UPDATE playbook_versions SET saved_at = '${at}' WHERE version = '${version}' RETURNING version`,
      );
    // Saved after the time: kept, whether a run names it or not.
    expect(await store.pruneEnded(CUTOFF, 100)).to.deep.include({ runs: 1, versions: 0 });
    expect(await store.playbookVersion('v-old')).to.equal('{"name":"v-old"}');
    // Saved before it: the run that named v-old is gone, so v-old and v-unused go; v-running stays with its run.
    for (const v of ['v-old', 'v-running', 'v-unused']) await savedAt(v, OLD);
    expect(await store.pruneEnded(CUTOFF, 100)).to.deep.include({ runs: 0, versions: 2 });
    expect(await store.playbookVersion('v-old')).to.equal(undefined);
    expect(await store.playbookVersion('v-unused')).to.equal(undefined);
    expect(await store.playbookVersion('v-running')).to.equal('{"name":"v-running"}');
    // A version saved again (a run about to be created of it) hours later moves its time; a prune of everything
    // before now leaves it, and what was saved in the last two hours.
    const hoursAgo = (h: number) => new Date(Date.now() - h * 3_600_000).toISOString();
    await savedAt('v-again', hoursAgo(3));
    await store.savePlaybookVersion('v-again', '{"name":"v-again"}');
    await store.savePlaybookVersion('v-recent', '{}');
    await store.durable();
    expect(await store.pruneEnded(new Date().toISOString(), 100)).to.deep.include({ versions: 0 });
    expect(await store.playbookVersion('v-again')).to.equal('{"name":"v-again"}');
    await savedAt('v-again', hoursAgo(3));
    expect(await store.pruneEnded(new Date().toISOString(), 100)).to.deep.include({ versions: 1 });
    expect(await store.playbookVersion('v-again')).to.equal(undefined);
    expect(await store.playbookVersion('v-recent')).to.equal('{}');
  });
});
