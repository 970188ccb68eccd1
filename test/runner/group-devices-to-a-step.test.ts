/**
 * The way a playbook acts on a device group: `groups.get` reads every page of the group's devices and hands
 * them, as `devices.list` does, to a device action that names each. Each device of the group is suspended and
 * recorded, and no other.
 */
import { expect } from 'chai';
import { runPlaybook } from '../../src/runner/runner.js';
import { onEmulator, playbook } from './helpers.js';

describe('runner: the devices of a group, to a device action', function () {
  this.timeout(30_000);
  // More devices than one page of a group (100).
  const t = onEmulator({ devicesPerAccount: 600 });

  it('suspends every device groups.get read, each named and recorded', async () => {
    const account = t.account;
    const group = await t.client.groups.get({ accountName: account, groupName: 'Depot Sensors' });
    const active = group.devices.filter((d) => d.carrierInformations[0]!.state === 'active');
    expect(group.devices.length).to.be.greaterThan(100);
    const pb = playbook(`
version: 1
name: suspend-a-group
on: { manual: true }
inputs:
  account: { type: string }
steps:
  - id: group
    uses: groups.get
    with: { accountName: "\${{ inputs.account }}", groupName: Depot Sensors }
  - id: suspend
    uses: devices.suspend
    with: { accountName: "\${{ inputs.account }}", devices: "\${{ steps.group.items }}" }
`);
    const summary = await runPlaybook(pb, { client: t.client, store: t.store, inputs: { account } });
    expect(summary.status, summary.error).to.equal('succeeded');
    const suspend = summary.steps.find((s) => s.id === 'suspend')!;
    expect(suspend.devices.total).to.equal(group.devices.length);
    const rows = await t.store.deviceResults(summary.runId, 'suspend');
    expect(rows.map((r) => r.deviceId).sort()).to.deep.equal(
      group.devices.map((d) => d.deviceIds[0]!.id).sort(),
    );
    const after = await t.client.groups.get({ accountName: account, groupName: 'Depot Sensors' });
    const suspended = after.devices.filter((d) => d.carrierInformations[0]!.state === 'suspend');
    expect(suspended.length).to.be.at.least(active.length);
  });
});
