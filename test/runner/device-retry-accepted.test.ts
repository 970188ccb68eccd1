/**
 * The `accepted` entries of a `devices.retry` pass's request, as every version reads them. A replica of an
 * earlier version takes up a `confirming` checkpoint of a newer one during a rolling deployment: it finds each
 * kept request's devices among the step's `accepted` entries by the request id and the request's `attempts`
 * (its own sends). Those entries were written with the devices' sends across the passes (3 for a device sent
 * twice in pass 1 and once in pass 2, whose request has 1), so that replica found no device of a pass 2 or later
 * request: they stayed `accepted` for good. The results that settle a device keep its sends across the passes,
 * and a resumed run rebuilds them from the results before the pass, as `fleetbook runs cancel` does for the devices
 * it leaves `unconfirmed`. Against the emulator over loopback, in process, on a SQLite state file; the cancel
 * runs the built binary (dist/ must be built).
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { runPlaybook } from '../../src/runner/runner.js';
import type { KeptRequest } from '../../src/runner/types.js';
import type { DeviceGroup } from '../../src/store/store.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { fleetbook } from '../helpers/cli.js';
import { interruptedRun } from './helpers.js';
import { onRetriedSuspend } from './retried-suspend.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The devices of each kept request as a replica of 7cd5e06 finds them (its `devicesOfRequests`): the `accepted`
 * entries under the request's id and attempts, by request id.
 */
function devicesAsEarlierVersionsFind(kept: KeptRequest[], under: DeviceGroup[]): Record<string, string[]> {
  const key = (r: { requestId?: string; attempts: number }) => `${r.requestId ?? ''}\0${r.attempts}`;
  const byRequest = new Map<string, string[]>();
  for (const g of under) {
    if (g.outcome !== 'accepted') continue;
    byRequest.set(key(g), [...(byRequest.get(key(g)) ?? []), ...g.ids]);
  }
  return Object.fromEntries(kept.map((r) => [r.requestId, (byRequest.get(key(r)) ?? []).sort()]));
}

