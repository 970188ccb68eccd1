/**
 * A run cancelled (or a step timed out) while a device action's request is on its way, on the real emulator over
 * loopback, on SQLite and PostgreSQL. The emulator holds the suspend for its latency, then acts whoever still
 * listens: a request that reached it suspends its devices after the cancel.
 *
 * Before, the step recorded the request's devices `failed` (`FB_ABORTED`, no request id), which says the service
 * did not act although it did; a request refused for the cancel before it left (waiting for its connection)
 * recorded them `failed` too (`FB_ABORTED`, or `ERROR` for one refused before it reached the client's connections),
 * although the service never saw it; and a cancel while the step read the devices' state after a lost answer (the
 * request may have acted) recorded nothing for them at all. Now a request that may have reached the service leaves
 * its devices `unconfirmed` (`OUTCOME UNKNOWN`), as a lost answer does, and one that certainly did not leave records
 * nothing of its own: the devices keep the result they had (none, in a first pass), as the docs say of a cancel.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { Pool } from 'undici';
import type { Client } from '../../src/api/client.js';
import type { Emulator } from '../../src/emulator/index.js';
import { runPlaybook } from '../../src/runner/runner.js';
import type { RunOptions } from '../../src/runner/types.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { RunSummary, Store } from '../../src/store/store.js';
import { postgresUrl } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';
import {
  accountDevices,
  actionCounts,
  calls,
  captureLogger,
  clientFor,
  emulator,
  imei,
  onRequestRead,
  playbook,
  setFaults,
  stepOf,
  suspendYaml,
} from './helpers.js';

const STORES: { name: string; open: (dir: string) => Promise<Store> }[] = [
  { name: 'SQLite', open: async (dir) => new SqliteStore(join(dir, 'state.db')) },
  { name: 'PostgreSQL', open: async () => openPostgresStore(await postgresUrl()) },
];

const SUSPEND_PATH = '/m2m/v1/devices/actions/suspend';
/** How long the emulator holds each request before it acts and answers: the cancel lands well within it. */
const LATENCY_MS = 1500;

/** A suspend of `ids`, and a `finally` that says what it reads of the step. */
const SUSPEND = (account: string, ids: string[], extra = '') =>
  suspendYaml(
    'cancel-while-sending',
    account,
    ids,
    `confirm: { timeout: 1h, pollInterval: 30s }\n    ${extra}`,
    `finally:
  - id: after
    uses: log
    with:
      message: "\${{ steps.suspend.status }}: \${{ steps.suspend.devices.unconfirmed }} unconfirmed, \${{ steps.suspend.devices.failed }} failed, \${{ size(steps.suspend.items) }} items"
`,
  );

