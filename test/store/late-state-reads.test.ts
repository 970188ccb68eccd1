/**
 * A CarrierService message that comes after its run ended, for a device the run settled by a read of its state
 * (product.md 5a, docs/ledger.md): the read's guess (`succeeded` in the target state, `STATE NOT CHANGED` not in
 * it) gives way to the service's outcome and reason, counted as the late ones are; so does a message that comes
 * while the run is still going, at once, counted in the summary the run ends with. A device the request's status
 * or its own message confirmed keeps its result whatever message comes again. On each backend.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { recordLateResults } from '../../src/daemon/late-confirmations.js';
import { silentLogger } from '../../src/log.js';
import { type DeviceGroup, type RunSummary, type Store } from '../../src/store/store.js';
import { MIGRATIONS, SqliteStore } from '../../src/store/sqlite.js';
import { tempDir } from '../helpers/temp.js';
import { forEachBackend } from './backends.js';
import { carrier, counts, imei, owner, run } from './fixtures.js';

const NOW = Date.parse('2026-11-24T00:00:00Z');

/**
 * Run `r1`, ended: step `suspend` sent request R1 (devices 1-4), which the service said `PartialSuccess`, and a
 * read of their state settled: 1 and 2 in the target state, 3 and 4 not (STATE NOT CHANGED); and request R2
 * (devices 5 and 6): 5 confirmed by the request's status, 6 by its message. Its summary; not ended (and without
 * it) when `over` is false.
 */
async function ended(store: Store, over = true): Promise<RunSummary> {
  await store.registerOwner(owner('A'), Date.now(), 60_000, false);
  store.createRun(run('r1', { owner: 'A' }));
  const r1 = { kind: 'imei', attempts: 1, requestId: 'R1' };
  const r2 = { kind: 'imei', attempts: 1, requestId: 'R2' };
  const at = '2026-11-23T10:00:00.000Z';
  store.recordDevices(
    'r1',
    'suspend',
    [
      { ...r1, ids: [1, 2, 3, 4].map(imei), outcome: 'accepted' },
      { ...r2, ids: [5, 6].map(imei), outcome: 'accepted' },
    ],
    at,
  );
  const settled: DeviceGroup[] = [
    { ...r1, ids: [1, 2].map(imei), outcome: 'succeeded', byStateRead: true },
    {
      ...r1,
      ids: [3, 4].map(imei),
      outcome: 'failed',
      errorType: 'STATE NOT CHANGED',
      errorClass: 'permanent',
      byStateRead: true,
    },
    { ...r2, ids: [imei(5)], outcome: 'succeeded' },
    {
      ...r2,
      ids: [imei(6)],
      outcome: 'failed',
      errorType: 'INVALID DEVICE STATE',
      errorClass: 'permanent',
    },
  ];
  store.recordDevices('r1', 'suspend', settled, '2026-11-23T10:01:00.000Z');
  const step = counts({
    total: 6,
    succeeded: 3,
    failed: 3,
    byError: { 'STATE NOT CHANGED': 2, 'INVALID DEVICE STATE': 1 },
  });
  const summary: RunSummary = {
    runId: 'r1',
    playbook: 'pb',
    status: 'succeeded',
    startedAt: at,
    endedAt: '2026-11-23T10:02:00.000Z',
    steps: [
      {
        id: 'suspend',
        status: 'succeeded',
        attempts: 2,
        calls: 4,
        devices: step,
        confirmation: { callback: 1, requestStatus: 1, stateRead: 4 },
      },
    ],
    devices: structuredClone(step),
  };
  // A run still going has no summary yet: it writes it as it ends (end).
  if (over) end(store, summary);
  await store.durable();
  return summary;
}

/** Ends run `r1` as the runner does: its summary, from what its steps counted. */
function end(store: Store, summary: RunSummary): void {
  store.updateRun('r1', { status: 'succeeded', endedAt: summary.endedAt as string, summary });
}

