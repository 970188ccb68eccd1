/**
 * The store commits the writes of one turn of the event loop together (a run's checkpoints, ledger entries,
 * locks and status, and those of the other runs of that turn), and the callback inbox acknowledges a message
 * only once it is durable. What must hold, read from another store on the same data as another process (or
 * the data after a crash) would see it:
 * - a request leaves for the service only once the checkpoint saying it is being sent is committed;
 * - a read sees the writes of the open turn, in the store that made them;
 * - a turn's writes are committed at its end, by `durable()`, and by `close()`;
 * - an inbox message is matched (`pendingInbox`) only once its commit is durable.
 * On a backend whose reads happen in the turn they are called (SQLite), a test also sees what is not committed
 * (or synced) yet.
 */
import { expect } from 'chai';
import type { Emulator } from '../../src/emulator/index.js';
import { runPlaybook } from '../../src/runner/runner.js';
import { accountDevices, clientFor, emulator, imei, playbook, suspendYaml } from '../runner/helpers.js';
import { forEachBackend } from './backends.js';
import { imei as imeiOf, message, nextTurns, owner, run, until } from './fixtures.js';

const T = 1_800_000_000_000;

const queued = (id: string) =>
  run(id, { playbook: 'p', status: 'queued', startedAt: '2026-11-23T00:00:00.000Z' });

