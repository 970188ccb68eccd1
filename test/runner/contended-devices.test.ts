/**
 * Two runs of one playbook at once on one store: the per-device locks made the second wait until the first had
 * suspended the devices, and it then sent every one a second suspend and recorded them `succeeded`, though it
 * changed nothing (product.md 5a: `skipped` is "not sent (…, already in the target state)"). A step that had to
 * wait for another holder of its devices now reads their state first: those the holder left in the target state
 * are `skipped` (ALREADY IN TARGET STATE), and only the others are sent. Without a wait, nothing is read.
 */
import { expect } from 'chai';
import type { Client } from '../../src/api/client.js';
import type { Emulator } from '../../src/emulator/index.js';
import { InProcessDeviceLocks } from '../../src/runner/locks.js';
import { runPlaybook } from '../../src/runner/runner.js';
import { accountDevices, calls, clientFor, emulator, imei, memoryStore, playbook } from './helpers.js';

describe('runner: a step that waited for another holder of its devices', function () {
  this.timeout(30_000);
  let emu: Emulator;
  let client: Client;

  before(async () => {
    // The carrier takes 30 simulated seconds, half a real second: the second run waits on the locks meanwhile.
    emu = await emulator({ devicesPerAccount: 20, timeScale: 60, faults: { processingSeconds: 30 } });
    client = clientFor(emu);
  });
  after(async () => {
    await client.close();
    await emu.close();
  });

  it('skips the devices the holder left in the target state, and sends the others once', async () => {
    const account = emu.defaults.accounts[0]!;
    const active = (await accountDevices(emu, account)).filter((d) => d.state === 'active').map(imei);
    const [a, b, c] = active as [string, string, string];
    const suspend = (ids: string[]) =>
      playbook(`version: 1
name: suspend-some
on: { manual: true }
steps:
  - id: suspend
    uses: devices.suspend
    with:
      accountName: '${account}'
      devices: [${ids.map((id) => `{ id: '${id}', kind: imei }`).join(', ')}]
    confirm: { timeout: 1m, pollInterval: 50ms }
`);
    const store = memoryStore();
    const locks = new InProcessDeviceLocks();
    const reads = async () => (await calls(emu)).actions['devices.list'] ?? 0;
    const before = await reads();
    // The first suspends a and b; the second, started while it holds them, asks for a, b and c.
    const first = runPlaybook(suspend([a, b]), { client, store, locks });
    while (!locks.holding) await new Promise((r) => setTimeout(r, 5));
    const second = runPlaybook(suspend([a, b, c]), { client, store, locks });
    const [one, two] = await Promise.all([first, second]);
    await store.close();

    expect(one.status, one.error).to.equal('succeeded');
    expect(one.steps[0]?.devices).to.include({ succeeded: 2, skipped: 0 });
    expect(two.status, two.error).to.equal('succeeded');
    expect(two.steps[0]?.devices).to.include({ total: 3, succeeded: 1, skipped: 2 });
    expect(two.steps[0]?.devices.byError).to.deep.equal({ 'ALREADY IN TARGET STATE': 2 });
    const mutations = (await calls(emu)).devices;
    expect([a, b, c].map((id) => mutations[id]?.length ?? 0)).to.deep.equal([1, 1, 1]);
    // One read of the state, by the run that waited.
    expect((await reads()) - before).to.equal(1);
  });
});