forEachBackend('a message after the run ended supersedes a state read', (b) => {
  it("records the service's outcome and reason of each device settled by a read, and counts it", async () => {
    const store = await b.open();
    await ended(store);
    await store.appendInbox('A', [
      // In the target state, and refused by the service all the same (it was there already, say).
      carrier('R1', 1, 'INVALID DEVICE STATE'),
      carrier('R1', 2),
      carrier('R1', 3, 'INVALID DEVICE STATE'),
      // Device 4's message never comes: the read's guess stays.
      // Confirmed by the request's status, and by its message: a message saying otherwise changes neither.
      carrier('R2', 5, 'INVALID DEVICE STATE'),
    ]);
    // Device 6's message again, after it was confirmed by it: a duplicate, which the inbox keeps once.
    await store.appendInbox('A', [carrier('R2', 6, 'INVALID DEVICE STATE')]);
    expect(await recordLateResults(store, silentLogger, NOW)).to.deep.equal({ succeeded: 1, failed: 2 });

    const rows = await store.deviceResults('r1', 'suspend');
    const byDevice = Object.fromEntries(rows.map((r) => [r.deviceId, [r.outcome, r.errorType, r.requestId]]));
    expect(byDevice).to.deep.equal({
      [imei(1)]: ['failed', 'INVALID DEVICE STATE', 'R1'],
      [imei(2)]: ['succeeded', undefined, 'R1'],
      [imei(3)]: ['failed', 'INVALID DEVICE STATE', 'R1'],
      [imei(4)]: ['failed', 'STATE NOT CHANGED', 'R1'],
      [imei(5)]: ['succeeded', undefined, 'R2'],
      [imei(6)]: ['failed', 'INVALID DEVICE STATE', 'R2'],
    });
    const summary = (await store.getRun('r1'))?.summary;
    const expected = counts({
      total: 6,
      succeeded: 2,
      failed: 4,
      byError: { 'STATE NOT CHANGED': 1, 'INVALID DEVICE STATE': 3 },
    });
    expect(summary?.devices).to.deep.equal(expected);
    expect(summary?.steps[0]?.devices).to.deep.equal(expected);
    // Three devices confirmed by their message after the run, no longer by the read.
    expect(summary?.steps[0]?.confirmation).to.deep.equal({
      callback: 1,
      requestStatus: 1,
      stateRead: 1,
      afterRun: 3,
    });

    // Another pass, and the messages sent again: the devices have the service's word already.
    await store.appendInbox('A', [carrier('R1', 1), carrier('R1', 2, 'INVALID DEVICE STATE')]);
    expect(await recordLateResults(store, silentLogger, NOW)).to.deep.equal({ succeeded: 0, failed: 0 });
    expect((await store.getRun('r1'))?.summary?.devices).to.deep.equal(expected);
    const entries = await b.query<{ seq: number }>(store, "SELECT seq FROM ledger WHERE run_id = 'r1'");
    // The accepted entries, the four of the results, and the late ones by outcome and type.
    expect(entries).to.have.length(2 + 4 + 2);
  });

  it('counts the moves once in a summary counted from the ledger, as runs cancel writes it', async () => {
    const store = await b.open();
    const summary = await ended(store, false);
    await store.appendInbox('A', [carrier('R1', 3, 'INVALID DEVICE STATE')]);
    expect(await recordLateResults(store, silentLogger, NOW)).to.deep.equal({ succeeded: 0, failed: 1 });
    // The ledger's latest of each device: device 3 failed by its message now, not by the read's guess.
    const fromLedger = counts({
      total: 6,
      succeeded: 3,
      failed: 3,
      byError: { 'STATE NOT CHANGED': 1, 'INVALID DEVICE STATE': 2 },
    });
    store.updateRun('r1', {
      status: 'cancelled',
      endedAt: summary.endedAt as string,
      summary: { ...summary, status: 'cancelled', devices: fromLedger },
      movesCounted: true,
    });
    await store.durable();
    const run = await store.getRun('r1');
    expect([run?.summary?.devices, run?.lateMoves]).to.deep.equal([fromLedger, undefined]);
  });

  it('leaves the state reads of a step still under way to a pass after the step ends', async () => {
    // The step has made its requests and not ended (its step_calls row): its results are in the ledger (a
    // devices.retry pass writes them before its next request; a step interrupted writes them as it stops), and
    // it still counts its devices, sends them again or resumes from them.
    const store = await b.open();
    await ended(store, false);
    store.saveCalls('r1', 'suspend', 4, 2);
    await store.appendInbox('A', [carrier('R1', 3, 'INVALID DEVICE STATE')]);
    expect(await recordLateResults(store, silentLogger, NOW)).to.deep.equal({ succeeded: 0, failed: 0 });
    const three = async () =>
      (await store.deviceResults('r1', 'suspend')).find((r) => r.deviceId === imei(3))?.errorType;
    expect(await three(), "device 3's latest, the read's guess").to.equal('STATE NOT CHANGED');
    expect((await store.getRun('r1'))?.lateMoves).to.equal(undefined);
    // The step ends (its checkpoint, which drops its row), the run goes on: the next pass records it.
    store.saveStep('r1', 'suspend', { status: 'succeeded', calls: 4, attempts: 2 });
    await store.durable();
    expect(await recordLateResults(store, silentLogger, NOW)).to.deep.equal({ succeeded: 0, failed: 1 });
    expect(await three()).to.equal('INVALID DEVICE STATE');
  });

  it('records a state read of a run still going at once, and counts it in the summary the run ends with', async () => {
    const store = await b.open();
    const summary = await ended(store, false);
    await store.appendInbox('A', [
      carrier('R1', 3, 'INVALID DEVICE STATE'),
      carrier('R1', 1, 'DEVICE DEACTIVATED'),
    ]);
    expect(await recordLateResults(store, silentLogger, NOW)).to.deep.equal({ succeeded: 0, failed: 2 });
    const reasons = async () =>
      Object.fromEntries(
        (await store.deviceResults('r1', 'suspend')).map((r) => [r.deviceId, [r.outcome, r.errorType]]),
      );
    const service = {
      [imei(1)]: ['failed', 'DEVICE DEACTIVATED'],
      [imei(2)]: ['succeeded', undefined],
      [imei(3)]: ['failed', 'INVALID DEVICE STATE'],
      [imei(4)]: ['failed', 'STATE NOT CHANGED'],
      [imei(5)]: ['succeeded', undefined],
      [imei(6)]: ['failed', 'INVALID DEVICE STATE'],
    };
    expect(await reasons()).to.deep.equal(service);
    service[imei(4)] = ['failed', 'INVALID DEVICE STATE'];
    // Kept for the summary the run writes as it ends, which counts what its steps decided: the read's guess.
    const going = await store.getRun('r1');
    const kept = (g: typeof going) => g?.lateMoves?.reduce((n, m) => n + m.n, 0);
    expect([going?.summary, kept(going)]).to.deep.equal([undefined, 2]);
    // A pass before the run ends, the messages again: each device once. Device 4's, of the same kind as device
    // 3's, is kept with it, as a count.
    await store.appendInbox('A', [carrier('R1', 3)]);
    expect(await recordLateResults(store, silentLogger, NOW)).to.deep.equal({ succeeded: 0, failed: 0 });
    await store.appendInbox('A', [carrier('R1', 4, 'INVALID DEVICE STATE')]);
    expect(await recordLateResults(store, silentLogger, NOW)).to.deep.equal({ succeeded: 0, failed: 1 });
    const three = await store.getRun('r1');
    expect([three?.lateMoves?.length, kept(three)]).to.deep.equal([2, 3]);
    expect(await reasons()).to.deep.equal(service);

    end(store, summary);
    await store.durable();
    const run = await store.getRun('r1');
    const moved = counts({
      total: 6,
      succeeded: 2,
      failed: 4,
      byError: { 'INVALID DEVICE STATE': 3, 'DEVICE DEACTIVATED': 1 },
    });
    expect(run?.lateMoves).to.equal(undefined);
    expect(run?.summary?.devices).to.deep.equal(moved);
    expect(run?.summary?.steps[0]?.devices).to.deep.equal(moved);
    expect(run?.summary?.steps[0]?.confirmation).to.deep.equal({
      callback: 1,
      requestStatus: 1,
      stateRead: 1,
      afterRun: 3,
    });
    // Once it has ended, a pass finds nothing more of these devices; device 2's message, when it comes, is
    // counted with them, in the summary as the store keeps it.
    expect(await recordLateResults(store, silentLogger, NOW)).to.deep.equal({ succeeded: 0, failed: 0 });
    await store.appendInbox('A', [carrier('R1', 2, 'INVALID DEVICE STATE')]);
    expect(await recordLateResults(store, silentLogger, NOW)).to.deep.equal({ succeeded: 0, failed: 1 });
    expect(await reasons()).to.deep.equal({ ...service, [imei(2)]: ['failed', 'INVALID DEVICE STATE'] });
    const row = await b.query<{ summary_json: string; late_moves_json: string | null }>(
      store,
      "SELECT summary_json, late_moves_json FROM runs WHERE id = 'r1'",
    );
    const last = JSON.parse(row[0]!.summary_json) as RunSummary;
    expect([row[0]!.late_moves_json, last.devices]).to.deep.equal([
      null,
      counts({
        total: 6,
        succeeded: 1,
        failed: 5,
        byError: { 'INVALID DEVICE STATE': 4, 'DEVICE DEACTIVATED': 1 },
      }),
    ]);
    expect(last.steps[0]?.confirmation).to.deep.equal({
      callback: 1,
      requestStatus: 1,
      stateRead: 0,
      afterRun: 4,
    });
  });
});

