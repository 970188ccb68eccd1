/**
 * The shipped nightly location report (playbooks/nightly-location-report.yaml), run against the emulator over
 * loopback: its CSV has one row per listed device, with that device's location (latitude, longitude, radius,
 * time, cached) or its error type and class, and every cell is what the emulator answered for the device. The
 * emulator's answer is read independently, through a second client, from the very reports the run created.
 *
 * The bug: the report wrote only outcomes and error types, so a "location report" had no location in it.
 */
import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { engineSettings } from '../../src/actions/settings.js';
import type { Client } from '../../src/api/client.js';
import { deviceErrorClass } from '../../src/api/device-errors.js';
import type { Emulator } from '../../src/emulator/index.js';
import { runPlaybook } from '../../src/runner/runner.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import { csvObjects } from '../helpers/csv.js';
import {
  accountDevices,
  clientFor,
  emulator,
  emulatorClock,
  imei,
  memoryStore,
  playbook,
  setFaults,
  spy,
  type Json,
  type SpiedCall,
} from './helpers.js';
import { tempDir } from '../helpers/temp.js';

const EXAMPLE = fileURLToPath(new URL('../../playbooks/nightly-location-report.yaml', import.meta.url));
const COLUMNS = [
  'deviceId',
  'kind',
  'outcome',
  'latitude',
  'longitude',
  'radius',
  'time',
  'cached',
  'errorType',
  'errorClass',
];

/** `YYYYMMDDhhmmss` (UTC, the service's form) as ISO 8601. */
const iso = (t: string) =>
  `${t.slice(0, 4)}-${t.slice(4, 6)}-${t.slice(6, 8)}T${t.slice(8, 10)}:${t.slice(10, 12)}:${t.slice(12, 14)}Z`;

describe('report.write: the nightly location report carries each device location', function () {
  this.timeout(60_000);
  let emu: Emulator;
  let client: Client;
  let reader: Client;
  let store: SqliteStore;
  let account: string;

  before(async () => {
    // The run's clock is the emulator's (timeScale 0: waiting moves it), as fleetbook's clock and the service's
    // agree in production: a fix is `cached` by its age at the time of the request.
    emu = await emulator({ devicesPerAccount: 1500, timeScale: 0 });
    account = emu.defaults.accounts[0]!;
    // Errors beside the emulator's own (devices that are not IoT, devices without a cached fix): some devices
    // fail for good, and are written with their error and no location.
    await setFaults(emu, { deviceErrors: { 'ABSENT SUBSCRIBER': 0.03, 'SYSTEM FAILURE': 0.02 } });
    client = clientFor(emu);
    reader = clientFor(emu);
    store = memoryStore();
  });
  after(async () => {
    await store.close();
    await client.close();
    await reader.close();
    await emu.close();
  });

  it('writes, for every listed device, its location or its error, as the emulator answered', async () => {
    const tmp = tempDir('fleetbook-location-report-carries-locations-');
    const sent: SpiedCall[] = spy(client);
    const summary = await runPlaybook(playbook(await readFile(EXAMPLE, 'utf8'), EXAMPLE), {
      client,
      store,
      inputs: { account },
      clock: emulatorClock(emu),
      // Simulated: the cacheMode 1 retry report completes in 3 simulated minutes.
      pollIntervalMs: 30_000,
      engine: engineSettings({ reportsDir: tmp }),
    });
    expect(summary.status, summary.error).to.equal('succeeded');

    // The emulator's answer for each device: the entry of the last report that named it (the cacheMode 1
    // retry for the devices that missed the cache, else the first report), read through another client.
    const creates = sent.filter((c) => c.action === 'location.createReport' && c.output);
    expect(creates.map((c) => c.input.cacheMode)).to.deep.equal(['0', '1']);
    const answer = new Map<string, { entry: Json; cacheMode: string }>();
    for (const c of creates) {
      for (const r of (c.output as Json).reports as Json[])
        for await (const e of reader.items('location.getReport', { accountName: account, txid: r.txid }))
          answer.set(String((e as Json).msid), { entry: e as Json, cacheMode: String(c.input.cacheMode) });
    }
    // Whether the emulator had a cached fix of each device: a cacheMode 1 answer came from the cache then.
    const seeded = new Map((await accountDevices(emu, account)).map((d) => [imei(d), d]));

    // The devices the example lists (active, with an IMEI), listed again by the other client.
    const ids: string[] = [];
    for await (const d of reader.items('devices.list', { accountName: account, currentState: 'active' }))
      ids.push(((d as Json).deviceIds as { id: string; kind: string }[]).find((x) => x.kind === 'imei')!.id);
    expect(ids.length).to.be.greaterThan(500);

    const text = await readFile(join(tmp, `${summary.startedAt.slice(0, 10)}-locations.csv`), 'utf8');
    const { header, rows } = csvObjects(text);
    expect(header).to.deep.equal(COLUMNS);
    expect(rows.map((r) => r.deviceId).sort()).to.deep.equal([...ids].sort());

    let located = 0;
    let failed = 0;
    let fromCache = 0;
    let fresh = 0;
    for (const row of rows) {
      const id = String(row.deviceId);
      const got = answer.get(id);
      expect(got, `the emulator located ${id}`).to.not.equal(undefined);
      const { entry, cacheMode } = got!;
      const error = (entry.error as Json).type as string | undefined;
      if (error) {
        failed++;
        expect(row, id).to.deep.equal({
          deviceId: id,
          kind: 'imei',
          outcome: 'failed',
          latitude: '',
          longitude: '',
          radius: '',
          time: '',
          cached: '',
          errorType: error,
          errorClass: deviceErrorClass(error),
        });
        continue;
      }
      located++;
      const pd = entry.pd as Json;
      const cached = cacheMode === '0' || seeded.get(id)!.hasCachedLocation;
      if (cached) fromCache++;
      else fresh++;
      // Numbers read back as the numbers the service sent; the time as ISO 8601.
      expect(Number(row.latitude), id).to.equal(Number(pd.x));
      expect(Number(row.longitude), id).to.equal(Number(pd.y));
      expect(row, id).to.deep.equal({
        deviceId: id,
        kind: 'imei',
        outcome: 'succeeded',
        latitude: row.latitude,
        longitude: row.longitude,
        radius: String(Number(pd.radius)),
        time: iso(String(pd.time)),
        cached: String(cached),
        errorType: '',
        errorClass: '',
      });
      expect(row.latitude).to.match(/^-?\d+(\.\d+)?$/);
      expect(row.longitude).to.match(/^-?\d+(\.\d+)?$/);
    }
    // Both kinds of row, and both kinds of fix, are in the report.
    expect(located).to.be.greaterThan(100);
    expect(failed).to.be.greaterThan(10);
    expect(fromCache).to.be.greaterThan(0);
    expect(fresh).to.be.greaterThan(0);
  });
});
