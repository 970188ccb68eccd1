/**
 * Retention keeps a backfill (`fleetbook run --scheduled-at`) of a fire its schedule has not passed, however long
 * ago it ended: the record that a daemon catching up must not make that night up again. A schedule is known by its
 * key (playbook, time zone, cron): once its cron or time zone is edited, or its playbook removed, no schedule will
 * pass that fire, and the backfill was kept for ever. Each prune pass that knows the schedules loaded records
 * them (recordLoaded); given a time, a backfill of a schedule not recorded loaded since is pruned as any run;
 * without it (`fleetbook store prune`) it is kept.
 */
import { expect } from 'chai';
import type { Store } from '../../src/store/store.js';
import { forEachBackend } from './backends.js';
import { run } from './fixtures.js';

const CUTOFF = '2026-09-01T00:00:00.000Z';
const NIGHTLY = 'nightly#UTC#0 2 * * *';
/** The same playbook's schedule before its cron was edited. */
const EDITED = 'nightly#UTC#0 1 * * *';
/** The schedule of a playbook since removed. */
const REMOVED = 'gone#UTC#0 2 * * *';

forEachBackend('retention: a backfill of a schedule no longer loaded', (b) => {
  let store: Store;
  beforeEach(async () => {
    store = await b.open();
    for (const key of [NIGHTLY, EDITED, REMOVED]) await store.recordFire(key, '2026-07-30T02:00:00.000Z');
    for (const [id, schedule] of [
      ['nightly', NIGHTLY],
      ['edited', EDITED],
      ['removed', REMOVED],
    ] as const)
      store.createRun(
        run(id, {
          status: 'succeeded',
          startedAt: '2026-08-01T00:00:00.000Z',
          endedAt: '2026-08-02T00:00:00.000Z',
          // A night after the last fire its schedule recorded: ahead of it.
          trigger: {
            type: 'schedule',
            schedule,
            scheduledAt: '2026-07-31T02:00:00.000Z',
            reason: 'backfill',
          },
        }),
      );
    // Every schedule recorded loaded on August 1st, the one still loaded again on the 10th.
    await store.recordLoaded([], '2026-08-01T00:00:00.000Z');
    await store.recordLoaded([NIGHTLY, 'other#UTC#0 3 * * *'], '2026-08-10T00:00:00.000Z');
    await store.durable();
  });
  const left = async () => (await store.listRuns()).map((r) => r.id).sort();

  it('prunes a backfill whose schedule was not recorded loaded since the time, and keeps that of one loaded', async () => {
    expect(await store.pruneEnded(CUTOFF, 100, '2026-08-05T00:00:00.000Z')).to.deep.include({ runs: 2 });
    expect(await left()).to.deep.equal(['nightly']);
  });

  it('keeps a backfill whose schedule was never recorded loaded', async () => {
    await store.recordFire('new#UTC#0 2 * * *', '2026-07-30T02:00:00.000Z');
    store.createRun(
      run('new', {
        status: 'succeeded',
        startedAt: '2026-08-01T00:00:00.000Z',
        endedAt: '2026-08-02T00:00:00.000Z',
        trigger: {
          type: 'schedule',
          schedule: 'new#UTC#0 2 * * *',
          scheduledAt: '2026-07-31T02:00:00.000Z',
          reason: 'backfill',
        },
      }),
    );
    await store.durable();
    expect(await store.pruneEnded(CUTOFF, 100, '2026-08-05T00:00:00.000Z')).to.deep.include({ runs: 2 });
    expect(await left()).to.deep.equal(['new', 'nightly']);
  });

  it('keeps every backfill ahead of its schedule when the schedules loaded are not known', async () => {
    expect(await store.pruneEnded(CUTOFF, 100)).to.deep.include({ runs: 0 });
    expect(await left()).to.deep.equal(['edited', 'nightly', 'removed']);
  });

  it('prunes them all when none was recorded loaded since the time', async () => {
    expect(await store.pruneEnded(CUTOFF, 100, '2026-08-11T00:00:00.000Z')).to.deep.include({ runs: 3 });
    expect(await left()).to.deep.equal([]);
  });
});
