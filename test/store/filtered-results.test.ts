/**
 * The device results of a run that `runs show --devices` and the CSVs of a run's devices (`runs show --csv`, the
 * console's download) read, filtered (store/device-filter.ts filteredResults), on every backend. They read every
 * result of the run and dropped those the filter did not keep: the few failures of a million-device run cost a
 * read of the million. A filter by outcome, error type or device now reads the entries that hold such results,
 * with the same rows as before, each with what its step returned.
 */
import { expect } from 'chai';
import { filteredResults } from '../../src/store/device-filter.js';
import type { EntryFilter, LedgerRow, RunRecord, Store } from '../../src/store/store.js';
import { forEachBackend } from './backends.js';
import { group, imei, imeis, MISS, run } from './fixtures.js';

const AT = '2026-11-23T10:00:00.000Z';
const located = (n: number) => ({ latitude: 25 + n, longitude: -121, cached: n % 2 === 0 });

/** The rows of `filteredResults`, as `step/device/outcome/type/data`. */
async function rows(store: Store, r: RunRecord, filter: EntryFilter | undefined): Promise<string[]> {
  const out: string[] = [];
  for await (const page of filteredResults(store, r, filter)) out.push(...page.map(text));
  return out;
}

const text = (r: LedgerRow) =>
  `${r.step}/${r.deviceId}/${r.outcome}/${r.errorType ?? ''}/${r.data ? JSON.stringify(r.data) : ''}`;

forEachBackend("a run's device results, filtered", (b) => {
  let store: Store;
  let report: RunRecord;

  beforeEach(async () => {
    store = await b.open();
    store.createRun(run('r1', { status: 'succeeded' }));
    // 50 entries of 20 located devices; in the last, 2 missed, then located on a retry, and 1 refused.
    for (let e = 0; e < 50; e++) {
      const ids = imeis(e * 20, e * 20 + 20);
      store.recordDevices('r1', 'report', [group(ids, { data: ids.map((_, n) => located(n)) })], AT);
    }
    store.recordDevices(
      'r1',
      'report',
      [
        group(imeis(1000, 1002), { outcome: 'failed', errorType: MISS, errorClass: 'remediable' }),
        group([imei(1002)], {
          outcome: 'failed',
          errorType: 'SVC CONSENT CHECK FAILED',
          errorClass: 'permanent',
        }),
      ],
      AT,
    );
    store.recordDevices(
      'r1',
      'report',
      [group(imeis(1000, 1002), { attempts: 2, data: [located(0), located(1)] })],
      AT,
    );
    store.recordDevices('r1', 'suspend', [group(imeis(0, 3), { requestId: 'req-1' })], AT);
    await store.durable();
    report = (await store.getRun('r1')) as RunRecord;
  });

  it('gives the rows every filter keeps of the whole read, with what each step returned', async () => {
    const all = await rows(store, report, undefined);
    expect(all).to.have.length(1003 + 3);
    const filters: EntryFilter[] = [
      { outcome: 'failed' },
      { errorType: MISS },
      { errorType: 'SVC CONSENT CHECK FAILED' },
      { outcome: 'succeeded', step: 'report' },
      { device: imei(1001).slice(-5) },
      { device: imei(2).slice(-6), step: 'suspend' },
      { outcome: 'skipped' },
    ];
    for (const f of filters) {
      const want = all.filter((line) => {
        const [step, device, outcome, type] = line.split('/');
        return (
          (f.step === undefined || step === f.step) &&
          (f.outcome === undefined || outcome === f.outcome) &&
          (f.errorType === undefined || type === f.errorType) &&
          (f.device === undefined || (device as string).includes(f.device))
        );
      });
      expect(await rows(store, report, f), JSON.stringify(f)).to.deep.equal(want);
    }
    expect(await rows(store, report, { errorType: 'SVC CONSENT CHECK FAILED' })).to.deep.equal([
      `report/${imei(1002)}/failed/SVC CONSENT CHECK FAILED/`,
    ]);
    expect(
      await rows(store, report, { device: imei(1001) }),
      'the retry counts, with its location',
    ).to.deep.equal([`report/${imei(1001)}/succeeded//${JSON.stringify(located(1))}`]);
  });

  it('reads the entries that hold the results of an error type, not the run', async () => {
    let read = 0;
    let whole = 0;
    const entries = store.ledgerEntries.bind(store);
    store.ledgerEntries = async (...args) => {
      const found = await entries(...args);
      read += found.length;
      return found;
    };
    const each = store.eachDeviceResult.bind(store);
    store.eachDeviceResult = (...args) => {
      whole++;
      return each(...args);
    };
    expect(await rows(store, report, { errorType: 'SVC CONSENT CHECK FAILED' })).to.have.length(1);
    expect({ read, whole }, 'entries read, whole reads').to.deep.equal({ read: 1, whole: 0 });
    read = 0;
    expect(await rows(store, report, { step: 'suspend' })).to.have.length(3);
    expect({ read, whole }, 'by step only: the step read whole').to.deep.equal({ read: 0, whole: 1 });
    // A read writes nothing: the ended run is not grouped (a pass over all its devices, kept in the store).
    expect(
      await b.query(store, 'SELECT CAST(count(*) AS INTEGER) AS n FROM ledger_superseded'),
    ).to.deep.equal([{ n: 0 }]);
  });
});
