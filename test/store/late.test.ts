/**
 * A CarrierService message that comes after its run ended (product.md 5a): the run left the device
 * `unconfirmed` at its step's confirmation time, and the ledger said so for good, while the service's answer sat
 * in the inbox. Now the daemon's pass (recordLateResults) records it: the device's outcome, the run's summary
 * counts, and the console's grouping of the run made again. On each backend.
 */
import { expect } from 'chai';
import { recordLateResults } from '../../src/daemon/late-confirmations.js';
import { silentLogger } from '../../src/log.js';
import { type RunSummary, type Store } from '../../src/store/store.js';
import { forEachBackend } from './backends.js';
import { carrier, counts, imei, owner, run } from './fixtures.js';

const none = { succeeded: 0, failed: 0 };

/**
 * Run `r1`, ended: devices 1-4 of step `suspend` accepted under request R1 and left unconfirmed at its
 * confirmation time (with the error of the last look at their state); device 4 then sent again under R2 and
 * confirmed. Its summary says so.
 */
async function endedRun(store: Store, id = 'r1', ended = true): Promise<void> {
  await store.registerOwner(owner('A'), Date.now(), 60_000, false);
  store.createRun(run(id, { owner: 'A' }));
  const ids = [1, 2, 3, 4].map(imei);
  const base = { kind: 'imei', attempts: 1, requestId: `${id}-R1` };
  store.recordDevices(id, 'suspend', [{ ...base, ids, outcome: 'accepted' }], '2026-11-23T10:00:00.000Z');
  store.recordDevices(
    id,
    'suspend',
    [{ ...base, ids, outcome: 'unconfirmed', errorType: 'HTTP_503', errorClass: 'retryable' }],
    '2026-11-23T10:10:00.000Z',
  );
  store.recordDevices(
    id,
    'suspend',
    [{ kind: 'imei', attempts: 2, requestId: `${id}-R2`, ids: [imei(4)], outcome: 'succeeded' }],
    '2026-11-23T10:11:00.000Z',
  );
  const stepCounts = counts({ total: 4, succeeded: 1, unconfirmed: 3, byError: { HTTP_503: 3 } });
  const summary: RunSummary = {
    runId: id,
    playbook: 'pb',
    status: 'succeeded',
    startedAt: '2026-11-23T10:00:00.000Z',
    endedAt: '2026-11-23T10:12:00.000Z',
    steps: [
      {
        id: 'suspend',
        status: 'succeeded',
        attempts: 2,
        calls: 3,
        devices: stepCounts,
        confirmation: { callback: 0, requestStatus: 1, stateRead: 0 },
      },
    ],
    devices: structuredClone(stepCounts),
  };
  store.updateRun(id, ended ? { status: 'succeeded', endedAt: summary.endedAt, summary } : { summary });
  await store.durable();
}

