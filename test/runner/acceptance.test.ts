/**
 * The acceptance of the runner as a user meets it: playbooks in a directory of their own (not this
 * repository's), run by the built `fleetbook run --json` in a child process, against an emulator with faults
 * that this process started (FLEETBOOK_API_URL). The summaries the CLI prints agree with the emulator's own
 * counters, and no device is mutated twice. dist/ must be built (`npm test` builds it before mocha runs).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Emulator } from '../../src/emulator/index.js';
import type { LedgerRow, RunSummary } from '../../src/store/store.js';
import { emulatorEnv, fleetbook } from '../helpers/cli.js';
import { accountDevices, calls, emulator, imei, setFaults } from './helpers.js';
import { tempDir } from '../helpers/temp.js';
import { NIGHTLY_REPORT, SUSPEND_ACTIVE } from './playbooks.js';

describe('acceptance: playbooks from elsewhere, fleetbook run --json, an emulator with faults', function () {
  this.timeout(60_000);
  let emu: Emulator;
  let account: string;
  let dir: string;
  let env: Record<string, string>;

  before(async () => {
    // 600 simulated seconds a second: a report completes in well under a second.
    emu = await emulator({ devicesPerAccount: 1500, timeScale: 600 });
    account = emu.defaults.accounts[0]!;
    dir = tempDir('fleetbook-acceptance-');
    await writeFile(
      join(dir, 'suspend.yaml'),
      SUSPEND_ACTIVE({ name: 'outside-suspend', batchSize: 100, concurrency: 3 }),
    );
    await writeFile(
      join(dir, 'report.yaml'),
      NIGHTLY_REPORT({ name: 'outside-report', pollInterval: '100ms' }),
    );
    env = {
      ...emulatorEnv(emu),
      FLEETBOOK_STATE: join(dir, 'state.db'),
      FLEETBOOK_RATE: '200',
      FLEETBOOK_LOG_LEVEL: 'warn',
    };
  });
  after(async () => {
    await emu.close();
  });

  async function run(file: string): Promise<RunSummary> {
    const r = await fleetbook(['run', join(dir, file), '--json', '--input', `account=${account}`], env);
    expect(r.code, r.stderr).to.equal(0);
    return JSON.parse(r.stdout) as RunSummary;
  }

  async function ledger(runId: string): Promise<LedgerRow[]> {
    const r = await fleetbook(['runs', 'show', runId, '--devices', '--json'], env);
    expect(r.code, r.stderr).to.equal(0);
    return (JSON.parse(r.stdout) as { deviceResults: LedgerRow[] }).deviceResults;
  }

  it('suspends under 500s and 429s: every active device exactly once, the summary as the emulator counts', async () => {
    emu.reset({ devicesPerAccount: 1500 });
    const active = (await accountDevices(emu, account)).filter((d) => d.state === 'active').map(imei);
    expect(active.length).to.be.greaterThan(500);
    // 500s on 10 % of the requests, and 429s above 5 requests a second (the CLI's budget is 200).
    await setFaults(emu, { errorRate: 0.1, maxRequestsPerSecond: 5 });
    let summary: RunSummary;
    try {
      summary = await run('suspend.yaml');
    } finally {
      await setFaults(emu, {});
    }
    expect(summary.status, summary.error).to.equal('succeeded');

    const c = await calls(emu);
    const mutated = Object.entries(c.devices);
    expect(
      mutated.filter(([, m]) => m.length !== 1),
      'devices mutated more than once',
    ).to.deep.equal([]);
    expect(mutated.map(([id]) => id).sort()).to.deep.equal([...active].sort());
    const suspend = summary.steps.find((s) => s.id === 'suspend')!;
    expect(suspend.devices).to.deep.include({ total: active.length, succeeded: active.length, failed: 0 });
    expect(summary.devices.succeeded).to.equal(mutated.length);
    // The faults happened: the emulator refused some suspends (counted, not acted on), which were sent again.
    expect(c.actions['devices.suspend']).to.be.greaterThan(Math.ceil(active.length / 100));
    // The ledger the CLI shows says the same, device by device.
    const rows = (await ledger(summary.runId)).filter((r) => r.step === 'suspend');
    expect(rows.map((r) => r.deviceId).sort()).to.deep.equal([...active].sort());
    expect(rows.every((r) => r.outcome === 'succeeded')).to.equal(true);
  });

  it('reports with 5 % cache misses: the misses retried once at cacheMode 1, the counts as the ledger has them', async () => {
    emu.reset({ devicesPerAccount: 1500 });
    const imeis = (await accountDevices(emu, account)).map(imei);
    await setFaults(emu, { deviceErrors: { 'SVC CACHE UNAVAILABLE': 0.05 } });
    const summary = await run('report.yaml');
    await setFaults(emu, {});
    expect(summary.status, summary.error).to.equal('succeeded');

    const c = await calls(emu);
    expect(c.actions['location.createReport'], 'the report, then one retry of the misses').to.equal(2);
    expect(Object.keys(c.devices), 'a report mutates no device').to.have.length(0);
    const report = summary.steps.find((s) => s.id === 'report')!;
    const rows = (await ledger(summary.runId)).filter((r) => r.step === 'report');
    expect(rows).to.have.length(report.devices.total);
    expect(rows.map((r) => r.deviceId).sort()).to.deep.equal(
      [...new Set(rows.map((r) => r.deviceId))].sort(),
      'one row per device',
    );
    const count = (o: string) => rows.filter((r) => r.outcome === o).length;
    expect(report.devices).to.deep.include({
      succeeded: count('succeeded'),
      failed: count('failed'),
      skipped: count('skipped'),
    });
    // Every retried device was a miss at cacheMode 0 and was tried twice; none is still a miss.
    const retried = rows.filter((r) => r.attempts === 2);
    expect(retried.length, 'some devices missed the cache').to.be.greaterThan(0);
    expect(rows.filter((r) => r.errorType === 'SVC CACHE UNAVAILABLE')).to.deep.equal([]);
    expect(rows.every((r) => imeis.includes(r.deviceId))).to.equal(true);
    for (const [type, n] of Object.entries(report.devices.byError))
      expect(
        rows.filter((r) => r.errorType === type),
        type,
      ).to.have.length(n);
  });
});
