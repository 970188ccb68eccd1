/**
 * The reads that confirm an accepted device-state request (its status, the devices' state) are asked again at
 * the next poll when they fail, until the step's confirmation time. Measured (suspend-batches with connection
 * resets, one full run of the suite in about sixty): a `requests.status` reset five times over ended the step
 * with "other side closed" while the service had accepted the batch, and the run failed with its 500 devices
 * counted nowhere in the summary. A read that still fails at the confirmation time leaves the devices
 * `unconfirmed` with its error, never out of the ledger, and never sent again.
 */
import { expect } from 'chai';
import type { Client } from '../../src/api/client.js';
import type { Emulator } from '../../src/emulator/index.js';
import { NetworkError } from '../../src/errors.js';
import { runPlaybook } from '../../src/runner/runner.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import { accountDevices, calls, clientFor, emulator, imei, memoryStore, playbook } from './helpers.js';

const SUSPEND = (ids: string[]) => `
version: 1
name: suspend-three
on: { manual: true }
inputs:
  account: { type: string, required: true }
steps:
  - id: suspend
    uses: devices.suspend
    with:
      accountName: \${{ inputs.account }}
      devices: [${ids.map((id) => `{ id: "${id}", kind: imei }`).join(', ')}]
    confirm: { timeout: 1s, pollInterval: 20ms }
`;

describe('runner: the reads that confirm an accepted request', function () {
  this.timeout(20_000);
  let emu: Emulator;
  let client: Client;
  let store: SqliteStore;
  let account: string;
  let ids: string[];
  /** Requests for the status, and reads of the devices' state, to fail before they are answered. */
  let failStatus: number;
  let failReads: number;

  before(async () => {
    emu = await emulator({ devicesPerAccount: 20 });
  });
  after(() => emu.close());
  beforeEach(async () => {
    emu.reset({ devicesPerAccount: 20 });
    account = emu.defaults.accounts[0]!;
    ids = (await accountDevices(emu, account))
      .filter((d) => d.state === 'active')
      .slice(0, 3)
      .map(imei);
    store = memoryStore();
    client = clientFor(emu);
    const lost = (name: string) => new NetworkError(name, 'UND_ERR_SOCKET', true, 'other side closed');
    const call = client.callByName.bind(client);
    client.callByName = async (name, input, opts) => {
      const out = await call(name, input, opts);
      if (name === 'requests.status' && failStatus-- > 0) throw lost(name);
      return out;
    };
    const items = client.items.bind(client);
    client.items = ((name: string, input: Record<string, unknown>, opts?: object) => {
      if (name === 'devices.list' && failReads-- > 0)
        // eslint-disable-next-line require-yield
        return (async function* () {
          throw lost(name);
        })();
      return items(name as never, input as never, opts as never);
    }) as typeof client.items;
  });
  afterEach(async () => {
    await store.close();
    await client.close();
  });

  const run = () => runPlaybook(playbook(SUSPEND(ids)), { client, store, inputs: { account } });

  it('a status lost twice is asked again at the next poll: the devices succeed, sent once', async () => {
    failStatus = 2;
    failReads = 0;
    const s = await run();
    expect(s.status, s.error).to.equal('succeeded');
    const rows = await store.deviceResults(s.runId, 'suspend');
    expect(rows.map((r) => r.outcome)).to.deep.equal(['succeeded', 'succeeded', 'succeeded']);
    expect(s.steps[0]?.confirmation).to.deep.equal({ callback: 0, requestStatus: 3, stateRead: 0 });
    expect((await calls(emu)).actions['devices.suspend']).to.equal(1);
  });

  it('a status and a state read lost every time: unconfirmed with the error at the confirmation time', async () => {
    failStatus = Infinity;
    failReads = Infinity;
    const s = await run();
    // The devices' outcome is in the ledger; with no `devices.toleratedFailurePercent`, the step goes on.
    expect(s.status, s.error).to.equal('succeeded');
    const rows = await store.deviceResults(s.runId, 'suspend');
    expect(rows.map((r) => [r.outcome, r.errorType])).to.deep.equal([
      ['unconfirmed', 'OUTCOME UNKNOWN'],
      ['unconfirmed', 'OUTCOME UNKNOWN'],
      ['unconfirmed', 'OUTCOME UNKNOWN'],
    ]);
    expect(s.steps[0]?.devices).to.include({ total: 3, unconfirmed: 3, accepted: 0 });
    expect(s.devices).to.include({ total: 3, unconfirmed: 3 });
    expect(s.steps[0]?.devices.byError).to.deep.equal({ 'OUTCOME UNKNOWN': 3 });
    expect((await calls(emu)).actions['devices.suspend']).to.equal(1);
  });
});
