/**
 * Retention keeps a backfill (`fleetbook run --scheduled-at`) of a fire its schedule has not passed: the record
 * that a daemon catching up must not make that night up again. Once no schedule with its key is loaded (its cron
 * edited, its playbook removed), no schedule will pass that fire, and the backfill may go. It went at the first
 * prune of a process that did not have the key loaded: during a rolling deploy on PostgreSQL, a replica on newer
 * playbooks pruned the backfill that a replica still on the older ones counted on, and a playbook moved out of the
 * directory and back lost its backfill at once. Now each prune pass records the schedules its process has loaded,
 * and a backfill goes only once no pass has found its schedule loaded for a day (SCHEDULE_GONE_MS).
 *
 * Each pass is `pruneStore` at a time of the test's, with the keys a process has loaded.
 */
import { expect } from 'chai';
import { pruneStore, SCHEDULE_GONE_MS } from '../../src/store/retention.js';
import type { Store } from '../../src/store/store.js';
import { forEachBackend } from './backends.js';
import { run } from './fixtures.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;
/** The runs of the test ended 100 days before T; 30 days are kept. */
const T = Date.parse('2026-12-01T00:00:00.000Z');
const KEEP = 30 * DAY;
const NIGHTLY = 'nightly#UTC#0 2 * * *';
/** The same playbook's schedule once its cron is edited. */
const EDITED = 'nightly#UTC#0 1 * * *';

forEachBackend('retention: a backfill of a schedule no process has loaded for a day', (b) => {
  let store: Store;
  beforeEach(async () => {
    store = await b.open();
    await store.recordFire(NIGHTLY, '2026-08-20T02:00:00.000Z');
    store.createRun(
      run('backfill', {
        status: 'succeeded',
        startedAt: '2026-08-22T00:00:00.000Z',
        endedAt: '2026-08-23T00:00:00.000Z',
        // A night after the last fire its schedule recorded: ahead of it.
        trigger: {
          type: 'schedule',
          schedule: NIGHTLY,
          scheduledAt: '2026-08-21T02:00:00.000Z',
          reason: 'backfill',
        },
      }),
    );
    store.createRun(run('plain', { status: 'succeeded', endedAt: '2026-08-23T00:00:00.000Z' }));
    await store.durable();
  });
  const left = async () => (await store.listRuns()).map((r) => r.id).sort();
  const pass = (at: number, schedules?: readonly string[]) =>
    pruneStore(store, KEEP, { now: at, ...(schedules ? { schedules } : {}) });

  it('is a day', () => {
    expect(SCHEDULE_GONE_MS).to.equal(DAY);
  });

  it('is kept by a replica on newer playbooks while one on the older ones has its schedule loaded', async () => {
    // The replica still on the older playbooks prunes at T, the one on the newer playbooks (the cron edited) at
    // T + 10 minutes, and each again every hour: the old one's passes keep the backfill.
    await pass(T, [NIGHTLY]);
    expect(await left()).to.deep.equal(['backfill']);
    for (let h = 0; h < 30; h++) {
      await pass(T + h * HOUR + 10 * 60_000, [EDITED]);
      await pass(T + (h + 1) * HOUR, [NIGHTLY]);
    }
    expect(await left()).to.deep.equal(['backfill']);
    // The old replica is replaced: a day later the backfill goes, not before.
    const last = T + 30 * HOUR;
    await pass(last + DAY - 60_000, [EDITED]);
    expect(await left()).to.deep.equal(['backfill']);
    await pass(last + DAY + 60_000, [EDITED]);
    expect(await left()).to.deep.equal([]);
  });

  it('is kept when its playbook is moved out of the directory and back', async () => {
    await pass(T, [NIGHTLY]);
    await pass(T + HOUR, []);
    await pass(T + 2 * HOUR, []);
    await pass(T + 3 * HOUR, [NIGHTLY]);
    await pass(T + 3 * HOUR + DAY - 60_000, []);
    expect(await left()).to.deep.equal(['backfill']);
    await pass(T + 3 * HOUR + DAY + 60_000, []);
    expect(await left()).to.deep.equal([]);
  });

  it('is kept for a day from the first pass that knows the schedules, when none recorded its schedule before', async () => {
    // A store written before the schedules loaded were recorded, or a schedule only an older fleetbook fired.
    await pass(T, [EDITED]);
    expect(await left()).to.deep.equal(['backfill']);
    await pass(T + DAY - 60_000, [EDITED]);
    expect(await left()).to.deep.equal(['backfill']);
    await pass(T + DAY + 60_000, [EDITED]);
    expect(await left()).to.deep.equal([]);
  });

  it('is kept by a pass that does not know the schedules loaded, however long ago its schedule was', async () => {
    await pass(T, [NIGHTLY]);
    await pass(T + 10 * DAY);
    expect(await left()).to.deep.equal(['backfill']);
  });
});