for (const kind of STORES) {
  describe(`runner: a cancel while a device action's request is on its way (${kind.name})`, function () {
    this.timeout(60_000);
    let emu: Emulator;
    let account: string;
    let store: Store;
    let client: Client;
    let active: string[];
    const opened: { close(): Promise<void> }[] = [];

    before(async () => {
      emu = await emulator({ devicesPerAccount: 100 });
    });
    after(() => emu.close());
    beforeEach(async () => {
      emu.reset({ seed: 1, accounts: 1, devicesPerAccount: 100 });
      account = emu.defaults.accounts[0]!;
      active = (await accountDevices(emu, account))
        .filter((d) => d.state === 'active')
        .slice(0, 3)
        .map(imei)
        .sort();
      expect(active).to.have.length(3);
      store = await kind.open(tempDir('cancel-while-sending-'));
      client = clientFor(emu);
      // Logged in before the latency: only the step's own requests meet it.
      await client.callByName('devices.list', { accountName: account, maxNumberOfDevices: 1 });
    });
    afterEach(async () => {
      await setFaults(emu, {});
      for (const c of opened.splice(0)) await c.close();
      await client.close();
      await store.close();
    });

    /** Runs `yaml` under `signal`: its summary, and what its `finally` logged. */
    async function run(
      yaml: string,
      o: Partial<RunOptions> = {},
    ): Promise<{ s: RunSummary; said: string[] }> {
      const logger = captureLogger();
      const s = await runPlaybook(playbook(yaml), { client, store, logger, pollIntervalMs: 50, ...o });
      const said = logger.lines.filter((l) => l.meta.step === undefined).map((l) => l.message);
      return { s, said };
    }

    /** The step's ledger rows: device, outcome, error type, under a request id or not, attempts. */
    const rows = async (runId: string) =>
      (await store.deviceResults(runId, 'suspend'))
        .map((r) => [r.deviceId, r.outcome, r.errorType ?? null, r.requestId ?? null, r.attempts])
        .sort((a, b) => String(a[0]).localeCompare(String(b[0])));

    /** Resolves once the emulator has suspended every one of `ids` (it acts after its latency). */
    async function suspendedByTheService(ids: string[]): Promise<void> {
      for (let i = 0; i < 500; i++) {
        const devices = (await calls(emu)).devices;
        if (ids.every((id) => devices[id]?.some((m) => m.action === 'devices.suspend'))) return;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect.fail('the emulator never suspended the devices');
    }

    it('cancelled once the service has read the request: its devices are unconfirmed, not failed', async () => {
      await setFaults(emu, { latencyMs: LATENCY_MS });
      const cancel = new AbortController();
      const read = onRequestRead(emu, SUSPEND_PATH, 1, () =>
        cancel.abort(new Error('cancelled from the console')),
      );
      const { s, said } = await run(SUSPEND(account, active), { signal: cancel.signal });
      await read;
      expect([s.status, s.error]).to.deep.equal(['cancelled', 'cancelled from the console']);
      expect(stepOf(s, 'suspend')).to.include({ status: 'cancelled', error: 'cancelled from the console' });
      // The service had the request: it suspends the devices after the cancel.
      await suspendedByTheService(active);
      // What the service did is unknown to the run: unconfirmed, as for an answer lost, never `failed`.
      expect(await rows(s.runId)).to.deep.equal(
        active.map((id) => [id, 'unconfirmed', 'OUTCOME UNKNOWN', null, 1]),
      );
      const counts = { total: 3, failed: 0, unconfirmed: 3, byError: { 'OUTCOME UNKNOWN': 3 } };
      expect(stepOf(s, 'suspend').devices).to.deep.include(counts);
      expect(s.devices).to.deep.include(counts);
      expect((await store.getRun(s.runId))?.summary?.devices).to.deep.include(counts);
      expect(said).to.include('cancelled: 3 unconfirmed, 0 failed, 3 items');
    });

    it('a step that times out once the service has read the request: its devices are unconfirmed', async () => {
      await setFaults(emu, { latencyMs: LATENCY_MS });
      const { s } = await run(SUSPEND(account, active, 'timeout: 300ms'));
      expect([s.status, stepOf(s, 'suspend').status]).to.deep.equal(['failed', 'failed']);
      await suspendedByTheService(active);
      expect(await rows(s.runId)).to.deep.equal(
        active.map((id) => [id, 'unconfirmed', 'OUTCOME UNKNOWN', null, 1]),
      );
    });

    it('cancelled while its request waits for a connection: nothing left, nothing recorded', async () => {
      // One connection, held by a read the emulator keeps for its latency: the suspend waits for it in the pool,
      // past the client's rate slots, and is cut off before its first byte is written.
      const pool = new Pool(new URL(emu.baseUrl).origin, { connections: 1, pipelining: 1 });
      const narrow = clientFor(emu, { dispatcher: pool });
      opened.push(narrow, pool);
      // One page each: the held read takes the connection once.
      const list = { accountName: account, maxNumberOfDevices: 2000 };
      await narrow.callByName('devices.list', list);
      await setFaults(emu, { latencyMs: LATENCY_MS });
      const holding = narrow.callByName('devices.list', list);
      const cancel = new AbortController();
      const running = run(SUSPEND(account, active), { client: narrow, signal: cancel.signal });
      // The suspend is queued in the pool once the held read is running: cancelled there, before it is written.
      for (let i = 0; i < 500 && pool.stats.queued === 0; i++) await new Promise((r) => setTimeout(r, 5));
      expect(pool.stats, 'the suspend waits for the connection').to.include({ running: 1, queued: 1 });
      cancel.abort(new Error('cancelled from the console'));
      const { s, said } = await running;
      await holding;
      expect([s.status, stepOf(s, 'suspend').status]).to.deep.equal(['cancelled', 'cancelled']);
      expect((await actionCounts(emu))['devices.suspend'] ?? 0, 'suspends the service saw').to.equal(0);
      expect(await rows(s.runId)).to.deep.equal([]);
      expect(stepOf(s, 'suspend').devices).to.include({ total: 0, failed: 0, unconfirmed: 0 });
      expect(said).to.include('cancelled: 0 unconfirmed, 0 failed, 0 items');
    });

    it('cancelled before its request reached the client: nothing recorded', async () => {
      // The cancel lands as the `sending` checkpoint is written, before the request leaves the runner.
      const cancel = new AbortController();
      const save = store.saveStep.bind(store);
      store.saveStep = (runId, key, state, devices) => {
        save(runId, key, state, devices);
        if ((state as { status?: string }).status === 'sending')
          cancel.abort(new Error('cancelled from the console'));
      };
      const { s } = await run(SUSPEND(account, active), { signal: cancel.signal });
      expect([s.status, stepOf(s, 'suspend').status]).to.deep.equal(['cancelled', 'cancelled']);
      expect((await actionCounts(emu))['devices.suspend'] ?? 0, 'suspends the service saw').to.equal(0);
      expect(await rows(s.runId)).to.deep.equal([]);
    });

    it('cancelled while it reads the state of devices whose answer was lost: they are unconfirmed', async () => {
      // The service takes the suspend, the carrier never finishes it, and the answer is lost: the step reads the
      // devices' state until the confirmation time, and is cancelled as it waits for its next read.
      await setFaults(emu, { resetNext: { 'devices.suspend': 1 }, neverFinishDevices: active });
      const cancel = new AbortController();
      const before = (await actionCounts(emu))['devices.list'] ?? 0;
      const running = run(SUSPEND(account, active), { signal: cancel.signal });
      for (let i = 0; i < 500 && ((await actionCounts(emu))['devices.list'] ?? 0) === before; i++)
        await new Promise((r) => setTimeout(r, 10));
      cancel.abort(new Error('cancelled from the console'));
      const { s } = await running;
      expect([s.status, stepOf(s, 'suspend').status]).to.deep.equal(['cancelled', 'cancelled']);
      expect(await rows(s.runId)).to.deep.equal(
        active.map((id) => [id, 'unconfirmed', 'OUTCOME UNKNOWN', null, 1]),
      );
      expect(stepOf(s, 'suspend').devices).to.include({ total: 3, unconfirmed: 3 });
    });
  });
}
