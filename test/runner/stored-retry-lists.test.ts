/**
 * The lists of the devices a streamed location report sends again (stored-retries.ts), as the store keeps them:
 * each device under its own kind, the error it was sent again for in a column of its own (step_items.errors_json),
 * where it was written inside the kind (`["imei","SVC CACHE UNAVAILABLE"]`) before. A run interrupted with lists
 * of that older form in the store is resumed to the same ledger as a run never interrupted: the step makes its
 * lists again, and never reads those. The lists go when the run ends, however its step ended: before, those of a
 * step that failed stayed until the run was pruned.
 */
import { expect } from 'chai';
import type { Clock } from '../../src/clock.js';
import { runPlaybook } from '../../src/runner/runner.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import { allRows } from '../store/fixtures.js';
import {
  emulatorClock,
  interruptedRun,
  memoryStore,
  onEmulator,
  playbook,
  setFaults,
  stepOf,
} from './helpers.js';

/** The delay of the retry rule: where the tests look at the lists, stop the run, or make the retry fail. */
const DELAY_MS = 2000;
const ERRORS = { 'SVC CACHE UNAVAILABLE': 0.3, 'ABSENT SUBSCRIBER': 0.2 };
const LIST = 'report#retry 1.2';

/** A listing, and a report of its devices read from the store, whose two errors are sent again. */
const pb = playbook(`version: 1
name: lists
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
    with: { accountName: "\${{ inputs.account }}", deviceList: "\${{ steps.devices.items }}", cacheMode: "0" }
    devices:
      retry:
        - on: [SVC CACHE UNAVAILABLE, ABSENT SUBSCRIBER]
          with: { cacheMode: "1" }
          delay: 2s
    wait: { for: completion, timeout: 10m, pollInterval: 50ms }
    onError: continue
`);

interface ItemRow {
  seq: number;
  runs_json: string;
  errors_json: string | null;
}

const listRows = (store: SqliteStore, runId: string) =>
  store.db
    .prepare(
      'SELECT seq, runs_json, errors_json FROM step_items WHERE run_id = ? AND step_key = ? ORDER BY seq',
    )
    .all(runId, LIST) as ItemRow[];

const itemKeys = (store: SqliteStore, runId: string) =>
  store.db
    .prepare('SELECT DISTINCT step_key FROM step_items WHERE run_id = ? ORDER BY 1')
    .pluck()
    .all(runId) as string[];

