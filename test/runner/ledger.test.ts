/**
 * The per-device ledger as later steps and runs use it: `ledger.query` (the devices that failed with a given
 * type in the last run of this playbook) and `report.write` (the per-device results as CSV or JSON).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { engineSettings } from '../../src/actions/settings.js';
import type { Client } from '../../src/api/client.js';
import type { Emulator } from '../../src/emulator/index.js';
import { systemClock } from '../../src/clock.js';
import { runPlaybook } from '../../src/runner/runner.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import type { LedgerRow, RunSummary } from '../../src/store/store.js';
import { allRows } from '../store/fixtures.js';
import {
  calls,
  clientFor,
  emulator,
  interruptedRun,
  memoryStore,
  playbook,
  setFaults,
  spy,
  type Json,
  type SpiedCall,
} from './helpers.js';
import { tempDir } from '../helpers/temp.js';

const MISS = 'SVC CACHE UNAVAILABLE';

/** A nightly report without the per-device retry: its cache misses stay failed in the ledger. */
const NIGHTLY = `
version: 1
name: nightly
on: { manual: true }
inputs:
  account: { type: string, required: true }
steps:
  - id: devices
    uses: devices.list
    with: { accountName: \${{ inputs.account }} }
  - id: report
    uses: location.createReport
    with: { accountName: \${{ inputs.account }}, deviceList: \${{ steps.devices.items }}, cacheMode: "0" }
    wait: { for: completion }
`;

/** The next morning: only the devices that missed the cache in the last nightly run, at cacheMode 1. */
const RETRY = `
version: 1
name: nightly-retry
on: { manual: true }
inputs:
  account: { type: string, required: true }
steps:
  - id: missed
    uses: ledger.query
    with: { playbook: nightly, step: report, error: ${MISS} }
  - id: again
    if: \${{ steps.missed.output.count > 0 }}
    uses: location.createReport
    with:
      accountName: \${{ inputs.account }}
      deviceList: \${{ steps.missed.items }}
      cacheMode: "1"
`;

