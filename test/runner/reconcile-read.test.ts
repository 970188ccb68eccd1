/**
 * A suspend whose answer is lost after the service acted is reconciled by reading the devices' state. Measured
 * (a full run of the suite, suspend-batches with connection resets): that read, reset too, ended the step with
 * no ledger row for the batch's 500 devices. The read is now asked again with the step's retries; when it still
 * fails, the devices are recorded `unconfirmed`, never left out, and never sent again.
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
    retry: { on: [network], maxAttempts: 4, delay: 10ms }
`;

describe('runner: the read that reconciles a lost answer', function () {
  this.timeout(20_000);
  let emu: Emulator;
  let client: Client;
  let store: SqliteStore;
  let account: string;
  let ids: string[];
  /** Reads of the devices' state to fail, from the lost answer on. */
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
    // The suspend acts, and its answer is lost; then the reads that reconcile it are reset `failReads` times.
    const call = client.callByName.bind(client);
    client.callByName = async (name, input, opts) => {
      const out = await call(name, input, opts);
      if (name === 'devices.suspend') throw new NetworkError(name, 'ECONNRESET', true, 'socket hang up');
      return out;
    };
    const items = client.items.bind(client);
    client.items = ((name: string, input: Record<string, unknown>, opts?: object) => {
      if (name === 'devices.list' && failReads-- > 0)
        // eslint-disable-next-line require-yield
        return (async function* () {
          throw new NetworkError(name, 'ECONNRESET', true, 'socket hang up');
        })();
      return items(name as never, input as never, opts as never);
    }) as typeof client.items;
  });
  afterEach(async () => {
    await store.close();
    await client.close();
  });

  const run = () => runPlaybook(playbook(SUSPEND(ids)), { client, store, inputs: { account } });

  it('reset twice, the read is asked again: the devices the service suspended succeed, sent once', async () => {
    failReads = 2;
    const s = await run();
    expect(s.status, s.error).to.equal('succeeded');
    const rows = await store.deviceResults(s.runId, 'suspend');
    expect(rows.map((r) => r.outcome)).to.deep.equal(['succeeded', 'succeeded', 'succeeded']);
    expect((await calls(emu)).actions['devices.suspend']).to.equal(1);
  });

  it('reset every time, the devices are recorded unconfirmed with the error, not left out nor sent again', async () => {
    failReads = Infinity;
    const s = await run();
    expect(s.status).to.equal('failed');
    expect(s.error).to.match(/devices\.list: socket hang up/);
    const rows = await store.deviceResults(s.runId, 'suspend');
    expect(rows.map((r) => [r.outcome, r.errorType])).to.deep.equal([
      ['unconfirmed', 'OUTCOME UNKNOWN'],
      ['unconfirmed', 'OUTCOME UNKNOWN'],
      ['unconfirmed', 'OUTCOME UNKNOWN'],
    ]);
    expect(s.steps[0]?.devices.unconfirmed).to.equal(3);
    expect((await calls(emu)).actions['devices.suspend']).to.equal(1);
  });
});