describe('runner: the lists of the devices a streamed report sends again', function () {
  this.timeout(60_000);
  const t = onEmulator({ accounts: 1, devicesPerAccount: 60 });
  afterEach(async () => setFaults(t.emu, {}));

  /** A fresh world with the same faults: each run's devices fail the same way. */
  async function world(): Promise<void> {
    t.emu.reset({ seed: 1, accounts: 1, devicesPerAccount: 60 });
    await setFaults(t.emu, { deviceErrors: ERRORS });
  }

  /** The emulator's clock, calling `atDelay` at the retry rule's delay (the lists are written then). */
  function atDelay(atIt: () => Promise<void> | void): Clock {
    const base = emulatorClock(t.emu);
    return {
      ...base,
      sleep: async (ms, signal) => {
        if (ms === DELAY_MS) await atIt();
        return base.sleep(ms, signal);
      },
    };
  }

  /** Each device's outcome, error and attempts in the report's ledger. */
  async function ledgerOf(store: SqliteStore, runId: string): Promise<Record<string, string>> {
    const rows = await allRows(store.eachDeviceResult(runId, 'report'));
    return Object.fromEntries(
      rows.map((r) => [r.deviceId, `${r.outcome} ${r.errorType ?? ''} ${r.attempts}`]),
    );
  }

  it('writes each device under its own kind, the error it is sent again for apart; gone once it ends', async () => {
    await world();
    const store = memoryStore();
    let seen: ItemRow[] = [];
    try {
      const s = await runPlaybook(pb, {
        client: t.client,
        store,
        clock: atDelay(() => {
          seen = listRows(store, 'r-lists');
        }),
        runId: 'r-lists',
        inputs: { account: t.account },
      });
      expect(s.status, s.error).to.equal('succeeded');
      expect(seen.length, 'the list, at the delay').to.be.greaterThan(0);
      const runs = seen.flatMap((r) => JSON.parse(r.runs_json) as [string, string[]][]);
      const errors = seen.flatMap((r) => JSON.parse(r.errors_json ?? 'null') as string[]);
      expect(new Set(runs.map(([kind]) => kind))).to.deep.equal(new Set(['imei']));
      expect(errors).to.have.length(runs.length);
      expect(new Set(errors)).to.deep.equal(new Set(Object.keys(ERRORS)));
      // Each device sent again, under the error its first result in the ledger has.
      const ledger = await ledgerOf(store, 'r-lists');
      expect(runs.reduce((n, [, ids]) => n + ids.length, 0)).to.equal(
        Object.values(ledger).filter((v) => v.endsWith(' 2')).length,
      );
      expect(itemKeys(store, 'r-lists'), 'nothing of the ended run').to.deep.equal([]);
    } finally {
      await store.close();
    }
  });

  it('resumes a run whose lists the version before wrote to the same ledger, making its lists again', async () => {
    await world();
    const whole = memoryStore();
    const store = memoryStore();
    try {
      const s = await runPlaybook(pb, {
        client: t.client,
        store: whole,
        clock: emulatorClock(t.emu),
        inputs: { account: t.account },
      });
      expect(s.status, s.error).to.equal('succeeded');
      const expected = await ledgerOf(whole, s.runId);

      await world();
      const o = { client: t.client, store, runId: 'r-old-lists', inputs: { account: t.account } };
      // Stopped at the retry's delay, its list written; the wait never ends but by the stop.
      let delayed = false;
      const base = emulatorClock(t.emu);
      const held: Clock = {
        ...base,
        sleep: (ms, signal) => {
          if (ms !== DELAY_MS) return base.sleep(ms, signal);
          delayed = true;
          return new Promise((_, reject) =>
            signal?.addEventListener('abort', () => reject(signal.reason as Error), { once: true }),
          );
        },
      };
      await interruptedRun(pb, { ...o, clock: held }, () => delayed);
      const rows = listRows(store, o.runId);
      expect(rows.length).to.be.greaterThan(0);
      // The list as the version before wrote it.
      const update = store.db.prepare(
        'UPDATE step_items SET runs_json = ?, errors_json = NULL WHERE run_id = ? AND step_key = ? AND seq = ?',
      );
      for (const r of rows) {
        const runs = JSON.parse(r.runs_json) as [string, string[]][];
        const errors = JSON.parse(r.errors_json as string) as string[];
        const old = runs.map(([kind, ids], i) => [JSON.stringify([kind, errors[i]]), ids]);
        update.run(JSON.stringify(old), o.runId, LIST, r.seq);
      }

      const resumed = await runPlaybook(pb, { ...o, clock: emulatorClock(t.emu) });
      expect(resumed.status, resumed.error).to.equal('succeeded');
      expect(await ledgerOf(store, o.runId)).to.deep.equal(expected);
      expect(stepOf(resumed, 'report').devices).to.deep.equal(stepOf(s, 'report').devices);
      expect(itemKeys(store, o.runId), 'nothing of the ended run').to.deep.equal([]);
    } finally {
      await whole.close();
      await store.close();
    }
  });

  it('drops the lists of a step that failed, and the listing, once the run ends', async () => {
    await world();
    const store = memoryStore();
    let seen: string[] = [];
    try {
      const s = await runPlaybook(pb, {
        client: t.client,
        store,
        // At the delay, every later request answers a server error: the retry's report is never created.
        clock: atDelay(async () => {
          seen = itemKeys(store, 'r-failed');
          await setFaults(t.emu, { errorRate: 1 });
        }),
        runId: 'r-failed',
        inputs: { account: t.account },
      });
      expect(stepOf(s, 'report').status).to.equal('failed');
      expect(seen, 'the list, at the delay').to.deep.equal(['devices', LIST]);
      expect(itemKeys(store, 'r-failed'), 'nothing of the ended run').to.deep.equal([]);
    } finally {
      await store.close();
    }
  });
});
