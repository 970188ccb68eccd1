/**
 * A canary rollout against the emulator: suspend the first N devices of a listing, check, then the rest. Before
 * lists could be sliced, `steps.devices.items.take(n)` did not load ("`take` is not a function"), and a canary
 * could only be had by filtering on the devices' identifiers. The first step's ledger has exactly N devices, the
 * first N the listing gave; the rest step's has every other one; the emulator saw each suspended once. The
 * listing's items are in the store too (the checkpoint counts them): a run resumed after the canary reads them
 * back from there, and its rest is the same devices, not those of a fresh listing.
 */
import { expect } from 'chai';
import { runPlaybook } from '../../src/runner/runner.js';
import type { Checkpoint } from '../../src/runner/types.js';
import { accountDevices, calls, imei, interruptedRun, onEmulator, playbook, spy } from './helpers.js';

const CANARY = `
version: 1
name: canary-suspend
on: { manual: true }
inputs:
  account: { type: string, required: true }
  canary: { type: integer, default: 3 }
steps:
  - id: devices
    uses: devices.list
    with: { accountName: "\${{ inputs.account }}", currentState: active }
    items: { kind: imei }
  - id: canary
    forEach:
      items: "\${{ steps.devices.items.take(inputs.canary) }}"
      steps:
        - id: suspendCanary
          uses: devices.suspend
          with: { accountName: "\${{ inputs.account }}", devices: "\${{ [item] }}" }
  - id: rest
    if: \${{ steps.canary.status == "succeeded" && steps.canary.output.failed == 0 }}
    forEach:
      items: "\${{ steps.devices.items.drop(inputs.canary) }}"
      batchSize: 5
      steps:
        - id: suspendRest
          uses: devices.suspend
          with: { accountName: "\${{ inputs.account }}", devices: "\${{ item }}" }
`;

describe('runner: a canary of the first N devices of a listing, then the rest', function () {
  this.timeout(60_000);
  const t = onEmulator({ devicesPerAccount: 40 });

  it('suspends exactly the first N in the canary step, and every other one after', async () => {
    const active = (await accountDevices(t.emu, t.account)).filter((d) => d.state === 'active').map(imei);
    expect(active.length, 'the seed has active devices beyond the canary').to.be.greaterThan(6);
    const s = await runPlaybook(playbook(CANARY), {
      client: t.client,
      store: t.store,
      inputs: { account: t.account, canary: 3 },
    });
    expect(s.status, s.error).to.equal('succeeded');

    const canary = await t.store.deviceResults(s.runId, 'suspendCanary');
    expect(canary.map((r) => r.deviceId)).to.deep.equal(active.slice(0, 3));
    expect(canary.every((r) => r.outcome === 'succeeded')).to.equal(true);
    const rest = await t.store.deviceResults(s.runId, 'suspendRest');
    expect(rest.map((r) => r.deviceId).sort()).to.deep.equal(active.slice(3).sort());
    expect(s.steps.find((x) => x.id === 'canary')?.status).to.equal('succeeded');
    expect(s.steps.find((x) => x.id === 'rest')?.status).to.equal('succeeded');

    // The service saw each active device suspended once, and no other device touched.
    const c = await calls(t.emu);
    expect(Object.keys(c.devices).sort()).to.deep.equal([...active].sort());
    for (const id of active)
      expect(
        c.devices[id]?.map((m) => m.action),
        id,
      ).to.deep.equal(['devices.suspend']);
  });

  it('a run resumed after its canary slices the listing its store kept: the same rest', async () => {
    t.emu.reset({ seed: 1, accounts: 1, devicesPerAccount: 40 });
    const active = (await accountDevices(t.emu, t.account)).filter((d) => d.state === 'active').map(imei);
    const paused = CANARY.replace('  - id: rest\n', '  - id: pause\n    wait: 2s\n  - id: rest\n');
    const pb = playbook(paused);
    const o = {
      client: t.client,
      store: t.store,
      runId: 'canary-resumed',
      inputs: { account: t.account, canary: 2 },
    };
    await interruptedRun(pb, o, async () => {
      const cp = (await t.store.loadSteps('canary-resumed')).get('canary') as Checkpoint | undefined;
      return cp?.status === 'succeeded';
    });
    const listed = (await t.store.loadSteps('canary-resumed')).get('devices') as { storedItems?: number };
    expect(listed.storedItems).to.equal(active.length);
    // Meanwhile the first device of the rest is suspended elsewhere: a fresh listing of active ones would lack it.
    await t.client.callByName('devices.suspend', {
      accountName: t.account,
      devices: [{ id: active[2], kind: 'imei' }],
    });
    const seen = spy(t.client);
    const s = await runPlaybook(pb, o);
    expect(s.status, s.error).to.equal('succeeded');
    expect(seen.filter((c) => c.action === 'devices.list')).to.have.length(0);
    expect((await t.store.deviceResults(s.runId, 'suspendCanary')).map((r) => r.deviceId)).to.deep.equal(
      active.slice(0, 2),
    );
    const rest = await t.store.deviceResults(s.runId, 'suspendRest');
    expect(rest.map((r) => r.deviceId).sort()).to.deep.equal(active.slice(2).sort());
  });
});
