/**
 * A read of a run's every device on PostgreSQL (eachDeviceResult: `runs show --devices`, `report.write`,
 * `ledger.query`, a resumed run's limits) holds a connection of the store's pool, over one snapshot, until it
 * ends: seconds for a run of a million devices, longer when its reader is slow. Such reads never take the
 * connections the store's writes need: at most the pool's size less two are open at once, and the others wait.
 */
import { expect } from 'chai';
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/store.js';
import type { LedgerRow } from '../../src/store/store.js';
import { postgresUrl } from '../helpers/postgres.js';
import { imei, run } from './fixtures.js';

const AT = '2026-11-23T10:00:30.000Z';

/** `p`'s outcome, or `timeout` once `ms` have passed. */
const within = <T>(p: Promise<T>, ms: number) =>
  Promise.race([p, new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), ms))]);

describe("PostgreSQL: reads of a run's every device beside the writes", () => {
  let store: PostgresStore;

  beforeEach(async () => {
    store = await openPostgresStore(await postgresUrl(), { maxConnections: 4 });
    store.createRun(run('r'));
    store.recordDevices(
      'r',
      'suspend',
      [{ kind: 'imei', outcome: 'succeeded', attempts: 1, ids: [imei(0), imei(1)] }],
      AT,
    );
    await store.durable();
  });

  afterEach(async () => {
    await store.close();
  });

  it('keeps connections for the writes while reads are open, and serves the reads that waited after', async () => {
    // Four reads begun, each paused after its first page as a slow reader would be: on a pool of four.
    const reads = Array.from({ length: 4 }, () => store.eachDeviceResult('r')[Symbol.asyncIterator]());
    const first = reads.map((r) => r.next());
    const begun = await within(Promise.all(first.slice(0, 2)), 5_000);
    expect(begun, 'two reads at once').to.not.equal('timeout');
    // A write, and its commit, go through meanwhile.
    store.createRun(run('written'));
    expect(await within(store.durable(), 2_000), 'a commit while the reads are open').to.not.equal('timeout');
    expect((await store.getRun('written'))?.id).to.equal('written');
    // Each read that waited goes on once one before it ends, and reads the run whole.
    const rows = new Map<number, LedgerRow[]>();
    for (const [i, read] of reads.entries()) {
      const page = await first[i];
      rows.set(i, [...((page?.value as LedgerRow[] | undefined) ?? [])]);
      for (let more = await read.next(); !more.done; more = await read.next())
        rows.get(i)?.push(...more.value);
    }
    for (const r of rows.values()) expect(r.map((x) => x.deviceId)).to.deep.equal([imei(0), imei(1)]);
  });
});
