/**
 * The daemon has the ledger of a large run grouped as soon as the run ends, so that the console's first look at
 * it finds it grouped: a run another process executes and ends (a `fleetbook run` on the same store, another
 * replica) is found at the next sweep; a small one is left to its first look.
 */
import { expect } from 'chai';
import { GROUP_AT, LargeRuns } from '../../src/daemon/large-runs.js';
import { silentLogger } from '../../src/log.js';
import { emptyCounts, type DeviceGroup, type RunSummary, type Store } from '../../src/store/store.js';
import { forEachBackend } from '../store/backends.js';
import { imei, run } from '../store/fixtures.js';

const AT = '2026-11-23T10:00:30.000Z';
const NOW = Date.parse('2026-11-23T11:00:00.000Z');
const group = (ids: string[], outcome: DeviceGroup['outcome']): DeviceGroup => ({
  kind: 'imei',
  outcome,
  attempts: 1,
  ids,
  ...(outcome === 'accepted' ? { requestId: 'req-1' } : {}),
});

/** A run of `n` devices, each accepted then confirmed (two results), ended by `store`. */
function suspendAll(store: Store, id: string, n: number): void {
  const ids = Array.from({ length: n }, (_, i) => imei(i));
  store.recordDevices(id, 'suspend', [group(ids, 'accepted')], AT);
  store.recordDevices(id, 'suspend', [group(ids, 'succeeded')], AT);
  const summary: RunSummary = {
    runId: id,
    playbook: 'pb',
    status: 'succeeded',
    startedAt: '2026-11-23T10:00:00.000Z',
    endedAt: AT,
    steps: [],
    devices: { ...emptyCounts(), total: n, succeeded: n },
  };
  store.updateRun(id, { status: 'succeeded', endedAt: AT, summary });
}

forEachBackend('the daemon groups the ledger of large runs', (b) => {
  afterEach(() => b.closeAll());

  const grouped = async (store: Store) =>
    (
      await b.query<{ run_id: string }>(store, 'SELECT run_id FROM ledger_superseded_runs ORDER BY run_id')
    ).map((r) => r.run_id);

  it('that another process ends, at the sweep after they ended; not the small ones', async () => {
    const daemon = await b.open();
    const other = await b.reopen(daemon);
    const large = new LargeRuns(daemon, silentLogger);
    other.createRun(run('run-large'));
    other.createRun(run('run-small'));
    await other.durable();
    await large.sweep(NOW);
    suspendAll(other, 'run-large', GROUP_AT);
    suspendAll(other, 'run-small', 10);
    await other.durable();
    expect(await grouped(daemon)).to.deep.equal([]);

    await large.sweep(NOW);
    expect(await grouped(daemon)).to.deep.equal(['run-large']);
    const rows = await b.query<{ n: number | string }>(
      daemon,
      "SELECT count(*) AS n FROM ledger_superseded WHERE run_id = 'run-large'",
    );
    // The accepted entry: every device of it confirmed after.
    expect(Number(rows[0]?.n)).to.equal(1);
    // The confirmed result is the one that counts, for every device.
    const latest = await daemon.latestAmong('run-large', [
      `suspend\0${imei(0)}`,
      `suspend\0${imei(GROUP_AT - 1)}`,
    ]);
    expect([...new Set(latest.values())]).to.have.length(1);
  });

  it('ended while the daemon was down, at its first sweep, once', async () => {
    const other = await b.open();
    other.createRun(run('run-large'));
    suspendAll(other, 'run-large', GROUP_AT);
    await other.durable();
    const daemon = await b.reopen(other);
    const large = new LargeRuns(daemon, silentLogger);
    await large.sweep(NOW);
    expect(await grouped(daemon)).to.deep.equal(['run-large']);
    await large.sweep(NOW);
    expect(await grouped(daemon)).to.deep.equal(['run-large']);
  });
});
