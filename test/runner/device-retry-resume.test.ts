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
import { runPlaybook } from '../../src/runner/runner.js';
import type { ConfirmationSource, KeptRequest } from '../../src/runner/types.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { DeviceGroup, Store } from '../../src/store/store.js';
import { postgresUrl } from '../helpers/postgres.js';
import { calls, interruptedRun } from './helpers.js';
import { onRetriedSuspend, stopOf } from './retried-suspend.js';

const STORES: { name: string; open: (dir: string) => Promise<Store> }[] = [
  { name: 'SQLite', open: async (dir) => new SqliteStore(join(dir, 'state.db')) },
  { name: 'PostgreSQL', open: async () => openPostgresStore(await postgresUrl()) },
];

for (const kind of STORES) {
  describe(`runner: devices.retry passes across an interruption (${kind.name})`, function () {
    this.timeout(60_000);
    const w = onRetriedSuspend(kind.open);

    /** The run interrupted once it confirms the first devices.retry pass's request. */
    const interrupted = async () => {
      /** The ledger's latest entries while the run was in pass 2: what a process killed then leaves. */
      let during: Record<string, unknown> | undefined;
      await interruptedRun(w.pb(), w.options(), async () => {
        if (!(await w.confirmingPass2())) return false;
        during = await w.latest();
        return true;
      });
      return during;
    };

    it("the ledger's latest entry of a device sent again in pass 2 is of pass 2, while it runs and once it stops", async () => {
      const during = await interrupted();
      // The active device's pass-1 result, and the pending ones' pass-2 acceptance (their request's own send).
      const truth = {
        [w.active]: ['succeeded', 2],
        [w.pending[0]!]: ['accepted', 1],
        [w.pending[1]!]: ['accepted', 1],
      };
      expect(await w.latest(), 'once it stopped').to.deep.equal(truth);
      expect(during, 'while the run confirmed pass 2').to.deep.equal(truth);
      // The pass-1 results, written with the pass-2 acceptance, come before it in the ledger.
      const kept = (await w.confirmingPass2())!;
      const under = await w.store.resultsUnder(
        'r1',
        'suspend',
        kept.map((r) => r.requestId),
      );
      expect(under.map((g) => [g.outcome, g.requestId, g.attempts, [...g.ids].sort()])).to.deep.equal([
        ['accepted', kept[0]!.requestId, 2, [w.active, ...w.pending].sort()],
        ['succeeded', kept[0]!.requestId, 2, [w.active]],
        ['failed', kept[0]!.requestId, 2, w.pending],
        ['accepted', kept[1]!.requestId, 1, w.pending],
      ]);
    });

    it('a run cancelled in pass 2 leaves the devices it sent again `unconfirmed` under that pass', async () => {
      const controller = new AbortController();
      const running = runPlaybook(w.pb(), w.options({ signal: controller.signal }));
      for (let i = 0; i < 500 && !(await w.confirmingPass2()); i++)
        await new Promise((r) => setTimeout(r, 10));
      controller.abort();
      const s = await running;
      expect(s.status).to.equal('cancelled');
      // Their sends: two in pass 1 (one lost), one in pass 2.
      expect(await w.latest()).to.deep.equal({
        [w.active]: ['succeeded', 2],
        [w.pending[0]!]: ['unconfirmed', 3],
        [w.pending[1]!]: ['unconfirmed', 3],
      });
      const step = s.steps.find((t) => t.id === 'suspend')!;
      expect([step.devices.total, step.devices.succeeded, step.devices.unconfirmed]).to.deep.equal([3, 1, 2]);
    });

    it('a run resumed in pass 2 goes on from there: no device is sent in more passes than maxAttempts', async () => {
      await interrupted();
      expect(w.requests).to.equal(3);
      w.emu.setFaults({ processingSeconds: 0 });
      w.emu.advance(60);
      const s = await runPlaybook(w.pb(), w.options());
      expect(s.status, s.error).to.equal('succeeded');
      // Pass 3 only: pass 1 sent twice (one lost), passes 2 and 3 once each.
      expect(w.requests).to.equal(4);
      expect(w.sends.get(w.active)).to.equal(2);
      expect(w.pending.map((id) => w.sends.get(id))).to.deep.equal([4, 4]);
      expect(await w.latest()).to.deep.equal({
        [w.active]: ['succeeded', 2],
        [w.pending[0]!]: ['failed', 4],
        [w.pending[1]!]: ['failed', 4],
      });
      const step = s.steps.find((t) => t.id === 'suspend')!;
      expect(step.devices.total).to.equal(3);
      expect([step.devices.succeeded, step.devices.failed]).to.deep.equal([1, 2]);
    });

    it('a checkpoint of the version before (no pass) resumes as that version did', async () => {
      await interrupted();
      // The checkpoint as the version before wrote it: its requests without their pass.
      const cp = (await w.store.loadSteps('r1')).get('suspend') as { accepted: KeptRequest[] };
      const old = {
        ...cp,
        accepted: cp.accepted.map(({ requestId, accountName, attempts, at }) => ({
          requestId,
          accountName,
          attempts,
          at,
        })),
      };
      w.store.saveStep('r1', 'suspend', old);
      w.emu.setFaults({ processingSeconds: 0 });
      w.emu.advance(60);
      const s = await runPlaybook(w.pb(), w.options());
      expect(s.status, s.error).to.equal('succeeded');
      // Its passes counted from the first again, as the version before did: passes 2 and 3 once more.
      expect(w.requests).to.equal(5);
      expect(w.pending.map((id) => w.sends.get(id))).to.deep.equal([5, 5]);
      expect(await w.latest()).to.deep.equal({
        [w.active]: ['succeeded', 2],
        [w.pending[0]!]: ['failed', 5],
        [w.pending[1]!]: ['failed', 5],
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
          for (const d of w.emu.request(id)!.devices.filter((x) => x.status !== 'Pending'))
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
      w.stopAtPass2 = true;
      const o = w.options(confirmations ? { confirmations } : {});
      await interruptedRun(w.pb({ confirm: '1s' }), o, () => w.answered);
      expect(w.requests).to.equal(3);
      w.emu.setFaults({ processingSeconds: 0 });
      w.emu.advance(60);
      return (await w.store.loadSteps('r1')).get('suspend') as Record<string, unknown>;
    };

    /** How many times the emulator suspended `id`. */
    const suspended = async (id: string) =>
      ((await calls(w.emu)).devices[id] ?? []).filter((m) => m.action === 'devices.suspend').length;

    for (const confirms of ["the devices' state", "the service's messages"]) {
      const confirmations = confirms === "the service's messages" ? listener : undefined;
      it(`a run stopped while pass 2's request was on its way reads the devices' state before it sends that pass again (confirmed by ${confirms})`, async () => {
        await stoppedInPass2Send(confirmations);
        const s = await runPlaybook(
          w.pb({ confirm: '1s' }),
          w.options(confirmations ? { confirmations } : {}),
        );
        expect(s.status, s.error).to.equal('succeeded');
        // The device the lost request suspended is not sent again: its sends are pass 1's two (one lost) and pass
        // 2's. The other pending one, which it did not change, is: pass 2 again, then pass 3.
        expect(w.sends.get(w.pending[0]!)).to.equal(3);
        expect(await suspended(w.pending[0]!)).to.equal(1);
        expect(w.sends.get(w.pending[1]!)).to.equal(5);
        expect(w.requests).to.equal(5);
        // Each device's latest entry is of the pass that settled it: pass 2's, read from the state, for the first.
        expect(await w.latest()).to.deep.equal({
          [w.active]: ['succeeded', 2],
          [w.pending[0]!]: ['succeeded', 3],
          [w.pending[1]!]: ['failed', 5],
        });
        const step = s.steps.find((t) => t.id === 'suspend')!;
        expect([step.devices.total, step.devices.succeeded, step.devices.failed]).to.deep.equal([3, 2, 1]);
      });
    }

    it("a checkpoint without the mark of pass 2's send (the version before) resumes as that version did", async () => {
      const cp = await stoppedInPass2Send(listener);
      const { sendingPass: mark, ...old } = cp;
      expect(mark, 'the mark of the pass being sent').to.include({ rule: 0, attempt: 2 });
      w.store.saveStep('r1', 'suspend', old);
      const s = await runPlaybook(w.pb({ confirm: '1s' }), w.options({ confirmations: listener }));
      expect(s.status, s.error).to.equal('succeeded');
      // Pass 2 sent again to every device it named: the one the lost request suspended, a second time.
      expect(w.sends.get(w.pending[0]!)).to.equal(4);
      expect(await suspended(w.pending[0]!)).to.equal(2);
    });

    /**
     * Every entry of device `id` in the step, oldest first: its outcome, error type, whether it is under a request id,
     * and attempts.
     */
    const entries = async (id: string) =>
      (await w.store.deviceHistory(id, 50))
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
        (await Promise.all(w.pending.map(entries))).flat().filter((e) => e[2] === 'none');
      /** Each device's latest entry while pass 2 is sent: pass 1's result. */
      const passOne = {
        [w.active]: ['succeeded', 2],
        [w.pending[0]!]: ['failed', 2],
        [w.pending[1]!]: ['failed', 2],
      };
      await stoppedInPass2Send();
      expect(await unrequested(), "stopped while pass 2's request was on its way").to.deep.equal([]);
      expect(await w.latest()).to.deep.equal(passOne);
      // Resumed, and stopped while its read of pass 2's devices' state is on its way: the read fails as a stopped
      // client fails it.
      const items = w.client.items.bind(w.client);
      let reading = false;
      w.client.items = (action, input, opts) => {
        if (action !== 'devices.list' || reading) return items(action, input, opts);
        reading = true;
        return (async function* () {
          await stopOf(opts?.signal);
          yield* items(action, input, opts);
        })();
      };
      await interruptedRun(w.pb({ confirm: '1s' }), w.options(), () => reading);
      expect(await unrequested(), "stopped while it read pass 2's devices' state").to.deep.equal([]);
      expect(await w.latest()).to.deep.equal(passOne);
      const s = await runPlaybook(w.pb({ confirm: '1s' }), w.options());
      expect(s.status, s.error).to.equal('succeeded');
      expect(await w.latest()).to.deep.equal({
        [w.active]: ['succeeded', 2],
        [w.pending[0]!]: ['succeeded', 3],
        [w.pending[1]!]: ['failed', 5],
      });
      expect(await suspended(w.pending[0]!)).to.equal(1);
    });

    /** The truth once the run ends, after pass 2's lost request suspended the first pending device. */
    const settled = () => ({
      [w.active]: ['succeeded', 2],
      [w.pending[0]!]: ['succeeded', 3],
      [w.pending[1]!]: ['failed', 5],
    });

    it("a run stopped twice in pass 2's send records once what the read of its devices' state found", async () => {
      await stoppedInPass2Send();
      // Resumed: its read finds the device the lost request suspended, and it is stopped as it sends the other.
      w.holdNext = true;
      await interruptedRun(w.pb({ confirm: '1s' }), w.options(), () => w.held);
      const s = await runPlaybook(w.pb({ confirm: '1s' }), w.options());
      expect(s.status, s.error).to.equal('succeeded');
      // Pass 1's acceptance and result, then the read's: once.
      expect(await entries(w.pending[0]!)).to.deep.equal([
        ['accepted', null, 'request', 2],
        ['failed', 'STATE NOT CHANGED', 'request', 2],
        ['succeeded', null, 'none', 3],
      ]);
      expect(await suspended(w.pending[0]!)).to.equal(1);
      expect(w.sends.get(w.pending[1]!)).to.equal(5);
      expect(await w.latest()).to.deep.equal(settled());
      const step = s.steps.find((t) => t.id === 'suspend')!;
      expect([step.devices.total, step.devices.succeeded, step.devices.failed]).to.deep.equal([3, 2, 1]);
    });

    it("a run stopped in pass 2's send, then as it confirms that pass, does not send again a device the read found changed", async () => {
      await stoppedInPass2Send();
      // Resumed: its read finds the device the lost request suspended; the request it sends for the other waits at
      // the carrier, and the run is stopped as it confirms it.
      w.emu.setFaults({ processingSeconds: 30 });
      await interruptedRun(w.pb({ confirm: '1s' }), w.options(), async () =>
        Boolean(await w.confirmingPass2()),
      );
      w.emu.setFaults({ processingSeconds: 0 });
      w.emu.advance(60);
      const s = await runPlaybook(w.pb({ confirm: '1s' }), w.options());
      expect(s.status, s.error).to.equal('succeeded');
      // Pass 3 sends the other alone: the first keeps the read's result.
      expect(w.sends.get(w.pending[0]!)).to.equal(3);
      expect(await suspended(w.pending[0]!)).to.equal(1);
      expect(await entries(w.pending[0]!)).to.deep.equal([
        ['accepted', null, 'request', 2],
        ['failed', 'STATE NOT CHANGED', 'request', 2],
        ['succeeded', null, 'none', 3],
      ]);
      expect(await w.latest()).to.deep.equal(settled());
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
      w.store.recordDevices('r1', 'suspend', [{ ...stop, ids: [...w.pending] } as DeviceGroup], at);
      const s = await runPlaybook(w.pb({ confirm: '1s' }), w.options());
      expect(s.status, s.error).to.equal('succeeded');
      expect(await suspended(w.pending[0]!)).to.equal(1);
      expect(w.sends.get(w.pending[1]!)).to.equal(5);
      expect(await w.latest()).to.deep.equal(settled());
      const step = s.steps.find((t) => t.id === 'suspend')!;
      expect([step.devices.total, step.devices.succeeded, step.devices.failed]).to.deep.equal([3, 2, 1]);
    });

    it("a run stopped twice in pass 1's send records once what the read of its devices' state found", async () => {
      w.stopAtPass1 = true;
      await interruptedRun(w.pb({ confirm: '1s' }), w.options(), () => w.answered);
      w.emu.advance(60);
      // Resumed: its read finds the device the lost request suspended, and it is stopped as it sends the others.
      w.holdNext = true;
      await interruptedRun(w.pb({ confirm: '1s' }), w.options(), () => w.held);
      expect(await entries(w.active), 'stopped after the read').to.deep.equal([
        ['succeeded', null, 'none', 1],
      ]);
      const s = await runPlaybook(w.pb({ confirm: '1s' }), w.options());
      expect(s.status, s.error).to.equal('succeeded');
      expect(await entries(w.active)).to.deep.equal([['succeeded', null, 'none', 1]]);
      expect(await suspended(w.active)).to.equal(1);
      const step = s.steps.find((t) => t.id === 'suspend')!;
      expect([step.devices.total, step.devices.succeeded, step.devices.failed]).to.deep.equal([3, 1, 2]);
    });
  });
}
