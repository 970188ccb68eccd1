/**
 * Resuming a stored run (what the daemon does after a crash), in process: checkpoints written by an earlier
 * execution are restored instead of run again, a device-state call left `sending` is reconciled before it is
 * repeated, any other unknown mutating outcome is refused, and an interrupted run stays unfinished.
 */
import { expect } from 'chai';
import type { Client } from '../../src/api/client.js';
import type { Clock } from '../../src/clock.js';
import type { Playbook } from '../../src/playbook/schema.js';
import type { Emulator } from '../../src/emulator/index.js';
import { StoredEvents } from '../../src/daemon/stored-events.js';
import { runPlaybook, type EventSource } from '../../src/runner/runner.js';
import type { CarrierResult, ConfirmationSource } from '../../src/runner/types.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import {
  accountDevices,
  calls,
  captureLogger,
  clientFor,
  emulator,
  imei,
  interruptedRun,
  memoryStore,
  playbook,
  spy,
  type SeedDevice,
  skippingClock,
  stoppedClock,
} from './helpers.js';

describe('runner: resuming a stored run', () => {
  let emu: Emulator;
  let client: Client;
  let store: SqliteStore;
  let account: string;
  let devices: SeedDevice[];

  before(async () => {
    emu = await emulator({ devicesPerAccount: 20 });
    account = emu.defaults.accounts[0] as string;
  });
  after(async () => emu.close());
  beforeEach(async () => {
    emu.reset({ seed: 1, accounts: 1, devicesPerAccount: 20 });
    client = clientFor(emu);
    store = memoryStore();
    devices = (await accountDevices(emu, account)).filter((d) => d.state === 'active').slice(0, 10);
  });
  afterEach(async () => {
    await store.close();
    await client.close();
  });

  const list = () => devices.map((d) => `{ id: "${imei(d)}", kind: imei }`).join(', ');
  const queued = (id: string, name: string) =>
    store.createRun({
      id,
      playbook: name,
      status: 'running',
      trigger: { type: 'manual' },
      inputs: {},
      startedAt: new Date().toISOString(),
    });

  /** Runs `pb` as run `runId` until `ready` says so, then interrupts it as a restart would. */
  const interrupted = (
    pb: Playbook,
    runId: string,
    ready: () => Promise<boolean>,
    clock?: Clock,
    events?: EventSource,
  ) =>
    interruptedRun(
      pb,
      { client, store, runId, ...(clock ? { clock } : {}), ...(events ? { events } : {}) },
      ready,
    );

  it('restores finished steps, and reconciles a suspend that was sent and never answered', async () => {
    const pb = playbook(`
version: 1
name: resume-suspend
on: { manual: true }
steps:
  - id: look
    uses: devices.list
    with: { accountName: "${account}" }
  - id: suspend
    uses: devices.suspend
    with: { accountName: "${account}", devices: [${list()}] }
    # The devices the service did not change are watched this long before they are sent again.
    confirm: { timeout: 1s, pollInterval: 50ms }
  - id: after
    uses: log
    with: { message: "suspended \${{ steps.suspend.devices.succeeded }}" }
`);
    queued('r1', pb.name);
    store.saveStep('r1', 'look', {
      status: 'succeeded',
      devices: { total: 0, succeeded: 0, failed: 0, skipped: 0, byError: {} },
      output: { count: 20 },
      calls: 1,
      attempts: 1,
    });
    store.saveStep('r1', 'suspend', { status: 'sending' });
    // The earlier execution's call reached the service for the first half of the devices, then it died.
    await client.callByName('devices.suspend', {
      accountName: account,
      devices: devices.slice(0, 5).map((d) => ({ deviceIds: [{ id: imei(d), kind: 'imei' }] })),
    });
    const seen = spy(client);
    const summary = await runPlaybook(pb, { client, store, runId: 'r1' });

    expect(summary.status).to.equal('succeeded');
    expect(seen.filter((c) => c.action === 'devices.list' && !('currentState' in c.input))).to.have.length(0);
    const sent = seen.filter((c) => c.action === 'devices.suspend');
    expect(sent).to.have.length(1);
    expect((sent[0]!.input.devices as unknown[]).length).to.equal(5);
    const mutations = (await calls(emu)).devices;
    for (const d of devices) expect(mutations[imei(d)], imei(d)).to.have.length(1);
    const step = summary.steps.find((s) => s.id === 'suspend')!;
    expect(step.devices).to.include({ total: 10, succeeded: 10, failed: 0 });
    expect((await store.getRun('r1'))!.status).to.equal('succeeded');
  });

  it('does not send again a suspend the carrier is still carrying out: its devices are watched until they change', async () => {
    const pb = playbook(`
version: 1
name: resume-pending
on: { manual: true }
steps:
  - id: suspend
    uses: devices.suspend
    with: { accountName: "${account}", devices: [${list()}] }
    confirm: { timeout: 1m, pollInterval: 20ms }
`);
    queued('r6', pb.name);
    store.saveStep('r6', 'suspend', { status: 'sending', since: Date.now() });
    // The earlier execution's call reached the service, which carries it out a minute later; then it died.
    emu.setFaults({ processingSeconds: 60 });
    await client.callByName('devices.suspend', {
      accountName: account,
      devices: devices.map((d) => ({ deviceIds: [{ id: imei(d), kind: 'imei' }] })),
    });
    const seen = spy(client);
    const reads = async () => (await calls(emu)).actions['devices.list'] ?? 0;
    const before = await reads();
    const resumed = runPlaybook(pb, { client, store, runId: 'r6' });
    // The resumed run reads the devices unchanged, and reads again while it waits; the carrier then acts.
    const resent = () => seen.some((c) => c.action === 'devices.suspend');
    while ((await reads()) < before + 2 && !resent()) await new Promise((r) => setTimeout(r, 10));
    emu.advance(61);
    const summary = await resumed;
    emu.setFaults({});
    expect(summary.status, summary.error).to.equal('succeeded');
    expect(seen.filter((c) => c.action === 'devices.suspend')).to.have.length(0);
    const mutations = (await calls(emu)).devices;
    for (const d of devices) expect(mutations[imei(d)], imei(d)).to.have.length(1);
    expect(summary.steps[0]?.devices).to.include({ total: 10, succeeded: 10 });
    expect(summary.steps[0]?.confirmation).to.deep.equal({ callback: 0, requestStatus: 0, stateRead: 10 });
  });

  it('does not repeat a call that is not retry-safe and whose outcome is unknown: the step fails, naming why', async () => {
    const pb = playbook(`
version: 1
name: resume-unknown
on: { manual: true }
steps:
  - id: text
    uses: sms.send
    with: { accountName: "${account}", deviceIds: [${list()}], smsMessage: "hello" }
`);
    queued('r2', pb.name);
    // Sending an SMS twice texts the device twice: not retry-safe, so never repeated blindly.
    store.saveStep('r2', 'text', { status: 'sending' });
    const seen = spy(client);
    const summary = await runPlaybook(pb, { client, store, runId: 'r2' });
    expect(summary.status).to.equal('failed');
    expect(summary.error).to.match(/outcome is unknown/);
    expect(seen).to.have.length(0);
  });

  it('an interrupted run stays unfinished, with no failed checkpoint, and completes when resumed', async () => {
    const pb = playbook(`
version: 1
name: resume-interrupted
on: { manual: true }
steps:
  - id: first
    uses: log
    with: { message: one }
  - id: pause
    wait: 300ms
  - id: last
    uses: log
    with: { message: two }
`);
    // Interrupted in its pause, however long the first step took: the pause's sleep lasts until then.
    const waiting: number[] = [];
    await interrupted(pb, 'r3', async () => waiting.includes(300), stoppedClock(Date.now(), waiting));
    expect((await store.getRun('r3'))!.status).to.equal('running');
    // The wait under way says until when it waits; nothing says failed.
    expect(
      [...(await store.loadSteps('r3'))].map(([key, cp]) => [key, (cp as { status: string }).status]),
    ).to.deep.equal([
      ['first', 'succeeded'],
      ['pause', 'waiting'],
    ]);
    expect((await store.claimRuns('next start', undefined, Date.now())).map((r) => r.id)).to.include('r3');

    const summary = await runPlaybook(pb, { client, store, runId: 'r3' });
    expect(summary.status).to.equal('succeeded');
    expect(summary.steps.map((s) => [s.id, s.status])).to.deep.equal([
      ['first', 'succeeded'],
      ['pause', 'succeeded'],
      ['last', 'succeeded'],
    ]);
    expect((await store.getRun('r3'))!.status).to.equal('succeeded');
    expect((await store.claimRuns('another start', undefined, Date.now())).map((r) => r.id)).to.not.include(
      'r3',
    );
  });

  /**
   * Suspends 6 devices (`first`), waits, then 4 more (`second`), under `playbookLimits` and `secondLimits`; run
   * as `runId`, interrupted once `first` is done, then resumed.
   */
  async function resumedLimits(runId: string, playbookLimits: string, secondLimits: string) {
    const flat = (from: number, to: number) =>
      devices
        .slice(from, to)
        .map((d) => `{ id: "${imei(d)}", kind: imei }`)
        .join(', ');
    const pb = playbook(`
version: 1
name: resume-limits
on: { manual: true }
${playbookLimits}
steps:
  - id: first
    uses: devices.suspend
    with: { accountName: "${account}", devices: [${flat(0, 6)}] }
  - id: pause
    wait: 1s
  - id: second
    uses: devices.suspend
    with: { accountName: "${account}", devices: [${flat(6, 10)}] }
    ${secondLimits}
`);
    await interrupted(
      pb,
      runId,
      async () =>
        ((await store.loadSteps(runId)).get('first') as { status?: string } | undefined)?.status ===
        'succeeded',
    );
    return runPlaybook(pb, { client, store, runId });
  }

  it("a resumed run's limits count the devices its earlier execution changed", async () => {
    const summary = await resumedLimits('r-limits', 'limits: { maxDevices: 8 }', '');
    // 6 devices already, 4 more would make 10: refused, as it would have been without the restart.
    expect([summary.status, summary.error]).to.deep.equal([
      'failed',
      'limits.maxDevices is 8: step `second` would bring this run to 10 devices; nothing was sent',
    ]);
    expect(Object.keys((await calls(emu)).devices).sort()).to.deep.equal(
      devices.slice(0, 6).map(imei).sort(),
    );
  });

  it('a resumed run counts for a step limit only the steps a limit counted before the restart', async () => {
    // Only `second` has a limit: `first`, which has none, was never counted, and is not counted on resuming.
    const summary = await resumedLimits('r-step-limits', '', 'limits: { maxDevices: 5 }');
    expect(summary.status, summary.error).to.equal('succeeded');
    expect(Object.keys((await calls(emu)).devices)).to.have.length(10);
  });

  it('a resumed wait ends when it would have without the restart, not a whole wait later', async () => {
    const pb = playbook(`
version: 1
name: resume-wait
on: { manual: true }
steps:
  - id: first
    uses: log
    with: { message: one }
  - id: hold
    wait: 2h
  - id: last
    uses: log
    with: { message: two }
`);
    const T0 = Date.UTC(2026, 10, 29, 2, 0, 0);
    // The first execution's clock stands at T0: its wait begins, and lasts until it is interrupted.
    const waiting: number[] = [];
    await interrupted(pb, 'r-wait', async () => waiting.length > 0, stoppedClock(T0, waiting));

    // Resumed 90 minutes later: 30 are left of the 2 hours.
    const slept: number[] = [];
    const after = skippingClock(T0 + 90 * 60_000, slept);
    const summary = await runPlaybook(pb, { client, store, runId: 'r-wait', clock: after });
    expect(summary.status, summary.error).to.equal('succeeded');
    expect(slept.reduce((a, b) => a + b, 0)).to.equal(30 * 60_000);
  });

  it('a resumed event wait takes the callback that came while no process waited', async () => {
    const pb = playbook(`
version: 1
name: resume-event
on: { manual: true }
steps:
  - id: usage
    wait:
      event: { service: DeviceUsage, match: '\${{ event.requestId.startsWith("usage-") }}' }
      timeout: 1h
`);
    const usage = (requestId: string) => ({
      service: 'DeviceUsage',
      kind: 'deviceUsage',
      requestId,
      payload: { requestId },
      receivedAt: new Date().toISOString(),
    });
    // Stored before the wait began: not the one it waits for.
    await store.appendInbox('A', [usage('usage-0')]);
    const waiting = async () =>
      ((await store.loadSteps('r-event')).get('usage') as { status?: string } | undefined)?.status ===
      'waiting';
    await interrupted(pb, 'r-event', waiting, undefined, new StoredEvents(store));
    // It comes while no process waits: stored, handed to nobody.
    await store.appendInbox('A', [usage('usage-1')]);
    // The resumed run's clock runs a sleep out at once: a wait that missed the event times out.
    const clock = skippingClock(Date.now());
    const summary = await runPlaybook(pb, {
      client,
      store,
      runId: 'r-event',
      clock,
      events: new StoredEvents(store),
    });
    expect(summary.status, summary.error).to.equal('succeeded');
    const output = (await store.loadSteps('r-event')).get('usage') as { output?: { requestId?: string } };
    expect(output.output?.requestId).to.equal('usage-1');
  });

  for (const form of ['a list', 'stored items'])
    it(`a resumed location report of ${form} reads the reports created before the restart`, async () => {
      const stored = form !== 'a list';
      const pb = playbook(`
version: 1
name: resume-report
on: { manual: true }
steps:
  - id: look
    uses: devices.list
    with: { accountName: "${account}", currentState: active }
  - id: locate
    uses: location.createReport
    with:
      accountName: "${account}"
      deviceList: ${stored ? '${{ steps.look.items }}' : `[${list()}]`}
      cacheMode: "1"
    wait: { for: completion, timeout: 2h }
`);
      const created = async () => (await calls(emu)).actions['location.createReport'] ?? 0;
      // Interrupted once the report was created and answered (seen twice, 20 ms apart): the emulator's clock
      // stands still, so the report stays queued while the first execution waits for it.
      let seen = 0;
      await interrupted(pb, 'r-report', async () => (seen = (await created()) === 1 ? seen + 1 : 0) >= 2);
      const kept = (await store.loadSteps('r-report')).get('locate') as { status?: string } | undefined;
      expect(kept?.status).to.equal('reporting');
      emu.advance(3600);
      const summary = await runPlaybook(pb, { client, store, runId: 'r-report', pollIntervalMs: 10 });
      expect(summary.status, summary.error).to.equal('succeeded');
      expect(await created(), 'reports created in all').to.equal(1);
      const rows = await store.deviceResults('r-report', 'locate');
      const expected = stored
        ? (await accountDevices(emu, account)).filter((d) => d.state === 'active').map(imei)
        : devices.map(imei);
      expect(rows.map((r) => r.deviceId).sort()).to.deep.equal(expected.sort());
      expect(rows.every((r) => r.outcome === 'succeeded' || r.outcome === 'failed')).to.equal(true);
    });

  it('a run interrupted while it confirms records each device once: those confirmed before stay as they are', async () => {
    const pb = playbook(`
version: 1
name: resume-confirming
on: { manual: true }
steps:
  - id: suspend
    uses: devices.suspend
    with: { accountName: "${account}", devices: [${list()}] }
    confirm: { pollInterval: 1h }
`);
    queued('r5', pb.name);
    /** The CarrierService message of each device the emulator's request names, as the daemon's inbox gives it. */
    const messages = (requestId: string): CarrierResult[] =>
      emu.request(requestId)!.devices.map((d) => ({
        device: `imei:${d.deviceIds[0]!.id}`,
        ids: d.deviceIds.map((x) => `${x.kind.toLowerCase()}:${x.id}`),
        succeeded: d.status === 'Success',
      }));
    /** A listener that has the messages of the first `n` devices of each request, and no more. */
    const listener = (n: number): ConfirmationSource => ({
      listening: () => true,
      follow(requestIds, onResult) {
        for (const id of requestIds) for (const m of messages(id).slice(0, n)) onResult(id, m);
        return () => undefined;
      },
    });
    const confirming = async () =>
      ((await store.loadSteps('r5')).get('suspend') as { status?: string } | undefined)?.status ===
      'confirming';
    await interruptedRun(pb, { client, store, runId: 'r5', confirmations: listener(4) }, confirming);
    // The resumed run reads the step's entries under its requests once: the devices accepted and the results
    // recorded before the stop, told apart by their outcome (it read them twice).
    const reads: unknown[][] = [];
    const resultsUnder = store.resultsUnder.bind(store);
    store.resultsUnder = (...args: Parameters<typeof resultsUnder>) => {
      reads.push(args);
      return resultsUnder(...args);
    };
    // Four devices confirmed before the stop are in the ledger; the resumed run confirms the other six.
    const summary = await runPlaybook(pb, { client, store, runId: 'r5', confirmations: listener(10) });
    store.resultsUnder = resultsUnder;
    expect(summary.status, summary.error).to.equal('succeeded');
    expect(reads, 'reads of the ledger under the requests').to.have.length(1);
    const entries = store.db
      .prepare(
        `SELECT l.outcome, j.value AS id FROM ledger l, json_each(l.device_ids) j
         WHERE l.run_id = 'r5' AND l.outcome <> 'accepted'`,
      )
      .all() as { outcome: string; id: string }[];
    expect(entries.map((e) => e.id).sort(), 'one result of each device').to.deep.equal(
      devices.map((d) => imei(d)).sort(),
    );
    expect(summary.steps[0]!.devices).to.include({ total: 10, succeeded: 10 });
  });

  it('a resumed run fans out over the listing its checkpoint kept, not a fresh one', async () => {
    const pb = playbook(`
version: 1
name: resume-listing
on: { manual: true }
steps:
  - id: look
    uses: devices.list
    with: { accountName: "${account}", currentState: active }
  - id: pause
    wait: 300ms
  - id: each
    forEach:
      items: \${{ steps.look.items }}
      batchSize: 4
      steps:
        - id: suspend
          uses: devices.suspend
          with: { accountName: "${account}", devices: \${{ item }} }
`);
    // Interrupted in its pause, once the listing is kept, however long the listing took: the pause's sleep
    // lasts until then.
    const waiting: number[] = [];
    await interrupted(pb, 'r4', async () => waiting.includes(300), stoppedClock(Date.now(), waiting));
    const kept = (await store.loadSteps('r4')).get('look') as { storedItems?: number };
    // The listing is in the store, as runs of one kind; the checkpoint counts it.
    const listed = (await store.itemChunks('r4', 'look', -1, 1000)).flatMap((c) => c.runs);
    expect(listed, 'the listing is kept as runs of one kind').to.have.length(1);
    expect(kept.storedItems).to.equal(listed[0]![1].length);
    const ids = listed![0]![1];
    expect(listed![0]![0]).to.equal('imei');
    expect(ids.length).to.be.greaterThan(4);

    // Meanwhile one listed device is suspended elsewhere: a fresh listing would leave it out.
    await client.callByName('devices.suspend', {
      accountName: account,
      devices: [{ id: ids[0], kind: 'imei' }],
    });
    const seen = spy(client);
    const summary = await runPlaybook(pb, { client, store, runId: 'r4' });
    expect(summary.status).to.equal('succeeded');
    expect(seen.filter((c) => c.action === 'devices.list')).to.have.length(0);
    const sent = seen
      .filter((c) => c.action === 'devices.suspend')
      .flatMap((c) => (c.input.devices as { id: string; kind: string }[]).map((d) => `${d.kind}:${d.id}`));
    expect(sent.sort()).to.deep.equal(ids.map((id) => `imei:${id}`).sort());
  });

  it('a run stopped during its `finally` is interrupted, not failed: resumed, it runs the rest of `finally`', async () => {
    const pb = playbook(`
version: 1
name: stopped-in-finally
on: { manual: true }
steps:
  - { id: work, uses: log, with: { message: work } }
finally:
  - { id: first, uses: log, with: { message: cleanup one } }
  - { id: linger, wait: 2s }
  - { id: last, uses: log, with: { message: cleanup done } }
`);
    queued('r-finally', pb.name);
    const logger = captureLogger();
    await interruptedRun(pb, { client, store, runId: 'r-finally', logger }, async () =>
      logger.lines.some((l) => l.message === 'step started' && l.meta.step === 'linger'),
    );
    expect((await store.getRun('r-finally'))?.status, 'stored after the stop').to.equal('running');
    const again = captureLogger();
    const summary = await runPlaybook(pb, { client, store, runId: 'r-finally', logger: again });
    expect(summary.status, summary.error).to.equal('succeeded');
    const said = again.lines.map((l) => l.message);
    expect(said).to.include('cleanup done');
    expect(said, 'a finally step done before the stop is not run again').not.to.include('cleanup one');
  });
});
