/**
 * A location report step that fails part-way counts the devices it recorded. Each page of a report's results
 * goes to the ledger as it comes; before, when a later pass failed (a retry pass's createReport answered 500,
 * which is not sent again), `steps.<id>.devices`, the step summary and the run summary read 0 while the ledger
 * held the first pass's results, on both paths: the list held in memory and the list streamed from the store.
 * Now they count what the ledger holds as each device's latest result: the devices done, and those whose retry
 * never went out, failed with their first attempt's error. The same after a resume that restores the failed step.
 */
import { expect } from 'chai';
import type { Clock } from '../../src/clock.js';
import { runPlaybook } from '../../src/runner/runner.js';
import type { RunOptions } from '../../src/runner/types.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import type { RunSummary } from '../../src/store/store.js';
import { allRows } from '../store/fixtures.js';
import {
  captureLogger,
  countOutcomes,
  emulatorClock,
  interruptedRun,
  memoryStore,
  onEmulator,
  playbook,
  setFaults,
  type LogLine,
  stepOf,
  unstepped,
} from './helpers.js';

/** The delay of the retry rule: the sleep at which the test turns the emulator's answers to server errors. */
const DELAY_MS = 2000;

/** The listing's items passed whole: the report reads them from the store, a batch at a time. */
const WHOLE = '"${{ steps.devices.items }}"';
/** The same devices, made a list in memory by an expression. */
const FILTERED = '"${{ steps.devices.items.filter(d, d.id != \\"\\") }}"';

/**
 * A listing, and a report of its devices whose cache misses (and absent subscribers) are sent again (`attempts`
 * in all): from a list in memory (`inMemory`), or streamed from the store.
 */
const REPORT = (o: {
  name: string;
  inMemory?: boolean;
  attempts?: number;
  after?: string;
  ignore?: string;
}) => `version: 1
name: ${o.name}
on: { manual: true }
inputs:
  account: { type: string, required: true }
steps:
  - id: devices
    uses: devices.list
    with: { accountName: "\${{ inputs.account }}", currentState: active }
    items: { kind: imei }
  - id: report
    uses: location.createReport
    with: { accountName: "\${{ inputs.account }}", deviceList: ${o.inMemory ? FILTERED : WHOLE}, cacheMode: "0" }
    devices:
      retry:
        - on: [SVC CACHE UNAVAILABLE, ABSENT SUBSCRIBER]
          with: { cacheMode: "1" }
          maxAttempts: ${o.attempts ?? 2}
          delay: 2s${o.ignore ? `\n      ignore: [${o.ignore}]` : ''}
    wait: { for: completion, timeout: 10m, pollInterval: 50ms }
    onError: continue${o.after ?? ''}
finally:
  - id: say
    uses: log
    with:
      message: "\${{ steps.report.status }}: \${{ steps.report.devices.succeeded }} succeeded, \${{ steps.report.devices.failed }} failed of \${{ steps.report.devices.total }}"
`;

