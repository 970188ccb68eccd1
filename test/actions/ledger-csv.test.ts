/**
 * A run's device results as CSV (`runs show --csv`, the console's download): the columns from a first read of the
 * rows, the rows from a second. A run still going records results between the two, and a result whose data has a
 * member the first read found in no row was written without it, as if the CSV were whole: a report whose first
 * batch had located no device yet lost every location that came after. Such a CSV now fails, saying why.
 */
import { expect } from 'chai';
import { ledgerCsv } from '../../src/actions/report-table.js';
import type { LedgerRow } from '../../src/store/store.js';

const AT = '2026-11-23T10:00:00.000Z';
const row = (deviceId: string, data?: Record<string, unknown>): LedgerRow => ({
  deviceId,
  runId: 'r1',
  step: 'report',
  kind: 'imei',
  outcome: data ? 'succeeded' : 'failed',
  ...(data ? {} : { errorType: 'SVC CACHE UNAVAILABLE' }),
  attempts: 1,
  ...(data ? { data } : {}),
  at: AT,
});

/** Rows that are `first` at the first read, `then` at every read after it. */
function reads(first: LedgerRow[], then: LedgerRow[]) {
  let n = 0;
  return async function* () {
    yield n++ === 0 ? first : then;
  };
}

async function csv(rows: () => AsyncIterable<LedgerRow[]>): Promise<string> {
  let out = '';
  for await (const chunk of ledgerCsv(rows)) out += chunk;
  return out;
}

describe('ledger CSV: a run that goes on between its two reads', () => {
  it('writes the rows of the second read under the columns of the first', async () => {
    const a = row('a', { latitude: 1, longitude: 2 });
    const text = await csv(reads([a], [a, row('b', { latitude: 3 }), row('c')]));
    expect(text.split('\n')).to.deep.equal([
      'runId,step,deviceId,kind,outcome,errorType,errorClass,attempts,at,requestId,latitude,longitude',
      `r1,report,a,imei,succeeded,,,1,${AT},,1,2`,
      `r1,report,b,imei,succeeded,,,1,${AT},,3,`,
      `r1,report,c,imei,failed,SVC CACHE UNAVAILABLE,,1,${AT},,,`,
      '',
    ]);
  });

  it('fails when a row read second has data the columns miss, rather than drop it', async () => {
    const miss = row('a');
    await csv(reads([miss], [miss, row('b', { latitude: 3, longitude: 4 })])).then(
      () => expect.fail('the CSV was written whole'),
      (e: Error) =>
        expect(e.message).to.equal(
          "the run went on while its CSV was written: b's result in step report, recorded since its columns were read, has `latitude`, which has no column; write the CSV again (once the run has ended, it is whole)",
        ),
    );
  });

  it('names a member called as a ledger column as its column does (data.<key>)', async () => {
    const a = row('a', { step: 'inner' });
    expect((await csv(reads([a], [a]))).split('\n')[0]).to.match(/,requestId,data\.step$/);
  });
});
