/**
 * The shipped nightly location report, as the docs teach it, on a 100,000-device account: `fleetbook run` in a
 * child process whose heap is capped well below what holding the fleet would take, its memory sampled. It
 * completes, and every listed device is in the ledger and in the report, once: with a few locations not in the
 * cache, and with none in it, when every device is asked for again at cacheMode 1.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Emulator } from '../../src/emulator/index.js';
import type { RunSummary } from '../../src/store/store.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { emulatorEnv, fleetbook } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { clientFor, emulator, setFaults } from './helpers.js';

const DEVICES = 100_000;
/**
 * The heap the run may use (MB). Before the items streamed through the store, this report ran out of a 48 MB
 * heap at 100,000 devices (report.write read the whole ledger); now it fits in 32 MB, as it would at a million.
 */
const HEAP_MB = 40;
/**
 * What `heapUsed` may show over the old space's cap: the young generation, which the cap does not bound (V8
 * fills the old space up to the cap before it collects it). Sampled peaks were 38-41 MB in clean runs, 44 MB on
 * a loaded machine; the run before streaming needed more than 48 MB of old space alone.
 */
const YOUNG_MB = 6;
/**
 * The heap (MB) of the report whose every device is asked for again: the list of the devices sent again, held in
 * memory before they went to the store, took 66 MB and ran out of 56; now 35, and 43 under the tests' coverage.
 */
const RETRY_HEAP_MB = 56;
/** The resident set (MB): the heap, Node's own, the modules, SQLite's page cache and the sockets. */
const RSS_MB = 200;
/**
 * The emulator's session lifetime (simulated seconds): a year. At the time scale of 3,600 the service's 20
 * minutes are a third of a second of real time, which a loaded machine can spend between a login and its use,
 * twice: the run's session would expire under it, a cost of the time scale, not of what this test checks.
 */
const SESSION = { sessionTtlSeconds: 365 * 24 * 3600 };

describe('runner: the nightly report of 100,000 devices in bounded memory', function () {
  this.timeout(300_000);
  let emu: Emulator;
  before(async () => {
    emu = await emulator({ devicesPerAccount: DEVICES, timeScale: 3600 });
    await setFaults(emu, SESSION);
  });
  after(() => emu.close());

  /** Runs the shipped report; checks its memory, and that every device is in the ledger and the report once. */
  async function reportOnce(heapMb = HEAP_MB): Promise<Map<string, string>> {
    const dir = tempDir('fb-memory-');
    const peakFile = join(dir, 'peak.json');
    const res = await fleetbook(
      [
        'run',
        'playbooks/nightly-location-report.yaml',
        '--json',
        '--input',
        `account=${emu.defaults.accounts[0]}`,
      ],
      {
        ...emulatorEnv(emu),
        FLEETBOOK_STATE: join(dir, 'state.db'),
        FLEETBOOK_REPORTS_DIR: join(dir, 'reports'),
        MEMORY_PEAK_FILE: peakFile,
      },
      [
        `--max-old-space-size=${heapMb}`,
        '--import',
        join(import.meta.dirname, '..', 'helpers', 'memory-peak.mjs'),
      ],
      undefined,
      240_000,
    );
    expect(res.code, res.stderr.slice(-2000)).to.equal(0);
    const peak = JSON.parse(readFileSync(peakFile, 'utf8')) as { rss: number; heapUsed: number };
    expect(peak.heapUsed / 2 ** 20, 'peak heap (MB)').to.be.below(heapMb + YOUNG_MB);
    expect(peak.rss / 2 ** 20, 'peak resident set (MB)').to.be.below(RSS_MB);

    const summary = JSON.parse(res.stdout) as RunSummary;
    expect(summary.status).to.equal('succeeded');
    // The account's active devices that have an IMEI, as another client lists them.
    const client = clientFor(emu);
    let listed = 0;
    try {
      for await (const d of client.items('devices.list', {
        accountName: emu.defaults.accounts[0]!,
        currentState: 'active',
      }))
        if ((d as { deviceIds: { kind: string }[] }).deviceIds.some((i) => i.kind.toLowerCase() === 'imei'))
          listed++;
    } finally {
      await client.close();
    }
    expect(listed).to.be.greaterThan(DEVICES * 0.8);
    expect(summary.steps.find((s) => s.id === 'report')!.devices.total).to.equal(listed);

    // Every listed device once in the ledger, and once in the report, with the ledger's outcome.
    const store = new SqliteStore(join(dir, 'state.db'));
    const ledger = new Map<string, string>();
    const errors = new Map<string, string>();
    try {
      expect((await store.loadSteps(summary.runId)).get('devices')).to.include({ storedItems: listed });
      for await (const page of store.eachDeviceResult(summary.runId, 'report'))
        for (const r of page) {
          ledger.set(r.deviceId, r.outcome);
          errors.set(r.deviceId, `${r.errorType ?? ''} ${r.attempts}`);
        }
    } finally {
      await store.close();
    }
    expect(ledger.size).to.equal(listed);
    const csv = readFileSync(join(dir, 'reports', `${summary.startedAt.slice(0, 10)}-locations.csv`), 'utf8')
      .trimEnd()
      .split('\n');
    expect(csv[0]).to.equal(
      'deviceId,kind,outcome,latitude,longitude,radius,time,cached,errorType,errorClass',
    );
    const rows = new Map(
      csv.slice(1).map((line) => [line.split(',')[0] as string, line.split(',')[2] as string]),
    );
    expect(csv.length - 1).to.equal(listed);
    expect(rows).to.deep.equal(ledger);
    return errors;
  }

  it('completes within the memory bound, every device in the ledger and the report once', async () => {
    const errors = await reportOnce();
    expect([...errors.values()].filter((e) => e.startsWith('SVC CACHE UNAVAILABLE'))).to.deep.equal([]);
  });

  it('holds no list of the devices it asks for again, when no location is in the cache', async () => {
    // At cacheMode 0 every device fails with SVC CACHE UNAVAILABLE: the whole fleet is asked for again.
    await setFaults(emu, { ...SESSION, deviceErrors: { 'SVC CACHE UNAVAILABLE': 1 } });
    try {
      const errors = [...(await reportOnce(RETRY_HEAP_MB)).values()];
      // Every device that could be located was, on its second attempt; none is left a cache miss.
      expect(errors.filter((e) => e === ' 2').length).to.be.greaterThan(DEVICES * 0.8);
      expect(errors.filter((e) => e.startsWith('SVC CACHE UNAVAILABLE'))).to.deep.equal([]);
    } finally {
      await setFaults(emu, SESSION);
    }
  });
});