describe('runner: the ledger, ledger.query and report.write', function () {
  this.timeout(20_000);
  let emu: Emulator;
  let client: Client;
  let store: SqliteStore;
  let account: string;
  let sent: SpiedCall[];

  before(async () => {
    emu = await emulator({ devicesPerAccount: 400, timeScale: 600 });
    account = emu.defaults.accounts[0]!;
    await setFaults(emu, { deviceErrors: { [MISS]: 0.05 } });
    client = clientFor(emu);
    sent = spy(client);
    store = memoryStore();
  });
  after(async () => {
    await store.close();
    await client.close();
    await emu.close();
  });

  const missesOf = async (s: RunSummary): Promise<LedgerRow[]> =>
    (await store.deviceResults(s.runId, 'report')).filter((r) => r.errorType === MISS);

  it('ledger.query returns the devices that failed with a type in the last run, and a step retries only them', async () => {
    const night1 = await runPlaybook(playbook(NIGHTLY), {
      client,
      store,
      inputs: { account },
      pollIntervalMs: 50,
    });
    const night2 = await runPlaybook(playbook(NIGHTLY), {
      client,
      store,
      inputs: { account },
      pollIntervalMs: 50,
    });
    expect(night1.status, night1.error).to.equal('succeeded');
    expect(night2.status, night2.error).to.equal('succeeded');
    const last = await missesOf(night2);
    expect(last.length).to.be.greaterThan(5);
    expect(last.every((r) => r.outcome === 'failed' && r.errorClass === 'remediable')).to.equal(true);
    // Each report draws its misses anew: the two nights differ, so "the last run" is a real choice.
    expect((await missesOf(night1)).map((r) => r.deviceId)).not.to.deep.equal(last.map((r) => r.deviceId));
    // The summary counts what the ledger holds.
    expect(night2.devices.byError[MISS]).to.equal(last.length);

    sent.length = 0;
    const morning = await runPlaybook(playbook(RETRY), { client, store, inputs: { account } });
    expect(morning.status, morning.error).to.equal('succeeded');
    const out = (await store.loadSteps(morning.runId)).get('missed') as {
      output: { count: number; devices: Json[] };
    };
    expect(out.output.count).to.equal(last.length);
    expect(out.output.devices.map((d) => d.id).sort()).to.deep.equal(last.map((r) => r.deviceId).sort());
    for (const d of out.output.devices)
      expect(d).to.include({ outcome: 'failed', error: MISS, runId: night2.runId });
    // The retry report named exactly those devices, once each.
    const again = sent.filter((c) => c.action === 'location.createReport');
    expect(again).to.have.length(1);
    expect(again[0]!.input.cacheMode).to.equal('1');
    const ids = (again[0]!.input.deviceList as { id: string }[]).map((d) => d.id);
    expect(ids.sort()).to.deep.equal(last.map((r) => r.deviceId).sort());
  });

  it('ledger.query items are the same devices when its run is resumed after a restart', async () => {
    const pb = playbook(`
version: 1
name: nightly-retry-later
on: { manual: true }
inputs:
  account: { type: string, required: true }
steps:
  - id: missed
    uses: ledger.query
    with: { playbook: nightly, step: report, error: ${MISS} }
  - id: pause
    wait: 30s
  - id: again
    uses: location.createReport
    with: { accountName: \${{ inputs.account }}, deviceList: \${{ steps.missed.items }}, cacheMode: "1" }
`);
    const [night] = await store.listRuns({ playbook: 'nightly', limit: 1 });
    const misses = (await store.deviceResults(night!.id, 'report')).filter((r) => r.errorType === MISS);
    expect(misses.length, 'misses of the last nightly run').to.be.greaterThan(0);
    await store.createRun({
      id: 'later',
      playbook: pb.name,
      status: 'running',
      trigger: { type: 'manual' },
      inputs: { account },
      startedAt: new Date().toISOString(),
    });
    await interruptedRun(pb, { client, store, runId: 'later', inputs: { account } }, async () =>
      (await store.loadSteps('later')).has('missed'),
    );
    sent.length = 0;
    const s = await runPlaybook(pb, {
      client,
      store,
      runId: 'later',
      inputs: { account },
      pollIntervalMs: 50,
      // The wait is over by the time the run is resumed.
      clock: { ...systemClock, now: () => Date.now() + 60_000 },
    });
    expect(s.status, s.error).to.equal('succeeded');
    const again = sent.filter((c) => c.action === 'location.createReport');
    expect(again).to.have.length(1);
    const ids = (again[0]!.input.deviceList as { id: string }[]).map((d) => d.id);
    expect(ids.sort()).to.deep.equal(misses.map((r) => r.deviceId).sort());
  });

  it('ledger.query over the last two runs of a playbook returns both, and this run never', async () => {
    const [newer, older] = await store.listRuns({ playbook: 'nightly', limit: 2 });
    expect(older, 'two nightly runs').not.to.equal(undefined);
    const s = await runPlaybook(
      playbook(`
version: 1
name: nightly
on: { manual: true }
steps:
  - id: missed
    uses: ledger.query
    with: { step: report, error: [${MISS}], outcome: failed, runs: 2 }
`),
      { client, store },
    );
    expect(s.status, s.error).to.equal('succeeded');
    const out = (await store.loadSteps(s.runId)).get('missed') as {
      output: { count: number; devices: Json[] };
    };
    const expected = [
      ...(await store.deviceResults(older!.id, 'report')),
      ...(await store.deviceResults(newer!.id, 'report')),
    ]
      .filter((r) => r.errorType === MISS)
      .map((r) => `${r.runId}/${r.deviceId}`)
      .sort();
    expect(out.output.devices.map((d) => `${String(d.runId)}/${String(d.id)}`).sort()).to.deep.equal(
      expected,
    );
    expect(out.output.count).to.equal(expected.length);
  });

  it('ledger.query `since` takes a duration whole (sent as `86400s`), and fails on a text that is none', async () => {
    const window = (since: string) =>
      playbook(`
version: 1
name: nightly
on: { manual: true }
inputs:
  since: { type: string }
steps:
  - id: missed
    uses: ledger.query
    with: { step: report, error: ${MISS}, runs: 2, since: ${since} }
`);
    const [newer, older] = await store.listRuns({ playbook: 'nightly', limit: 2 });
    const expected = [
      ...(await store.deviceResults(older!.id, 'report')),
      ...(await store.deviceResults(newer!.id, 'report')),
    ].filter((r) => r.errorType === MISS);
    const whole = await runPlaybook(window('${{ duration("24h") }}'), { client, store });
    expect(whole.status, whole.error).to.equal('succeeded');
    const out = (await store.loadSteps(whole.runId)).get('missed') as { output: { count: number } };
    expect(out.output.count).to.equal(expected.length);
    // Not a duration: the step fails, where it read every run as if no `since` were given.
    const none = await runPlaybook(window('${{ inputs.since }}'), {
      client,
      store,
      inputs: { since: 'a day' },
    });
    expect(none.status).to.equal('failed');
    const step = (await store.loadSteps(none.runId)).get('missed') as { status: string; error: string };
    expect(step.status).to.equal('failed');
    expect(step.error).to.include('invalid input').and.include('since "a day" is not a duration');
  });

  it('report.write to a directory that cannot be made fails its step at once, with the reason', async () => {
    const pb = playbook(`
version: 1
name: write-nowhere
on: { manual: true }
steps:
  - id: out
    uses: report.write
    with: { path: report.csv }
`);
    // A reports directory below /proc: it cannot be made.
    const engine = engineSettings({ reportsDir: '/proc/fleetbook-missing' });
    const s = await runPlaybook(pb, { client, store, engine });
    expect(s.status).to.equal('failed');
    expect(s.error).to.match(
      /^step `out` failed: ENOENT: no such file or directory, mkdir '\/proc\/fleetbook-missing'/,
    );
  });

  it('report.write writes the per-device results as CSV and as JSON', async () => {
    const tmp = tempDir('fleetbook-ledger-');
    const pb = playbook(`
version: 1
name: write-reports
on: { manual: true }
inputs:
  account: { type: string, required: true }
  dir: { type: string, required: true }
steps:
  - id: devices
    uses: devices.list
    with: { accountName: \${{ inputs.account }} }
  - id: report
    uses: location.createReport
    with: { accountName: \${{ inputs.account }}, deviceList: \${{ steps.devices.items }}, cacheMode: "0" }
    devices:
      ignore: [SVC DEVICE TYPE CHECK FAILED]
    wait: { for: completion }
  - id: csv
    uses: report.write
    with: { path: "\${{ inputs.dir }}/\${{ run.date }}-locations.csv", step: report }
  - id: json
    uses: report.write
    with: { path: "\${{ inputs.dir }}/locations.json", step: report }
`);
    // Paths are relative to the reports directory: `dir` is a directory inside it.
    const s = await runPlaybook(pb, {
      client,
      store,
      inputs: { account, dir: 'nightly' },
      pollIntervalMs: 50,
      engine: engineSettings({ reportsDir: tmp }),
    });
    expect(s.status, s.error).to.equal('succeeded');
    // The rows in the order the results came, each device once at its latest: the ledger read whole, sorted.
    const rows = await allRows(store.eachDeviceResult(s.runId, 'report'));
    expect([...rows].sort((a, b) => a.deviceId.localeCompare(b.deviceId))).to.deep.equal(
      await store.deviceResults(s.runId, 'report'),
    );
    expect(rows).to.have.length(400);
    expect(rows.some((r) => r.outcome === 'skipped')).to.equal(true);
    expect(rows.some((r) => r.outcome === 'failed')).to.equal(true);

    const text = await readFile(join(tmp, 'nightly', 'locations.json'), 'utf8');
    const json = JSON.parse(text) as Record<string, unknown>[];
    // Each device's data (its location) are fields of its row, beside the ledger's.
    expect(json).to.deep.equal(rows.map(({ data, ...r }) => ({ ...r, ...data })));
    expect(json.some((r) => typeof r.latitude === 'number')).to.equal(true);

    const csv = (await readFile(join(tmp, 'nightly', `${s.startedAt.slice(0, 10)}-locations.csv`), 'utf8'))
      .trimEnd()
      .split('\n');
    expect(csv[0]).to.equal(
      'runId,step,deviceId,kind,outcome,errorType,errorClass,attempts,at,requestId,latitude,longitude,radius,time,cached',
    );
    expect(csv).to.have.length(rows.length + 1);
    const parsed = csv.slice(1).map((line) => line.split(','));
    expect(parsed.map((c) => [c[2], c[4], c[5] || undefined, Number(c[7])])).to.deep.equal(
      rows.map((r) => [r.deviceId, r.outcome, r.errorType, r.attempts]),
    );
    // The summary of the step agrees with the files.
    const byOutcome = (o: string) => rows.filter((r) => r.outcome === o).length;
    expect(s.steps.find((x) => x.id === 'report')?.devices).to.include({
      total: 400,
      succeeded: byOutcome('succeeded'),
      failed: byOutcome('failed'),
      skipped: byOutcome('skipped'),
    });
    // Writing reports calls nothing on the service.
    expect((await calls(emu)).devices).to.deep.equal({});
  });
});