describe('runner: the accepted entries of a devices.retry pass, as every version reads them', function () {
  this.timeout(30_000);
  const w = onRetriedSuspend((dir) => new SqliteStore(join(dir, 'state.db')));

  /** Every entry of the step in the ledger, in order: outcome, request id, attempts, devices. */
  const entries = () =>
    (
      w.store.db
        .prepare(
          `SELECT outcome, request_id, attempts, device_ids FROM ledger WHERE run_id = 'r1' ORDER BY seq`,
        )
        .all() as { outcome: string; request_id: string | null; attempts: number; device_ids: string }[]
    ).map((e) => ({
      outcome: e.outcome,
      requestId: e.request_id,
      attempts: e.attempts,
      ids: (JSON.parse(e.device_ids) as string[]).sort(),
    }));

  it("an earlier version finds a pass-2 request's devices by its id and attempts; results keep the sends", async () => {
    const running = runPlaybook(w.pb({ passes: 3 }), w.options());
    let kept: KeptRequest[] | undefined;
    for (let i = 0; i < 1000 && !(kept = await w.confirmingPass2()); i++) await sleep(10);
    expect(kept, 'the step confirms the devices.retry pass').to.not.equal(undefined);
    const [first, second] = kept!;
    // The checkpoint keeps each request's own sends: 2 for the first (one lost), 1 for the pass's.
    expect(kept!.map((r) => r.attempts)).to.deep.equal([2, 1]);
    const under = await w.store.resultsUnder(
      'r1',
      'suspend',
      kept!.map((r) => r.requestId),
    );
    expect(devicesAsEarlierVersionsFind(kept!, under)).to.deep.equal({
      [first!.requestId]: [w.active, ...w.pending].sort(),
      [second!.requestId]: w.pending,
    });

    // The carrier acts now, and at once from here on: the pending devices are refused again, twice.
    w.emu.setFaults({ processingSeconds: 0 });
    w.emu.advance(60);
    const s = await running;
    expect(s.status, s.error).to.equal('succeeded');
    expect(w.sends.get(w.active)).to.equal(2);
    expect(w.pending.map((id) => w.sends.get(id))).to.deep.equal([4, 4]);
    expect(await w.latest()).to.deep.equal({
      [w.active]: ['succeeded', 2],
      [w.pending[0]!]: ['failed', 4],
      [w.pending[1]!]: ['failed', 4],
    });
    // Each request's accepted entries carry its own sends (those its checkpoint keeps); the result that settles a
    // device, the sends made for it across the passes (each pass's, written with the next pass's acceptance).
    const all = entries();
    const requests = [...new Set(all.map((e) => e.requestId))];
    expect(requests).to.have.length(3);
    expect(all.filter((e) => e.outcome === 'accepted')).to.deep.equal([
      { outcome: 'accepted', requestId: requests[0], attempts: 2, ids: [w.active, ...w.pending].sort() },
      { outcome: 'accepted', requestId: requests[1], attempts: 1, ids: w.pending },
      { outcome: 'accepted', requestId: requests[2], attempts: 1, ids: w.pending },
    ]);
    expect(all.filter((e) => e.outcome === 'failed')).to.deep.equal([
      { outcome: 'failed', requestId: requests[0], attempts: 2, ids: w.pending },
      { outcome: 'failed', requestId: requests[1], attempts: 3, ids: w.pending },
      { outcome: 'failed', requestId: requests[2], attempts: 4, ids: w.pending },
    ]);
  });

  it('a run resumed while it confirms a pass-2 request rebuilds the sends from the results before the pass', async () => {
    await interruptedRun(w.pb({ passes: 2 }), w.options(), async () => !!(await w.confirmingPass2()));
    w.emu.setFaults({ processingSeconds: 0 });
    w.emu.advance(60);
    const s = await runPlaybook(w.pb({ passes: 2 }), w.options());
    expect(s.status, s.error).to.equal('succeeded');
    const all = entries();
    const requests = [...new Set(all.map((e) => e.requestId))];
    // The pass's request: accepted with its own send, and its results with the sends before it (the last pass of
    // `maxAttempts: 2`: the resumed run sends no third); the pending devices' results before it, their sends then.
    expect(requests).to.have.length(2);
    expect(all.filter((e) => e.requestId === requests[1])).to.deep.equal([
      { outcome: 'accepted', requestId: requests[1], attempts: 1, ids: w.pending },
      { outcome: 'failed', requestId: requests[1], attempts: 3, ids: w.pending },
    ]);
    expect(all.filter((e) => e.requestId === requests[0] && e.outcome === 'failed')).to.deep.equal([
      { outcome: 'failed', requestId: requests[0], attempts: 2, ids: w.pending },
    ]);
    // Each device's latest result counts the sends made for it, over both executions.
    expect(await w.latest()).to.deep.equal({
      [w.active]: ['succeeded', w.sends.get(w.active)],
      [w.pending[0]!]: ['failed', w.sends.get(w.pending[0]!)],
      [w.pending[1]!]: ['failed', w.sends.get(w.pending[1]!)],
    });
  });

  it('a run the version before left killed in pass 2 resumes: each device confirmed once, under its last request', async () => {
    await interruptedRun(w.pb({ passes: 2 }), w.options(), async () => !!(await w.confirmingPass2()));
    // As the version before left it killed: the accepted entries alone, and a checkpoint without the pass.
    w.store.db.prepare(`DELETE FROM ledger WHERE run_id = 'r1' AND outcome <> 'accepted'`).run();
    const cp = (await w.store.loadSteps('r1')).get('suspend') as { accepted: KeptRequest[] };
    w.store.saveStep('r1', 'suspend', { ...cp, accepted: cp.accepted.map(({ pass: _, ...r }) => r) });
    w.emu.setFaults({ processingSeconds: 0 });
    w.emu.advance(60);
    const s = await runPlaybook(w.pb({ passes: 2 }), w.options());
    expect(s.status, s.error).to.equal('succeeded');
    const requests = [...new Set(entries().map((e) => e.requestId))];
    // The active device under the first request, the pending ones under the pass's only; then, its passes counted
    // from the first again as that version did, one more pass.
    expect(requests).to.have.length(3);
    expect(entries().filter((e) => e.outcome !== 'accepted')).to.deep.equal([
      { outcome: 'succeeded', requestId: requests[0], attempts: 2, ids: [w.active] },
      { outcome: 'failed', requestId: requests[1], attempts: 3, ids: w.pending },
      { outcome: 'failed', requestId: requests[2], attempts: 4, ids: w.pending },
    ]);
    const step = s.steps.find((t) => t.id === 'suspend')!;
    expect([step.devices.total, step.devices.succeeded, step.devices.failed]).to.deep.equal([3, 1, 2]);
  });

  it('`runs cancel` of a run killed while it confirms a pass-2 request: unconfirmed with the sends made', async () => {
    await interruptedRun(w.pb({ passes: 2 }), w.options(), async () => !!(await w.confirmingPass2()));
    // Killed rather than stopped, as the version before left it: the results it held of pass 1 never reached the
    // ledger, only what it wrote with each checkpoint (the accepted entries). The results of each pass are written
    // with the next pass's now, and the sends are rebuilt from them where they are.
    w.store.db.prepare(`DELETE FROM ledger WHERE run_id = 'r1' AND outcome <> 'accepted'`).run();
    await w.store.close();
    const r = await fleetbook(['runs', 'cancel', 'r1'], { FLEETBOOK_STATE: join(w.dir, 'state.db') });
    expect(r.code, r.stderr).to.equal(0);
    w.store = new SqliteStore(join(w.dir, 'state.db'));
    const all = entries();
    const requests = [...new Set(all.map((e) => e.requestId))];
    // Each device left accepted: unconfirmed with the sends made for it, the first request's 2 and the pass's 1.
    expect(all.filter((e) => e.outcome === 'unconfirmed')).to.deep.equal([
      { outcome: 'unconfirmed', requestId: requests[0], attempts: 2, ids: [w.active] },
      { outcome: 'unconfirmed', requestId: requests[1], attempts: 3, ids: w.pending },
    ]);
    expect(await w.latest()).to.deep.equal({
      [w.active]: ['unconfirmed', w.sends.get(w.active)],
      [w.pending[0]!]: ['unconfirmed', w.sends.get(w.pending[0]!)],
      [w.pending[1]!]: ['unconfirmed', w.sends.get(w.pending[1]!)],
    });
  });
});