forEachBackend('results that come after the run ended', (b) => {
  it('records each unconfirmed device its message names, once, and moves the summary counts', async () => {
    const store = await b.open();
    await endedRun(store);
    await store.appendInbox('A', [
      carrier('r1-R1', 1),
      carrier('r1-R1', 2, 'SVC DEVICE NOT ACTIVE'),
      // Device 4's outcome came with its second request: an answer to the first does not replace it.
      carrier('r1-R1', 4, 'SVC DEVICE NOT ACTIVE'),
      // Not a device of the request.
      carrier('r1-R1', 9),
      // Of another request.
      carrier('other', 3),
    ]);
    const before = await store.latestAmong('r1', [`suspend\0${imei(4)}`]);
    expect(await recordLateResults(store, silentLogger, Date.parse('2026-11-24T00:00:00Z'))).to.deep.equal({
      succeeded: 1,
      failed: 1,
    });

    const rows = await store.deviceResults('r1', 'suspend');
    const byDevice = Object.fromEntries(rows.map((r) => [r.deviceId, [r.outcome, r.errorType, r.requestId]]));
    expect(byDevice).to.deep.equal({
      [imei(1)]: ['succeeded', undefined, 'r1-R1'],
      [imei(2)]: ['failed', 'SVC DEVICE NOT ACTIVE', 'r1-R1'],
      [imei(3)]: ['unconfirmed', 'HTTP_503', 'r1-R1'],
      [imei(4)]: ['succeeded', undefined, 'r1-R2'],
    });
    const failed = rows.find((r) => r.deviceId === imei(2));
    expect(failed?.errorClass).to.be.a('string').and.not.equal('');

    const summary = (await store.getRun('r1'))?.summary;
    const expected = counts({
      total: 4,
      succeeded: 2,
      failed: 1,
      unconfirmed: 1,
      byError: { HTTP_503: 1, 'SVC DEVICE NOT ACTIVE': 1 },
    });
    expect(summary?.devices).to.deep.equal(expected);
    expect(summary?.steps[0]?.devices).to.deep.equal(expected);
    expect(summary?.steps[0]?.confirmation).to.deep.equal({
      callback: 0,
      requestStatus: 1,
      stateRead: 0,
      afterRun: 2,
    });
    // The console's grouping of the run is made again: device 1's result is the new entry's.
    const after = await store.latestAmong('r1', [`suspend\0${imei(1)}`, `suspend\0${imei(4)}`]);
    expect(after.get(`suspend\0${imei(4)}`)).to.equal(before.get(`suspend\0${imei(4)}`));
    const entries = await store.ledgerEntries('r1', { outcome: 'succeeded' }, undefined, 10);
    expect(after.get(`suspend\0${imei(1)}`)).to.equal(entries[entries.length - 1]?.seq);
    const unconfirmed = await store.ledgerEntries('r1', { outcome: 'unconfirmed' }, undefined, 10);
    expect(unconfirmed.map((e) => JSON.parse(e.device_ids) as string[])).to.deep.equal([
      [1, 2, 3, 4].map(imei),
    ]);

    // A second pass, and the same messages sent again: nothing more.
    await store.appendInbox('A', [carrier('r1-R1', 1)]);
    expect(await recordLateResults(store, silentLogger, Date.parse('2026-11-24T00:00:00Z'))).to.deep.equal(
      none,
    );
    expect((await store.getRun('r1'))?.summary?.devices).to.deep.equal(expected);
    expect(await store.deviceResults('r1', 'suspend')).to.have.length(4);
  });

  it('leaves a run that has not ended to itself, and a device left unconfirmed too long ago', async () => {
    const store = await b.open();
    await endedRun(store, 'r1', false);
    await store.appendInbox('A', [carrier('r1-R1', 1)]);
    expect(await recordLateResults(store, silentLogger, Date.parse('2026-11-24T00:00:00Z'))).to.deep.equal(
      none,
    );
    expect(
      (await store.deviceResults('r1', 'suspend')).find((r) => r.deviceId === imei(1))?.outcome,
    ).to.equal('unconfirmed');
    store.updateRun('r1', { status: 'succeeded', endedAt: '2026-11-23T10:12:00.000Z' });
    await store.durable();
    // Eight days after: its message is no longer looked for.
    expect(await recordLateResults(store, silentLogger, Date.parse('2026-12-01T10:11:00Z'))).to.deep.equal(
      none,
    );
    expect(await recordLateResults(store, silentLogger, Date.parse('2026-11-24T00:00:00Z'))).to.deep.equal({
      succeeded: 1,
      failed: 0,
    });
  });

  it('a run of many entries: read a slice at a time, a device sent again later keeps its outcome', async () => {
    const store = await b.open();
    await store.registerOwner(owner('A'), Date.now(), 60_000, false);
    store.createRun(run('r3', { owner: 'A' }));
    const at = '2026-11-23T10:10:00.000Z';
    const one = (n: number, requestId: string, attempts = 1) => [
      { kind: 'imei', ids: [imei(n)], outcome: 'succeeded' as const, attempts, requestId },
    ];
    store.recordDevices(
      'r3',
      'suspend',
      [{ kind: 'imei', ids: [1, 2, 3].map(imei), outcome: 'unconfirmed', attempts: 1, requestId: 'r3-R1' }],
      at,
    );
    // 450 entries after it, one device each; device 2 sent again and confirmed in the fourth hundred of them.
    for (let k = 0; k < 450; k++) {
      store.recordDevices('r3', 'suspend', one(100 + k, `r3-B${k}`), at);
      if (k === 300) store.recordDevices('r3', 'suspend', one(2, 'r3-R2', 2), at);
    }
    const step = counts({ total: 453, succeeded: 450, unconfirmed: 3 });
    store.updateRun('r3', {
      status: 'succeeded',
      endedAt: at,
      summary: {
        runId: 'r3',
        playbook: 'pb',
        status: 'succeeded',
        startedAt: at,
        endedAt: at,
        steps: [{ id: 'suspend', status: 'succeeded', attempts: 1, calls: 452, devices: step }],
        devices: structuredClone(step),
      },
    });
    await store.durable();
    await store.appendInbox('A', [
      carrier('r3-R1', 1),
      carrier('r3-R1', 2, 'SVC DEVICE NOT ACTIVE'),
      carrier('r3-R1', 3, 'SVC DEVICE NOT ACTIVE'),
    ]);
    // The event loop turns while the run's entries are read; on SQLite, device 3 is sent again meanwhile (on
    // PostgreSQL, where it would race the pass's transaction, it is not).
    let turns = 0;
    let reading = true;
    const beat = () => {
      turns++;
      if (turns === 2 && b.name === 'SQLite') store.recordDevices('r3', 'suspend', one(3, 'r3-R3', 2), at);
      if (reading) setImmediate(beat);
    };
    setImmediate(beat);
    const recorded = await recordLateResults(store, silentLogger, Date.parse('2026-11-24T00:00:00Z'));
    reading = false;
    expect(turns, 'turns of the event loop while the entries were read').to.be.at.least(5);
    const sqlite = b.name === 'SQLite';
    expect(recorded).to.deep.equal(sqlite ? { succeeded: 1, failed: 0 } : { succeeded: 1, failed: 1 });
    const rows = await store.deviceResults('r3', 'suspend');
    const byDevice = Object.fromEntries(
      rows
        .filter((r) => Number(r.deviceId) < Number(imei(100)))
        .map((r) => [r.deviceId, [r.outcome, r.requestId]]),
    );
    expect(byDevice).to.deep.equal({
      [imei(1)]: ['succeeded', 'r3-R1'],
      [imei(2)]: ['succeeded', 'r3-R2'],
      [imei(3)]: sqlite ? ['succeeded', 'r3-R3'] : ['failed', 'r3-R1'],
    });
  });

  if (b.replicas)
    it('two replicas recording the same message at once record it once', async () => {
      const a = await b.open();
      await endedRun(a);
      await a.appendInbox('A', [carrier('r1-R1', 1), carrier('r1-R1', 2)]);
      const other = await b.reopen(a);
      const now = Date.parse('2026-11-24T00:00:00Z');
      const done = await Promise.all([
        recordLateResults(a, silentLogger, now),
        recordLateResults(other, silentLogger, now),
      ]);
      expect(done.reduce((n, d) => n + d.succeeded + d.failed, 0)).to.equal(2);
      const summary = (await a.getRun('r1'))?.summary;
      expect(summary?.devices.unconfirmed).to.equal(1);
      expect(summary?.steps[0]?.confirmation?.afterRun).to.equal(2);
      // Accepted, unconfirmed, device 4's second request, and one entry of the two devices done.
      expect(await b.query(a, "SELECT seq FROM ledger WHERE run_id = 'r1'")).to.have.length(4);
    });
});
