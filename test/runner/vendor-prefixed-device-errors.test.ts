/**
 * Spec 7.3: "The neutral prefix SVC stands for a vendor prefix in the source." The real service writes its
 * vendor's prefix where the spec writes SVC, and fleetbook matched per-device errors by exact string: against
 * it, `ACME CACHE UNAVAILABLE` was classed permanent and a `devices.retry` rule on `SVC CACHE UNAVAILABLE` never
 * matched. A location answer in a vendor's words, from a recording server (the emulator speaks SVC).
 */
import { expect } from 'chai';
import { createClient, type Client } from '../../src/api/client.js';
import { runPlaybook } from '../../src/runner/runner.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import { FAST_RATES, Recorder } from '../helpers/recorder.js';
import { memoryStore, playbook, type Json } from './helpers.js';

const ACC = '0000123456-00001';
const MISSED = '353456789012345';
const STILL = '353456789012347';
const ABSENT = '353456789012346';
const OTHER = '350000000000001';

const LOCATE = `
version: 1
name: locate
on: { manual: true }
steps:
  - id: locate
    uses: location.locate
    with:
      accountName: "${ACC}"
      deviceList:
        - { id: "${MISSED}", kind: imei }
        - { id: "${STILL}", kind: imei }
        - { id: "${ABSENT}", kind: imei }
        - { id: "${OTHER}", kind: imei }
      cacheMode: "0"
    devices:
      retry:
        - on: [SVC CACHE UNAVAILABLE]
          with: { cacheMode: "1" }
`;

describe('runner: a vendor prefix in place of SVC in per-device errors', () => {
  let rec: Recorder;
  let client: Client;
  let store: SqliteStore;
  before(async () => {
    rec = await Recorder.start();
    client = createClient({ baseUrl: rec.baseUrl, ...rec.credentials, rates: FAST_RATES });
    store = memoryStore();
  });
  after(async () => {
    await store.close();
    await client.close();
    await rec.close();
  });

  const failed = (msid: string, type: string) => ({
    msid,
    pd: {},
    error: { time: '20260105101500', type, info: 'from the service' },
  });

  it('is read as SVC for the 7.3 rows that start with it: retried at cacheMode 1, recorded by the spec name', async () => {
    rec.handle('POST /api/loc/v1/locations', (req) => {
      const { cacheMode, deviceList } = req.body as { cacheMode: string; deviceList: { id: string }[] };
      return {
        body: deviceList.map(({ id }) =>
          id === MISSED && cacheMode === '1'
            ? { msid: id, pd: { time: '20260105101500', x: '40.7', y: '-74.0', radius: '500', qos: true } }
            : id === MISSED || id === STILL
              ? failed(id, 'ACME CACHE UNAVAILABLE')
              : id === ABSENT
                ? failed(id, 'ACME DEVICE LOCATION DATA UNAVAILABLE')
                : // Not a row that starts with SVC: kept as sent.
                  failed(id, 'ACME SYSTEM FAILURE'),
        ),
      };
    });
    const run = await runPlaybook(playbook(LOCATE), { client, store });
    const sent = rec.requestsTo('/api/loc/v1/locations').map((r) => r.body as Json);
    expect(sent.map((b) => b.cacheMode)).to.deep.equal(['0', '1']);
    expect((sent[1]!.deviceList as Json[]).map((d) => d.id)).to.deep.equal([MISSED, STILL]);

    const rows = await store.deviceResults(run.runId, 'locate');
    const last = new Map(rows.map((r) => [r.deviceId, r]));
    expect(last.get(MISSED)).to.include({ outcome: 'succeeded', attempts: 2 });
    expect(last.get(STILL)).to.include({
      outcome: 'failed',
      errorType: 'SVC CACHE UNAVAILABLE',
      errorClass: 'remediable',
      attempts: 2,
    });
    expect(last.get(ABSENT)).to.include({
      outcome: 'failed',
      errorType: 'SVC DEVICE LOCATION DATA UNAVAILABLE',
      errorClass: 'transient',
    });
    expect(last.get(OTHER)).to.include({
      outcome: 'failed',
      errorType: 'ACME SYSTEM FAILURE',
      errorClass: 'permanent',
    });
    expect(run.devices.byError).to.deep.equal({
      'SVC CACHE UNAVAILABLE': 1,
      'SVC DEVICE LOCATION DATA UNAVAILABLE': 1,
      'ACME SYSTEM FAILURE': 1,
    });
  });
});
