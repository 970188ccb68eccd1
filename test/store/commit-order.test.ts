/**
 * The store commits the writes of one turn of the event loop together (a run's checkpoints, ledger entries,
 * locks and status, and those of the other runs of that turn), and the callback inbox syncs its commits off the
 * event loop. What must hold, read from a second connection as another process (or the file after a crash)
 * would see it:
 * - a request leaves for the service only once the checkpoint saying it is being sent is committed;
 * - a turn's writes are committed at its end, by `durable()`, and by `close()`;
 * - an inbox message is matched (`pendingInbox`) only once its commit is synced.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import type { Emulator } from '../../src/emulator/index.js';
import { runPlaybook } from '../../src/runner/runner.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { RunRecord } from '../../src/store/store.js';
import { accountDevices, clientFor, emulator, imei, playbook, tempDir } from '../runner/helpers.js';

/** What another connection sees in the file now. */
function peek<T>(file: string, read: (db: Database.Database) => T): T {
  const db = new Database(file, { readonly: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

const run = (id: string): RunRecord => ({
  id,
  playbook: 'p',
  status: 'queued',
  trigger: { type: 'manual' },
  inputs: {},
  startedAt: '2026-11-23T00:00:00.000Z',
});

describe('store: what is committed when', function () {
  this.timeout(60_000);
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let emu: Emulator;

  before(async () => {
    dir = await tempDir();
    emu = await emulator({ devicesPerAccount: 50 });
  });
  after(async () => {
    await emu?.close();
    await dir?.close();
  });

  it('sends a mutating request only once its `sending` checkpoint is committed, a read at once', async () => {
    const file = join(dir.dir, 'order.db');
    const store = new SqliteStore(file);
    const client = clientFor(emu);
    const account = emu.defaults.accounts[0]!;
    const device = imei((await accountDevices(emu, account, 1))[0]!);
    const seen: { action: string; checkpoints: string[] }[] = [];
    const original = client.callByName.bind(client);
    client.callByName = async (name, input, opts) => {
      // The moment the request leaves: what a process reading the file would find.
      seen.push({
        action: name,
        checkpoints: peek(file, (db) =>
          (db.prepare('SELECT state_json FROM run_steps').all() as { state_json: string }[]).map(
            (r) => (JSON.parse(r.state_json) as { status: string }).status,
          ),
        ),
      });
      return original(name, input, opts);
    };
    const summary = await runPlaybook(
      playbook(`
version: 1
name: order
on: { manual: true }
steps:
  - id: suspend
    uses: devices.suspend
    with:
      accountName: "${account}"
      devices: [{ id: "${device}", kind: imei }]
`),
      { client, store, pollIntervalMs: 10 },
    );
    await client.close();
    store.close();
    expect(summary.status).to.equal('succeeded');
    expect(seen[0]).to.deep.equal({ action: 'devices.suspend', checkpoints: ['sending'] });
    // A read changes nothing: the request status is asked at once, in the turn that wrote the step's
    // `confirming` checkpoint, which another process does not see yet.
    expect(seen[1]).to.deep.equal({ action: 'requests.status', checkpoints: ['sending'] });
  });

  it("commits a turn's writes at its end, for durable() and for close()", async () => {
    const file = join(dir.dir, 'turn.db');
    const count = () =>
      peek(file, (db) => (db.prepare('SELECT count(*) AS n FROM runs').get() as { n: number }).n);
    const store = new SqliteStore(file);
    store.createRun(run('a'));
    store.createRun(run('b'));
    expect(count(), 'during the turn').to.equal(0);
    await store.durable();
    expect(count(), 'once durable').to.equal(2);
    store.createRun(run('c'));
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(count(), 'after the turn').to.equal(3);
    store.createRun(run('d'));
    store.close();
    expect(count(), 'after close').to.equal(4);
  });

  it('hands a stored callback to the matcher only once its commit is synced', async () => {
    const file = join(dir.dir, 'inbox.db');
    const store = new SqliteStore(file);
    const appended = store.appendInbox([
      {
        service: 'DeviceUsage',
        kind: 'alertServiceResponse',
        requestId: 'r-1',
        payload: { requestId: 'r-1' },
        receivedAt: '2026-11-23T00:00:00.000Z',
      },
    ]);
    expect(store.pendingInbox(10), 'while the sync runs').to.deep.equal([]);
    expect(await appended).to.deep.equal([1]);
    expect(store.pendingInbox(10).map((e) => e.requestId)).to.deep.equal(['r-1']);
    store.close();
  });
});
