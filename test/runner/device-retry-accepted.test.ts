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
import type { Client } from '../../src/api/client.js';
import type { Emulator } from '../../src/emulator/index.js';
import { NetworkError } from '../../src/errors.js';
import { runPlaybook } from '../../src/runner/runner.js';
import type { KeptRequest } from '../../src/runner/types.js';
import type { DeviceGroup } from '../../src/store/store.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { fleetbook } from '../helpers/cli.js';
import { accountDevices, clientFor, emulator, imei, interruptedRun, playbook } from './helpers.js';
import { tempDir } from '../helpers/temp.js';

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
  let emu: Emulator;
  let client: Client;
  let store: SqliteStore;
  let tmp: string;
  let active: string;
  let pending: string[];
  /** The suspends sent for each device, as this client made them (the first one lost on its way). */
  let sends: Map<string, number>;

  before(async () => {
    emu = await emulator({ devicesPerAccount: 200 });
  });
  after(() => emu.close());
  beforeEach(async () => {
    emu.reset({ seed: 1, accounts: 1, devicesPerAccount: 200 });
    const account = emu.defaults.accounts[0]!;
    const devices = await accountDevices(emu, account);
    active = imei(devices.find((d) => d.state === 'active')!);
    pending = devices
      .filter((d) => d.state === 'pending')
      .slice(0, 2)
      .map(imei)
      .sort();
    expect(pending).to.have.length(2);
    tmp = tempDir('fleetbook-device-retry-accepted-');
    store = new SqliteStore(join(tmp, 'state.db'));
    client = clientFor(emu);
    sends = new Map();
    let n = 0;
    const call = client.callByName.bind(client);
    client.callByName = async (name, input, opts) => {
      if (name !== 'devices.suspend') return call(name, input, opts);
      n++;
      // The step names its devices as the playbook does: `{ id, kind }`.
      for (const { id } of (input as { devices: { id: string }[] }).devices)
        sends.set(id, (sends.get(id) ?? 0) + 1);
      // The first send is lost before it reaches the service: the step's retry sends it again (pass 1 has 2).
      if (n === 1) throw new NetworkError(name, 'ECONNRESET', false, 'socket hang up');
      // The devices.retry pass's request waits at the carrier for the test's clock.
      if (n === 3) emu.setFaults({ processingSeconds: 30 });
      return call(name, input, opts);
    };
    store.createRun({
      id: 'r1',
      playbook: 'retried',
      status: 'running',
      trigger: { type: 'manual' },
      inputs: {},
      startedAt: new Date().toISOString(),
    });
  });
  afterEach(async () => {
    await store.close();
    await client.close();
  });

  const pb = (passes: number) =>
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
    confirm: { timeout: 20s, pollInterval: 20ms }
    devices:
      retry: [{ on: [STATE NOT CHANGED], maxAttempts: ${passes} }]