forEachBackend('what is committed when', (b) => {
  let emu: Emulator;

  before(async function () {
    this.timeout(60_000);
    emu = await emulator({ devicesPerAccount: 50 });
  });
  after(async () => {
    await emu?.close();
  });

  it('sends a mutating request only once its `sending` checkpoint is committed, a read at once', async function () {
    this.timeout(60_000);
    const store = await b.open();
    const other = await b.reopen(store);
    const client = clientFor(emu);
    const account = emu.defaults.accounts[0]!;
    const device = imei((await accountDevices(emu, account, 1))[0]!);
    const seen: { action: string; checkpoints: string[] }[] = [];
    const original = client.callByName.bind(client);
    client.callByName = async (name, input, opts) => {
      // The moment the request leaves: what another process reads in the store.
      const steps = await other.loadSteps('order');
      seen.push({
        action: name,
        checkpoints: [...steps.values()].map((s) => (s as { status: string }).status),
      });
      return original(name, input, opts);
    };
    const summary = await runPlaybook(playbook(suspendYaml('order', account, [device])), {
      client,
      store,
      pollIntervalMs: 10,
      runId: 'order',
    });
    await client.close();
    await store.close();
    expect(summary.status).to.equal('succeeded');
    expect(seen[0]).to.deep.equal({ action: 'devices.suspend', checkpoints: ['sending'] });
    expect(seen[1]?.action).to.equal('requests.status');
    // A read changes nothing: the request status is asked at once, in the turn that wrote the step's
    // `confirming` checkpoint, which another process does not see yet.
    if (b.synchronous) expect(seen[1]).to.deep.equal({ action: 'requests.status', checkpoints: ['sending'] });
  });

  it('a read sees the writes of the open turn, before they are committed', async () => {
    const store = await b.open();
    store.createRun(queued('a'));
    store.updateRun('a', { status: 'running' });
    store.saveStep('a', 'list', { page: 1 });
    store.appendItems('a', 'list', 0, [['imei', [imeiOf(1)]]]);
    store.recordDevices(
      'a',
      'list',
      [{ kind: 'imei', outcome: 'succeeded', attempts: 1, ids: [imeiOf(1)] }],
      'x',
    );
    expect(await store.getRun('a')).to.deep.include({ id: 'a', status: 'running' });
    expect((await store.listRuns()).map((r) => r.id)).to.deep.equal(['a']);
    expect(await store.runIdsStartingWith('a', 5)).to.deep.equal(['a']);
    expect(await store.loadSteps('a')).to.deep.equal(new Map([['list', { page: 1 }]]));
    expect(await store.itemChunks('a', 'list', -1, 5)).to.deep.equal([
      { seq: 0, runs: [['imei', [imeiOf(1)]]] },
    ]);
    expect((await store.deviceResults('a')).map((r) => r.deviceId)).to.deep.equal([imeiOf(1)]);
    // And a write of the turn that frees something is seen by a deciding write of the same store.
    await store.registerOwner(owner('A'), T, 60_000, false);
    expect(await store.lockDevices('A', 'A/1', ['d'], T)).to.equal(undefined);
    store.unlockDevices(['A/1']);
    store.createRun(queued('b'));
    expect(await store.lockDevices('B', 'B/1', ['d'], T)).to.equal(undefined);
    expect((await store.claimRuns('B', undefined, T)).map((r) => r.id)).to.deep.equal(['a', 'b']);
  });

  it("commits a turn's writes at its end, for durable() and for close()", async () => {
    const store = await b.open();
    const other = await b.reopen(store);
    const count = async () => (await other.listRuns()).length;
    store.createRun(queued('a'));
    store.createRun(queued('b'));
    if (b.synchronous) expect(await count(), 'during the turn').to.equal(0);
    await store.durable();
    expect(await count(), 'once durable').to.equal(2);
    store.createRun(queued('c'));
    // Nobody asks for durable(): the turn is committed at its end all the same (on a server, a round trip later).
    await nextTurns();
    if (!b.synchronous) await until(async () => (await count()) === 3);
    expect(await count(), 'after the turn').to.equal(3);
    store.createRun(queued('d'));
    await store.close();
    expect(await count(), 'after close').to.equal(4);
    // And on the data again, after a close.
    const again = await b.reopen(other);
    expect((await again.listRuns()).map((r) => r.id).sort()).to.deep.equal(['a', 'b', 'c', 'd']);
  });

  it('durable() resolves at once when nothing is written, and after the commit of what is', async () => {
    const store = await b.open();
    const other = await b.reopen(store);
    await store.durable();
    for (let i = 0; i < 5; i++) {
      store.createRun(queued(`r${i}`));
      store.saveStep(`r${i}`, 's', { i });
      await store.durable();
      // Each write is committed by then: another process reads it.
      expect(await other.getRun(`r${i}`), `r${i}`).to.deep.include({ id: `r${i}`, status: 'queued' });
      expect(await other.loadSteps(`r${i}`)).to.deep.equal(new Map([['s', { i }]]));
    }
  });

  it('durable() and close() asked as the durable() before them resolves, resolve too', async () => {
    const store = await b.open();
    const other = await b.reopen(store);
    /** `p`, or an error once a second has passed: a promise nobody settles would hang the caller for good. */
    const settles = (p: Promise<void>, what: string) =>
      Promise.race([
        p.then(() => what),
        new Promise((resolve) => setTimeout(() => resolve(`${what} never resolved`), 1_000)),
      ]);
    store.createRun(queued('a'));
    // Each asked in the continuation of the one before, before anything else of the loop runs.
    expect(await store.durable().then(() => settles(store.durable(), 'durable'))).to.equal('durable');
    store.createRun(queued('b'));
    expect(await store.durable().then(() => settles(store.close(), 'close'))).to.equal('close');
    expect((await other.listRuns()).map((r) => r.id).sort()).to.deep.equal(['a', 'b']);
  });

  it('hands a stored callback to the matcher only once its commit is durable', async () => {
    const store = await b.open();
    const appended = store.appendInbox('A', [{ ...message('r-1'), service: 'DeviceUsage' }]);
    // SQLite: the read happens now, while the fsync of the commit runs on the thread pool.
    if (b.synchronous) expect(await store.pendingInbox('A', 10), 'while the sync runs').to.deep.equal([]);
    const ids = await appended;
    expect(ids).to.have.length(1);
    expect((await store.pendingInbox('A', 10)).map((e) => [e.id, e.requestId])).to.deep.equal([
      [ids[0], 'r-1'],
    ]);
    // Durable: another process finds it.
    const other = await b.reopen(store);
    expect((await other.pendingInbox('A', 10)).map((e) => e.requestId)).to.deep.equal(['r-1']);
  });
});
