/**
 * A device action in a playbook names exactly the devices it acts on: the engine locks, records and confirms
 * each. Literal arguments naming a device group are refused by validation (test/fixtures/playbooks/invalid/
 * device-group-step); a `with` computed whole is refused when the step runs, before anything is sent.
 */
import { expect } from 'chai';
import type { Client } from '../../src/api/client.js';
import type { Emulator } from '../../src/emulator/index.js';
import { runPlaybook } from '../../src/runner/runner.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import { clientFor, emulator, memoryStore, playbook, spy } from './helpers.js';

describe('runner: a device action step names its devices', function () {
  this.timeout(30_000);
  let emu: Emulator;
  let client: Client;
  let store: SqliteStore;

  before(async () => {
    emu = await emulator();
    client = clientFor(emu);
    store = memoryStore();
  });
  after(async () => {
    await store.close();
    await client.close();
    await emu.close();
  });

  it('fails, sending nothing, when a computed `with` names a device group instead of devices', async () => {
    const pb = playbook(`
version: 1
name: group-suspend
on: { manual: true }
inputs:
  account: { type: string }
steps:
  - id: suspend
    uses: devices.suspend
    with: \${{ { "accountName": inputs.account, "groupName": "North Fleet" } }}
`);
    const seen = spy(client);
    const summary = await runPlaybook(pb, { client, store, inputs: { account: emu.defaults.accounts[0]! } });
    expect(summary.status).to.equal('failed');
    expect(summary.error).to.include('devices.suspend: a step names the devices it acts on in `devices`');
    expect(seen.filter((c) => c.action === 'devices.suspend')).to.deep.equal([]);
  });
});