`);

  /** The step's checkpoint once it confirms its second request (the devices.retry pass's), else undefined. */
  const confirmingPass2 = async () => {
    const cp = (await store.loadSteps('r1')).get('suspend') as
      { status?: string; accepted?: KeptRequest[] } | undefined;
    return cp?.status === 'confirming' && cp.accepted?.length === 2 ? cp.accepted : undefined;
  };

  /** Every entry of the step in the ledger, in order: outcome, request id, attempts, devices. */
  const entries = () =>
    (
      store.db
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

  /** Each device's latest result: outcome and attempts. */
  const latest = async () =>
    Object.fromEntries(
      (await store.deviceResults('r1', 'suspend')).map((r) => [r.deviceId, [r.outcome, r.attempts]]),
    );

  it("an earlier version finds a pass-2 request's devices by its id and attempts; results keep the sends", async () => {
    const running = runPlaybook(pb(3), { client, store, runId: 'r1' });
    let kept: KeptRequest[] | undefined;
    for (let i = 0; i < 1000 && !(kept = await confirmingPass2()); i++) await sleep(10);
    expect(kept, 'the step confirms the devices.retry pass').to.not.equal(undefined);
    const [first, second] = kept!;
    // The checkpoint keeps each request's own sends: 2 for the first (one lost), 1 for the pass's.
    expect(kept!.map((r) => r.attempts)).to.deep.equal([2, 1]);
    const under = await store.resultsUnder(
      'r1',
      'suspend',
      kept!.map((r) => r.requestId),
    );
    expect(devicesAsEarlierVersionsFind(kept!, under)).to.deep.equal({
      [first!.requestId]: [active, ...pending].sort(),
      [second!.requestId]: pending,
    });

    // The carrier acts now, and at once from here on: the pending devices are refused again, twice.
    emu.setFaults({ processingSeconds: 0 });
    emu.advance(60);
    const s = await running;
    expect(s.status, s.error).to.equal('succeeded');
    expect(sends.get(active)).to.equal(2);
    expect(pending.map((id) => sends.get(id))).to.deep.equal([4, 4]);
    expect(await latest()).to.deep.equal({
      [active]: ['succeeded', 2],
      [pending[0]!]: ['failed', 4],
      [pending[1]!]: ['failed', 4],
    });
    // Each request's accepted entries carry its own sends (those its checkpoint keeps); the result that settles a
    // device, the sends made for it across the passes (each pass's, written with the next pass's acceptance).
    const all = entries();
    const requests = [...new Set(all.map((e) => e.requestId))];
    expect(requests).to.have.length(3);
    expect(all.filter((e) => e.outcome === 'accepted')).to.deep.equal([
      { outcome: 'accepted', requestId: requests[0], attempts: 2, ids: [active, ...pending].sort() },
      { outcome: 'accepted', requestId: requests[1], attempts: 1, ids: pending },
      { outcome: 'accepted', requestId: requests[2], attempts: 1, ids: pending },
    ]);
    expect(all.filter((e) => e.outcome === 'failed')).to.deep.equal([
      { outcome: 'failed', requestId: requests[0], attempts: 2, ids: pending },
      { outcome: 'failed', requestId: requests[1], attempts: 3, ids: pending },
      { outcome: 'failed', requestId: requests[2], attempts: 4, ids: pending },
    ]);
  });

  it('a run resumed while it confirms a pass-2 request rebuilds the sends from the results before the pass', async () => {
    await interruptedRun(pb(2), { client, store, runId: 'r1' }, async () => !!(await confirmingPass2()));
    emu.setFaults({ processingSeconds: 0 });
    emu.advance(60);
    const s = await runPlaybook(pb(2), { client, store, runId: 'r1' });
    expect(s.status, s.error).to.equal('succeeded');
    const all = entries();
    const requests = [...new Set(all.map((e) => e.requestId))];
    // The pass's request: accepted with its own send, and its results with the sends before it (the last pass of
    // `maxAttempts: 2`: the resumed run sends no third); the pending devices' results before it, their sends then.
    expect(requests).to.have.length(2);
    expect(all.filter((e) => e.requestId === requests[1])).to.deep.equal([
      { outcome: 'accepted', requestId: requests[1], attempts: 1, ids: pending },
      { outcome: 'failed', requestId: requests[1], attempts: 3, ids: pending },
    ]);
    expect(all.filter((e) => e.requestId === requests[0] && e.outcome === 'failed')).to.deep.equal([
      { outcome: 'failed', requestId: requests[0], attempts: 2, ids: pending },
    ]);
    // Each device's latest result counts the sends made for it, over both executions.
    expect(await latest()).to.deep.equal({
      [active]: ['succeeded', sends.get(active)],
      [pending[0]!]: ['failed', sends.get(pending[0]!)],
      [pending[1]!]: ['failed', sends.get(pending[1]!)],
    });
  });

  it('a run the version before left killed in pass 2 resumes: each device confirmed once, under its last request', async () => {
    await interruptedRun(pb(2), { client, store, runId: 'r1' }, async () => !!(await confirmingPass2()));
    // As the version before left it killed: the accepted entries alone, and a checkpoint without the pass.
    store.db.prepare(`DELETE FROM ledger WHERE run_id = 'r1' AND outcome <> 'accepted'`).run();
    const cp = (await store.loadSteps('r1')).get('suspend') as { accepted: KeptRequest[] };
    store.saveStep('r1', 'suspend', { ...cp, accepted: cp.accepted.map(({ pass: _, ...r }) => r) });
    emu.setFaults({ processingSeconds: 0 });
    emu.advance(60);
    const s = await runPlaybook(pb(2), { client, store, runId: 'r1' });
    expect(s.status, s.error).to.equal('succeeded');
    const requests = [...new Set(entries().map((e) => e.requestId))];
    // The active device under the first request, the pending ones under the pass's only; then, its passes counted
    // from the first again as that version did, one more pass.
    expect(requests).to.have.length(3);
    expect(entries().filter((e) => e.outcome !== 'accepted')).to.deep.equal([
      { outcome: 'succeeded', requestId: requests[0], attempts: 2, ids: [active] },
      { outcome: 'failed', requestId: requests[1], attempts: 3, ids: pending },
      { outcome: 'failed', requestId: requests[2], attempts: 4, ids: pending },
    ]);
    const step = s.steps.find((t) => t.id === 'suspend')!;
    expect([step.devices.total, step.devices.succeeded, step.devices.failed]).to.deep.equal([3, 1, 2]);
  });

  it('`runs cancel` of a run killed while it confirms a pass-2 request: unconfirmed with the sends made', async () => {
    await interruptedRun(pb(2), { client, store, runId: 'r1' }, async () => !!(await confirmingPass2()));
    // Killed rather than stopped, as the version before left it: the results it held of pass 1 never reached the
    // ledger, only what it wrote with each checkpoint (the accepted entries). The results of each pass are written
    // with the next pass's now, and the sends are rebuilt from them where they are.
    store.db.prepare(`DELETE FROM ledger WHERE run_id = 'r1' AND outcome <> 'accepted'`).run();
    await store.close();
    const r = await fleetbook(['runs', 'cancel', 'r1'], { FLEETBOOK_STATE: join(tmp, 'state.db') });
    expect(r.code, r.stderr).to.equal(0);
    store = new SqliteStore(join(tmp, 'state.db'));
    const all = entries();
    const requests = [...new Set(all.map((e) => e.requestId))];
    // Each device left accepted: unconfirmed with the sends made for it, the first request's 2 and the pass's 1.
    expect(all.filter((e) => e.outcome === 'unconfirmed')).to.deep.equal([
      { outcome: 'unconfirmed', requestId: requests[0], attempts: 2, ids: [active] },
      { outcome: 'unconfirmed', requestId: requests[1], attempts: 3, ids: pending },
    ]);
    expect(await latest()).to.deep.equal({
      [active]: ['unconfirmed', sends.get(active)],
      [pending[0]!]: ['unconfirmed', sends.get(pending[0]!)],
      [pending[1]!]: ['unconfirmed', sends.get(pending[1]!)],
    });
  });
});