describe('SQLite: a state file of the version before, its run still going', () => {
  it('records the message of a device the run settled by a read at once, once migrated', async () => {
    const file = join(tempDir('fleetbook-late-running-'), 'state.db');
    const before = new SqliteStore(file);
    const summary = await ended(before, false);
    await before.close();
    // The file as the version before the moves left it: without their column, at the schema version before it.
    const old = new Database(file);
    old.exec('ALTER TABLE runs DROP COLUMN late_moves_json');
    old.pragma(`user_version = ${MIGRATIONS.findIndex((m) => m.includes('late_moves_json'))}`);
    old.close();

    const store = new SqliteStore(file);
    try {
      await store.appendInbox('A', [carrier('R1', 4, 'INVALID DEVICE STATE')]);
      expect(await recordLateResults(store, silentLogger, NOW)).to.deep.equal({ succeeded: 0, failed: 1 });
      const rows = await store.deviceResults('r1', 'suspend');
      expect(rows.find((r) => r.deviceId === imei(4))?.errorType).to.equal('INVALID DEVICE STATE');
      end(store, summary);
      await store.durable();
      expect((await store.getRun('r1'))?.summary?.devices.byError).to.deep.equal({
        'STATE NOT CHANGED': 1,
        'INVALID DEVICE STATE': 2,
      });
    } finally {
      await store.close();
    }
  });
});