describe('runner: the devices of a location report that failed part-way', function () {
  this.timeout(60_000);
  const t = onEmulator({ accounts: 1, devicesPerAccount: 60 });
  afterEach(async () => setFaults(t.emu, {}));

  /** Each device's latest result in the step's ledger, counted as the summary counts them. */
  async function ledgerCounts(store: SqliteStore, runId: string) {
    const rows = await allRows(store.eachDeviceResult(runId, 'report'));
    const held = await store.deviceResults(runId, 'report');
    expect(held.length, 'each device once').to.equal(new Set(rows.map((r) => r.deviceId)).size);
    return countOutcomes(held.map((r) => ({ outcome: r.outcome, error: r.errorType })));
  }

  /**
   * The emulator's clock, but for the retry rule's delay: at its `switchAt`-th one (every device then has a
   * result in the ledger), the emulator answers every later request with a server error.
   */
  function failingAt(store: SqliteStore, switchAt: number, seen: { ledgered: number[] }): Clock {
    const base = emulatorClock(t.emu);
    let delays = 0;
    return {
      ...base,
      sleep: async (ms, signal) => {
        if (ms === DELAY_MS && ++delays === switchAt) {
          const [run] = await store.listRuns({ status: 'running' });
          seen.ledgered.push((await store.deviceResults(run!.id, 'report')).length);
          await setFaults(t.emu, { errorRate: 1 });
        }
        return base.sleep(ms, signal);
      },
    };
  }

  async function failing(
    yaml: string,
    switchAt = 1,
    deviceErrors: Record<string, number> = { 'SVC CACHE UNAVAILABLE': 0.3, 'ABSENT SUBSCRIBER': 0.2 },
  ): Promise<{ s: RunSummary; lines: LogLine[]; store: SqliteStore }> {
    await setFaults(t.emu, { deviceErrors });
    const store = memoryStore();
    const logger = captureLogger();
    const seen = { ledgered: [] as number[] };
    const o: RunOptions = {
      client: t.client,
      store,
      logger,
      clock: failingAt(store, switchAt, seen),
      inputs: { account: t.account },
    };
    const s = await runPlaybook(playbook(yaml), o);
    expect(seen.ledgered, 'results in the ledger when the faults changed').to.have.length(1);
    expect(seen.ledgered[0]).to.be.greaterThan(0);
    return { s, lines: logger.lines, store };
  }

  /** The step failed by the retry pass's server error; its devices, the summary and `finally` say the ledger. */
  async function expectCounted(s: RunSummary, lines: LogLine[], store: SqliteStore) {
    const report = stepOf(s, 'report');
    expect(report.status).to.equal('failed');
    expect(report.error).to.match(/500|INTERNAL/);
    const ledger = await ledgerCounts(store, s.runId);
    expect(ledger.total).to.be.greaterThan(10);
    expect(ledger.failed, 'devices whose retry never went out').to.be.greaterThan(0);
    expect(ledger.succeeded).to.be.greaterThan(0);
    expect(report.devices).to.deep.equal(ledger);
    expect(s.devices).to.deep.equal(ledger);
    expect(unstepped(lines)).to.include(
      `failed: ${ledger.succeeded} succeeded, ${ledger.failed} failed of ${ledger.total}`,
    );
    const cp = (await store.loadSteps(s.runId)).get('report') as { status: string; devices?: unknown };
    expect(cp.status).to.equal('failed');
    expect(cp.devices, 'the failed checkpoint').to.deep.equal(ledger);
    return ledger;
  }

  it('the list held in memory: counts the first pass, its retried devices failed', async () => {
    const { s, lines, store } = await failing(REPORT({ name: 'in-memory', inMemory: true }));
    try {
      const ledger = await expectCounted(s, lines, store);
      const rows = await store.deviceResults(s.runId, 'report');
      expect(rows.every((r) => r.attempts === 1)).to.equal(true);
      expect(Object.keys(ledger.byError)).to.include.members(['ABSENT SUBSCRIBER', 'SVC CACHE UNAVAILABLE']);
    } finally {
      await store.close();
    }
  });

  it('the list streamed from the store: counts the first pass, its retried devices failed', async () => {
    const { s, lines, store } = await failing(REPORT({ name: 'streamed' }));
    try {
      const ledger = await expectCounted(s, lines, store);
      expect(Object.keys(ledger.byError)).to.include.members(['ABSENT SUBSCRIBER', 'SVC CACHE UNAVAILABLE']);
    } finally {
      await store.close();
    }
  });

  for (const inMemory of [false, true])
    it(`${inMemory ? 'in memory' : 'streamed'}, a second retry pass that never went out: the first retry's results count`, async () => {
      const { s, lines, store } = await failing(REPORT({ name: 'third', inMemory, attempts: 3 }), 2);
      try {
        await expectCounted(s, lines, store);
        const rows = await store.deviceResults(s.runId, 'report');
        // Devices the first retry failed again, sent to the second: their latest result is the first retry's.
        expect(rows.some((r) => r.attempts === 2 && r.outcome === 'failed')).to.equal(true);
      } finally {
        await store.close();
      }
    });

  it('an ignored error: each device the same outcome, counted the same, on both paths', async () => {
    // Refused consent is ignored, and not retried: those devices' results are final after the first pass.
    const errors = {
      'SVC CACHE UNAVAILABLE': 0.3,
      'ABSENT SUBSCRIBER': 0.2,
      'SVC CONSENT CHECK FAILED': 0.2,
    };
    const run = async (inMemory: boolean) => {
      // The same world, and the same draws of faults per device, for each path.
      t.emu.reset({ seed: 1, accounts: 1, devicesPerAccount: 60 });
      const yaml = REPORT({ name: 'ignored', inMemory, ignore: 'SVC CONSENT CHECK FAILED' });
      const { s, lines, store } = await failing(yaml, 1, errors);
      try {
        const ledger = await expectCounted(s, lines, store);
        const rows = await allRows(store.eachDeviceResult(s.runId, 'report'));
        const outcomes = Object.fromEntries(
          rows.map((r) => [r.deviceId, `${r.outcome} ${r.errorType ?? ''} ${r.attempts}`]),
        );
        return { ledger, outcomes };
      } finally {
        await store.close();
      }
    };
    const streamed = await run(false);
    const held = await run(true);
    expect(streamed.ledger.skipped, 'the ignored devices').to.be.greaterThan(0);
    expect(
      Object.values(streamed.outcomes).filter((v) => v.startsWith('skipped SVC CONSENT')),
    ).to.have.length(streamed.ledger.skipped);
    expect(held.outcomes).to.deep.equal(streamed.outcomes);
    expect(held.ledger).to.deep.equal(streamed.ledger);
  });

  it('resumed after a crash: the failed checkpoint keeps the counts, for the step and the summary', async () => {
    await setFaults(t.emu, { deviceErrors: { 'SVC CACHE UNAVAILABLE': 0.3, 'ABSENT SUBSCRIBER': 0.2 } });
    const store = memoryStore();
    const pb = playbook(REPORT({ name: 'resumed', after: '\n  - id: hold\n    wait: 1h' }));
    const seen = { ledgered: [] as number[] };
    const clock = failingAt(store, 1, seen);
    // The first execution waits for real in `hold`, until it is stopped as a restart would.
    const held: Clock = {
      ...clock,
      sleep: (ms, signal) =>
        ms > DELAY_MS
          ? new Promise((_, reject) =>
              signal?.addEventListener('abort', () => reject(signal.reason as Error), { once: true }),
            )
          : clock.sleep(ms, signal),
    };
    const o = { client: t.client, store, runId: 'r-failed-report', inputs: { account: t.account } };
    try {
      await interruptedRun(
        pb,
        { ...o, clock: held },
        async () =>
          ((await store.loadSteps(o.runId)).get('hold') as { status?: string } | undefined)?.status ===
          'waiting',
      );
      const ledger = await ledgerCounts(store, o.runId);
      const failed = (await store.loadSteps(o.runId)).get('report') as { status: string; devices?: unknown };
      expect(failed.status).to.equal('failed');
      expect(failed.devices, 'the failed checkpoint').to.deep.equal(ledger);
      await setFaults(t.emu, {});
      const logger = captureLogger();
      const s = await runPlaybook(pb, { ...o, clock: emulatorClock(t.emu), logger });
      expect(s.status, s.error).to.equal('succeeded');
      expect(stepOf(s, 'report').devices).to.deep.equal(ledger);
      expect(s.devices).to.deep.equal(ledger);
      expect(unstepped(logger.lines)).to.include(
        `failed: ${ledger.succeeded} succeeded, ${ledger.failed} failed of ${ledger.total}`,
      );
    } finally {
      await store.close();
    }
  });
});
