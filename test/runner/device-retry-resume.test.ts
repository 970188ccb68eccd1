/**
 * A device-state step's `devices.retry` passes across an interruption (a restart, a lease lost), against the
 * emulator over loopback, in process, on a SQLite state file and on a PostgreSQL database (the stores write the
 * ledger differently: SQLite at once, PostgreSQL a turn of writes at a time):
 * - The ledger's latest entry of each device is true at every moment. A run interrupted in pass 2 wrote the pass-1
 *   results as it stopped, after the pass-2 `accepted` entries: `runs show`, `runs cancel` and the run's counts
 *   saw each retried device's pass-1 failure as its latest until the run resumed; and a run killed there had
 *   written no pass-1 result at all (a device pass 1 confirmed stayed `accepted`). The results of the passes
 *   before are now written with each pass's `accepted` entries, in one write.
 * - A resumed run goes on from the pass it was in. It counted its passes from the first again: a device refused
 *   in every pass of `maxAttempts: 3` was sent in 4 passes (5 sends with the lost one of pass 1), not 3. The
 *   checkpoint now says the pass of each request of a pass after the first; one without it (written by the version
 *   before) resumes as that version did.
 * - A pass stopped while its request was on its way (sent, the answer not recorded) is reconciled before it is sent
 *   again. A resumed run confirmed the passes before and sent the pass again: with the service's messages, a device
 *   the lost request had suspended was suspended twice; without them, the passes before were confirmed by reading
 *   the devices' state that the lost request had changed, and the device's latest entry was an earlier pass's
 *   `succeeded` with that pass's attempts. The checkpoint now marks a pass's send before it leaves (with the results
 *   of the passes before), and a resumed run reads that pass's devices' state first; one without the mark (the
 *   version before) sends the pass again, as that version did.
 * - A stop records no result of its own. A run stopped while a pass's request was on its way recorded that pass's
 *   devices `failed` (`ERROR`, or `FB_ABORTED`), and one stopped while it read their state after a restart
 *   `unconfirmed` (`ERROR`), without a request id: until the run resumed, their latest entry said what the stop did,
 *   not the service. The stop now leaves their latest entry what it was (the pass before's result), as the checkpoint
 *   says the pass is being sent and the resumed run reads their state.
 * - What a resumed pass's read of the devices' state found is recorded once. The read has no request id, and a run
 *   resumed after it read only the entries under its requests: stopped again in that pass before its request was
 *   accepted, the next resume read again and recorded the same `succeeded` a second time (in pass 1 too); stopped
 *   again once the pass's request for the others was accepted, it sent the device the read had found changed again
 *   in the next pass (suspended twice). A resumed run now takes the reads' results from the ledger too; the stop's
 *   own entries of the version before (`ERROR`, under no request id) are not among them.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import type { Client } from '../../src/api/client.js';
import type { Emulator } from '../../src/emulator/index.js';
import { NetworkError } from '../../src/errors.js';
import { runPlaybook } from '../../src/runner/runner.js';
import type { ConfirmationSource, KeptRequest } from '../../src/runner/types.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { DeviceGroup, Store } from '../../src/store/store.js';
import { postgresUrl } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';
import {
  accountDevices,
  calls,
  clientFor,
  emulator,
  imei,
  interruptedRun,
  playbook,
  type SeedDevice,
} from './helpers.js';

const STORES: { name: string; open: (dir: string) => Promise<Store> }[] = [
  { name: 'SQLite', open: async (dir) => new SqliteStore(join(dir, 'state.db')) },
  { name: 'PostgreSQL', open: async () => openPostgresStore(await postgresUrl()) },
];

for (const kind of STORES) {
  describe(`runner: devices.retry passes across an interruption (${kind.name})`, function () {
    this.timeout(60_000);
    let emu: Emulator;
    let client: Client;
    let store: Store;
    let active: string;
    let pending: string[];
    /** The suspends sent for each device, as this client made them (the first one lost on its way). */
    let sends: Map<string, number>;
    /** The suspend requests sent, lost or not. */
    let requests: number;
    /** The service plan of the active device: what activating a pending one takes. */
    let plan: string;
    /** The account the step acts in. */
    let account: string;
    /**
     * Set by a test: pass 2's request is answered, and the run is stopped before the answer is recorded (the
     * request is on its way back when the process stops); `answered` once it was.
     */
    let stopAtPass2: boolean;
    /** Set by a test: as `stopAtPass2`, of pass 1's request as the step's retry sends it again. */
    let stopAtPass1: boolean;
    let answered: boolean;
    /**
     * Set by a test: the next suspend request is held until the run is stopped, and never leaves (the client refuses
     * a request of a stopped run); `held` once it was.
     */
    let holdNext: boolean;
    let held: boolean;

    before(async () => {
      emu = await emulator({ devicesPerAccount: 200 });
    });
    after(() => emu.close());
    beforeEach(async () => {
      emu.reset({ seed: 1, accounts: 1, devicesPerAccount: 200 });
      account = emu.defaults.accounts[0]!;
      const devices = await accountDevices(emu, account);
      const first = devices.find((d) => d.state === 'active')!;
      active = imei(first);
      plan = String((first as SeedDevice & { servicePlan: string }).servicePlan);
      // Pending devices: the service refuses to suspend them, in every pass.
      pending = devices
        .filter((d) => d.state === 'pending')
        .slice(0, 2)
        .map(imei)
        .sort();
      expect(pending).to.have.length(2);
      store = await kind.open(tempDir('device-retry-resume-'));
      client = clientFor(emu);
      sends = new Map();
      requests = 0;
      stopAtPass2 = false;
      stopAtPass1 = false;
      answered = false;
      holdNext = false;
      held = false;
      const call = client.callByName.bind(client);
      client.callByName = async (name, input, opts) => {
        if (name !== 'devices.suspend') return call(name, input, opts);
        if (holdNext) {
          holdNext = false;
          held = true;
          await stopOf(opts?.signal);
          return call(name, input, opts);
        }
        requests++;
        const devices = (input as { devices: { id: string }[] }).devices;
        for (const { id } of devices) sends.set(id, (sends.get(id) ?? 0) + 1);
        // The first send is lost before it reaches the service: the step's retry sends it again (pass 1 has 2).
        if (requests === 1) throw new NetworkError(name, 'ECONNRESET', false, 'socket hang up');
        // Before pass 2, a test activates the first pending device: pass 2 suspends it.
        if (requests === 3 && stopAtPass2) await activate(pending[0]!);
        // The first devices.retry pass's request waits at the carrier for the test's clock.
        if (requests === 3 && !stopAtPass1) emu.setFaults({ processingSeconds: 30 });
        if (!(requests === 3 && stopAtPass2) && !(requests === 2 && stopAtPass1))
          return call(name, input, opts);
        // The service took the request; its answer is not recorded before the process stops.
        const signal = opts?.signal;
        await call(name, input, opts);
        answered = true;
        await stopOf(signal);
        throw signal?.reason;
      };
      const activate = (id: string) =>
        call('devices.activate', {
          accountName: account,
          devices: [{ id, kind: 'imei' }],
          servicePlan: plan,
        });
      store.createRun({
        id: 'r1',
        playbook: 'retried',
        status: 'running',
        trigger: { type: 'manual' },
        inputs: {},
        startedAt: new Date().toISOString(),
      });
    });
    /** Resolves once the run whose signal this is is stopped. */
    const stopOf = (signal: AbortSignal | undefined) => {
      if (!signal) throw new Error('a device-state step calls with the run signal');
      return new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    };
    afterEach(async () => {
      await store.close();
      await client.close();
    });

    /** `confirm`: the step's confirmation timeout, which also bounds how long a resumed run watches a lost send. */
    const pb = (confirm = '20s') =>
      playbook(`
version: 1
name: retried
on: { manual: true }
steps:
  - id: suspend
    uses: devices.suspend
    with:
      accountName: '${emu.defaults.accounts[0]}'
      devices: [${[active, ...pending].map((id) => `{ id: '${id}', kind: imei }`).join(', ')}]
    retry: { on: [network], maxAttempts: 3, delay: 10ms }
    confirm: { timeout: ${confirm}, pollInterval: 20ms }
    devices:
      retry: [{ on: [STATE NOT CHANGED, INVALID DEVICE STATE], maxAttempts: 3 }]
`);

    /** The step's checkpoint once it confirms its second request (the first devices.retry pass's). */
    const confirmingPass2 = async () => {
      const cp = (await store.loadSteps('r1')).get('suspend') as
        { status?: string; accepted?: KeptRequest[] } | undefined;
      return cp?.status === 'confirming' && cp.accepted?.length === 2 ? cp.accepted : undefined;
    };

    /** Each device's latest entry in the ledger: outcome and attempts. */
    const latest = async () =>
      Object.fromEntries(
        (await store.deviceResults('r1', 'suspend')).map((r) => [r.deviceId, [r.outcome, r.attempts]]),
      );

    /** The run interrupted once it confirms the first devices.retry pass's request. */
    const interrupted = async () => {
      /** The ledger's latest entries while the run was in pass 2: what a process killed then leaves. */
      let during: Record<string, unknown> | undefined;
      await interruptedRun(pb(), { client, store, runId: 'r1' }, async () => {
        if (!(await confirmingPass2())) return false;
        during = await latest();
        return true;
      });
      return during;
    };

    it("the ledger's latest entry of a device sent again in pass 2 is of pass 2, while it runs and once it stops", async () => {
      const during = await interrupted();
      // The active device's pass-1 result, and the pending ones' pass-2 acceptance (their request's own send).
      const truth = {
        [active]: ['succeeded', 2],
        [pending[0]!]: ['accepted', 1],
        [pending[1]!]: ['accepted', 1],
      };
      expect(await latest(), 'once it stopped').to.deep.equal(truth);
      expect(during, 'while the run confirmed pass 2').to.deep.equal(truth);
      // The pass-1 results, written with the pass-2 acceptance, come before it in the ledger.
      const kept = (await confirmingPass2())!;
      const under = await store.resultsUnder(
        'r1',
        'suspend',
        kept.map((r) => r.requestId),
      );
      expect(under.map((g) => [g.outcome, g.requestId, g.attempts, [...g.ids].sort()])).to.deep.equal([
        ['accepted', kept[0]!.requestId, 2, [active, ...pending].sort()],
        ['succeeded', kept[0]!.requestId, 2, [active]],
        ['failed', kept[0]!.requestId, 2, pending],
        ['accepted', kept[1]!.requestId, 1, pending],
      ]);
    });

    it('a run cancelled in pass 2 leaves the devices it sent again `unconfirmed` under that pass', async () => {
      const controller = new AbortController();
      const running = runPlaybook(pb(), { client, store, runId: 'r1', signal: controller.signal });
      for (let i = 0; i < 500 && !(await confirmingPass2()); i++) await new Promise((r) => setTimeout(r, 10));
      controller.abort();
      const s = await running;
      expect(s.status).to.equal('cancelled');
      // Their sends: two in pass 1 (one lost), one in pass 2.
      expect(await latest()).to.deep.equal({
        [active]: ['succeeded', 2],
        [pending[0]!]: ['unconfirmed', 3],
        [pending[1]!]: ['unconfirmed', 3],
      });
      const step = s.steps.find((t) => t.id === 'suspend')!;
      expect([step.devices.total, step.devices.succeeded, step.devices.unconfirmed]).to.deep.equal([3, 1, 2]);
    });

    it('a run resumed in pass 2 goes on from there: no device is sent in more passes than maxAttempts', async () => {
      await interrupted();
      expect(requests).to.equal(3);
      emu.setFaults({ processingSeconds: 0 });
      emu.advance(60);
      const s = await runPlaybook(pb(), { client, store, runId: 'r1' });
      expect(s.status, s.error).to.equal('succeeded');
      // Pass 3 only: pass 1 sent twice (one lost), passes 2 and 3 once each.
      expect(requests).to.equal(4);
      expect(sends.get(active)).to.equal(2);
      expect(pending.map((id) => sends.get(id))).to.deep.equal([4, 4]);
      expect(await latest()).to.deep.equal({
        [active]: ['succeeded', 2],
        [pending[0]!]: ['failed', 4],
        [pending[1]!]: ['failed', 4],
      });
      const step = s.steps.find((t) => t.id === 'suspend')!;
      expect(step.devices.total).to.equal(3);
      expect([step.devices.succeeded, step.devices.failed]).to.deep.equal([1, 2]);
    });

    it('a checkpoint of the version before (no pass) resumes as that version did', async () => {
      await interrupted();
      // The checkpoint as the version before wrote it: its requests without their pass.
      const cp = (await store.loadSteps('r1')).get('suspend') as { accepted: KeptRequest[] };
      const old = {
        ...cp,
        accepted: cp.accepted.map(({ requestId, accountName, attempts, at }) => ({
          requestId,
          accountName,
          attempts,
          at,
        })),
      };
      store.saveStep('r1', 'suspend', old);
      emu.setFaults({ processingSeconds: 0 });
      emu.advance(60);
      const s = await runPlaybook(pb(), { client, store, runId: 'r1' });
      expect(s.status, s.error).to.equal('succeeded');
      // Its passes counted from the first again, as the version before did: passes 2 and 3 once more.
      expect(requests).to.equal(5);
      expect(pending.map((id) => sends.get(id))).to.deep.equal([5, 5]);
      expect(await latest()).to.deep.equal({
        [active]: ['succeeded', 2],
        [pending[0]!]: ['failed', 5],
        [pending[1]!]: ['failed', 5],
      });
      const step = s.steps.find((t) => t.id === 'suspend')!;
      expect([step.devices.total, step.devices.succeeded, step.devices.failed]).to.deep.equal([3, 1, 2]);
    });

    /**
     * The daemon's listener: the CarrierService message of each device of these requests that the carrier has
     * finished, with the service's reason for one it did not change.
     */
    const listener: ConfirmationSource = {
      listening: () => true,
      follow(requestIds, onResult) {
        for (const id of requestIds)
          for (const d of emu.request(id)!.devices.filter((x) => x.status !== 'Pending'))
            onResult(id, {
              device: `imei:${d.deviceIds[0]!.id}`,
              ids: d.deviceIds.map((x) => `${x.kind.toLowerCase()}:${x.id}`),
              succeeded: d.status === 'Success',
              ...(d.reason ? { errorType: d.reason.code, message: d.reason.message } : {}),
            });
        return () => undefined;
      },
    };

    /**
     * The run stopped while pass 2's request is on its way back: the service took it (the first pending device,
     * activated after pass 1 refused it, is in it, and the carrier suspends it once the test's clock has moved), and
     * the answer is never recorded. Returns the checkpoint it left.
     */
    const stoppedInPass2Send = async (confirmations?: ConfirmationSource) => {
      stopAtPass2 = true;
      const o = { client, store, runId: 'r1', ...(confirmations ? { confirmations } : {}) };
      await interruptedRun(pb('1s'), o, () => answered);
      expect(requests).to.equal(3);
      emu.setFaults({ processingSeconds: 0 });
      emu.advance(60);
      return (await store.loadSteps('r1')).get('suspend') as Record<string, unknown>;
    };

    /** How many times the emulator suspended `id`. */
    const suspended = async (id: string) =>
      ((await calls(emu)).devices[id] ?? []).filter((m) => m.action === 'devices.suspend').length;

    for (const confirms of ["the devices' state", "the service's messages"]) {
      const confirmations = confirms === "the service's messages" ? listener : undefined;
      it(`a run stopped while pass 2's request was on its way reads the devices' state before it sends that pass again (confirmed by ${confirms})`, async () => {
        await stoppedInPass2Send(confirmations);
        const s = await runPlaybook(pb('1s'), {
          client,
          store,
          runId: 'r1',
          ...(confirmations ? { confirmations } : {}),
        });
        expect(s.status, s.error).to.equal('succeeded');
        // The device the lost request suspended is not sent again: its sends are pass 1's two (one lost) and pass
        // 2's. The other pending one, which it did not change, is: pass 2 again, then pass 3.
        expect(sends.get(pending[0]!)).to.equal(3);
        expect(await suspended(pending[0]!)).to.equal(1);
        expect(sends.get(pending[1]!)).to.equal(5);
        expect(requests).to.equal(5);
        // Each device's latest entry is of the pass that settled it: pass 2's, read from the state, for the first.
        expect(await latest()).to.deep.equal({
          [active]: ['succeeded', 2],
          [pending[0]!]: ['succeeded', 3],
          [pending[1]!]: ['failed', 5],
        });
        const step = s.steps.find((t) => t.id === 'suspend')!;
        expect([step.devices.total, step.devices.succeeded, step.devices.failed]).to.deep.equal([3, 2, 1]);
      });
    }

    it("a checkpoint without the mark of pass 2's send (the version before) resumes as that version did", async () => {
      const cp = await stoppedInPass2Send(listener);
      const { sendingPass: mark, ...old } = cp;
      expect(mark, 'the mark of the pass being sent').to.include({ rule: 0, attempt: 2 });
      store.saveStep('r1', 'suspend', old);
      const s = await runPlaybook(pb('1s'), { client, store, runId: 'r1', confirmations: listener });
      expect(s.status, s.error).to.equal('succeeded');
      // Pass 2 sent again to every device it named: the one the lost request suspended, a second time.
      expect(sends.get(pending[0]!)).to.equal(4);
      expect(await suspended(pending[0]!)).to.equal(2);
    });

    /**
     * Every entry of device `id` in the step, oldest first: its outcome, error type, whether it is under a request id,
     * and attempts.
     */
    const entries = async (id: string) =>
      (await store.deviceHistory(id, 50))
        .reverse()
        .map((r) => [
          r.outcome,
          r.errorType ?? null,
          r.requestId === undefined ? 'none' : 'request',
          r.attempts,
        ]);

    it("a run stopped in pass 2's send, or as it reads that pass's devices' state, records no result the stop made", async () => {
      /** The pending devices' entries under no request id: none is a result of the service, nor of a read. */
      const unrequested = async () =>
        (await Promise.all(pending.map(entries))).flat().filter((e) => e[2] === 'none');
      /** Each device's latest entry while pass 2 is sent: pass 1's result. */
      const passOne = {
        [active]: ['succeeded', 2],
        [pending[0]!]: ['failed', 2],
        [pending[1]!]: ['failed', 2],
      };
      await stoppedInPass2Send();
      expect(await unrequested(), "stopped while pass 2's request was on its way").to.deep.equal([]);
      expect(await latest()).to.deep.equal(passOne);
      // Resumed, and stopped while its read of pass 2's devices' state is on its way: the read fails as a stopped
      // client fails it.
      const items = client.items.bind(client);
      let reading = false;
      client.items = (action, input, opts) => {
        if (action !== 'devices.list' || reading) return items(action, input, opts);
        reading = true;
        return (async function* () {
          await stopOf(opts?.signal);
          yield* items(action, input, opts);
        })();
      };
      await interruptedRun(pb('1s'), { client, store, runId: 'r1' }, () => reading);
      expect(await unrequested(), "stopped while it read pass 2's devices' state").to.deep.equal([]);
      expect(await latest()).to.deep.equal(passOne);
      const s = await runPlaybook(pb('1s'), { client, store, runId: 'r1' });
      expect(s.status, s.error).to.equal('succeeded');
      expect(await latest()).to.deep.equal({
        [active]: ['succeeded', 2],
        [pending[0]!]: ['succeeded', 3],
        [pending[1]!]: ['failed', 5],
      });
      expect(await suspended(pending[0]!)).to.equal(1);
    });

    /** The truth once the run ends, after pass 2's lost request suspended the first pending device. */
    const settled = () => ({
      [active]: ['succeeded', 2],
      [pending[0]!]: ['succeeded', 3],
      [pending[1]!]: ['failed', 5],
    });

    it("a run stopped twice in pass 2's send records once what the read of its devices' state found", async () => {
      await stoppedInPass2Send();
      // Resumed: its read finds the device the lost request suspended, and it is stopped as it sends the other.
      holdNext = true;
      await interruptedRun(pb('1s'), { client, store, runId: 'r1' }, () => held);
      const s = await runPlaybook(pb('1s'), { client, store, runId: 'r1' });
      expect(s.status, s.error).to.equal('succeeded');
      // Pass 1's acceptance and result, then the read's: once.
      expect(await entries(pending[0]!)).to.deep.equal([
        ['accepted', null, 'request', 2],
        ['failed', 'STATE NOT CHANGED', 'request', 2],
        ['succeeded', null, 'none', 3],
      ]);
      expect(await suspended(pending[0]!)).to.equal(1);
      expect(sends.get(pending[1]!)).to.equal(5);
      expect(await latest()).to.deep.equal(settled());
      const step = s.steps.find((t) => t.id === 'suspend')!;
      expect([step.devices.total, step.devices.succeeded, step.devices.failed]).to.deep.equal([3, 2, 1]);
    });

    it("a run stopped in pass 2's send, then as it confirms that pass, does not send again a device the read found changed", async () => {
      await stoppedInPass2Send();
      // Resumed: its read finds the device the lost request suspended; the request it sends for the other waits at
      // the carrier, and the run is stopped as it confirms it.
      emu.setFaults({ processingSeconds: 30 });
      await interruptedRun(pb('1s'), { client, store, runId: 'r1' }, async () =>
        Boolean(await confirmingPass2()),
      );
      emu.setFaults({ processingSeconds: 0 });
      emu.advance(60);
      const s = await runPlaybook(pb('1s'), { client, store, runId: 'r1' });
      expect(s.status, s.error).to.equal('succeeded');
      // Pass 3 sends the other alone: the first keeps the read's result.
      expect(sends.get(pending[0]!)).to.equal(3);
      expect(await suspended(pending[0]!)).to.equal(1);
      expect(await entries(pending[0]!)).to.deep.equal([
        ['accepted', null, 'request', 2],
        ['failed', 'STATE NOT CHANGED', 'request', 2],
        ['succeeded', null, 'none', 3],
      ]);
      expect(await latest()).to.deep.equal(settled());
      const step = s.steps.find((t) => t.id === 'suspend')!;
      expect([step.devices.total, step.devices.succeeded, step.devices.failed]).to.deep.equal([3, 2, 1]);
    });

    it("a run the version before stopped in pass 2's send (its stop's own entries) resumes as that version did", async () => {
      await stoppedInPass2Send();
      // What the version before's stop wrote for the pass's devices: the stop's error, under no request id.
      const at = new Date().toISOString();
      const stop = {
        kind: 'imei',
        outcome: 'failed',
        errorType: 'ERROR',
        errorClass: 'permanent',
        attempts: 3,
      };
      store.recordDevices('r1', 'suspend', [{ ...stop, ids: [...pending] } as DeviceGroup], at);
      const s = await runPlaybook(pb('1s'), { client, store, runId: 'r1' });
      expect(s.status, s.error).to.equal('succeeded');
      expect(await suspended(pending[0]!)).to.equal(1);
      expect(sends.get(pending[1]!)).to.equal(5);
      expect(await latest()).to.deep.equal(settled());
      const step = s.steps.find((t) => t.id === 'suspend')!;
      expect([step.devices.total, step.devices.succeeded, step.devices.failed]).to.deep.equal([3, 2, 1]);
    });

    it("a run stopped twice in pass 1's send records once what the read of its devices' state found", async () => {
      stopAtPass1 = true;
      await interruptedRun(pb('1s'), { client, store, runId: 'r1' }, () => answered);
      emu.advance(60);
      // Resumed: its read finds the device the lost request suspended, and it is stopped as it sends the others.
      holdNext = true;
      await interruptedRun(pb('1s'), { client, store, runId: 'r1' }, () => held);
      expect(await entries(active), 'stopped after the read').to.deep.equal([['succeeded', null, 'none', 1]]);
      const s = await runPlaybook(pb('1s'), { client, store, runId: 'r1' });
      expect(s.status, s.error).to.equal('succeeded');
      expect(await entries(active)).to.deep.equal([['succeeded', null, 'none', 1]]);
      expect(await suspended(active)).to.equal(1);
      const step = s.steps.find((t) => t.id === 'suspend')!;
      expect([step.devices.total, step.devices.succeeded, step.devices.failed]).to.deep.equal([3, 1, 2]);
    });
  });
}
