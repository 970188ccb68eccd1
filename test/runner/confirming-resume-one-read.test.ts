/**
 * A run stopped while a device-state step confirmed its requests: the resumed run reads the step's entries under
 * those requests from the ledger once (the devices accepted, and the results recorded before the stop, told
 * apart by their outcome), where it read them twice, and records each device once.
 */
import { expect } from 'chai';
import type { Client } from '../../src/api/client.js';
import type { Emulator } from '../../src/emulator/index.js';
import { runPlaybook } from '../../src/runner/runner.js';
import type { CarrierResult, ConfirmationSource } from '../../src/runner/types.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import {
  accountDevices,
  clientFor,
  emulator,
  imei,
  interruptedRun,
  memoryStore,
  playbook,
  type SeedDevice,
} from './helpers.js';

describe('runner: a confirming step resumed reads its requests once', () => {
  let emu: Emulator;
  let client: Client;
  let store: SqliteStore;
  let account: string;
  let devices: SeedDevice[];

  before(async () => {
    emu = await emulator({ devicesPerAccount: 20 });
    account = emu.defaults.accounts[0] as string;
    client = clientFor(emu);
    store = memoryStore();
    devices = (await accountDevices(emu, account)).filter((d) => d.state === 'active').slice(0, 10);
  });
  after(async () => {
    await store.close();
    await client.close();
    await emu.close();
  });

  it('one read of the ledger under the requests; four confirmed before, six after, each device once', async () => {
    const list = devices.map((d) => `{ id: "${imei(d)}", kind: imei }`).join(', ');
    const pb = playbook(`
version: 1
name: resume-confirming-once
on: { manual: true }
steps:
  - id: suspend
    uses: devices.suspend
    with: { accountName: "${account}", devices: [${list}] }
    confirm: { pollInterval: 1h }
`);
    store.createRun({
      id: 'r1',
      playbook: pb.name,
      status: 'running',
      trigger: { type: 'manual' },
      inputs: {},
      startedAt: new Date().toISOString(),
    });
    const messages = (requestId: string): CarrierResult[] =>
      emu.request(requestId)!.devices.map((d) => ({
        device: `imei:${d.deviceIds[0]!.id}`,
        ids: d.deviceIds.map((x) => `${x.kind.toLowerCase()}:${x.id}`),
        succeeded: d.status === 'Success',
      }));
    /** A listener that has the messages of the first `n` devices of each request, and no more. */
    const listener = (n: number): ConfirmationSource => ({
      listening: () => true,
      follow(requestIds, onResult) {
        for (const id of requestIds) for (const m of messages(id).slice(0, n)) onResult(id, m);
        return () => undefined;
      },
    });
    const confirming = async () =>
      ((await store.loadSteps('r1')).get('suspend') as { status?: string } | undefined)?.status ===
      'confirming';
    await interruptedRun(pb, { client, store, runId: 'r1', confirmations: listener(4) }, confirming);

    const reads: unknown[][] = [];
    const resultsUnder = store.resultsUnder.bind(store);
    store.resultsUnder = (...args: Parameters<typeof resultsUnder>) => {
      reads.push(args);
      return resultsUnder(...args);
    };
    const summary = await runPlaybook(pb, { client, store, runId: 'r1', confirmations: listener(10) });
    expect(summary.status, summary.error).to.equal('succeeded');
    expect(reads, 'reads of the ledger under the requests').to.have.length(1);
    const rows = await store.deviceResults('r1', 'suspend');
    expect(rows.map((r) => r.deviceId).sort()).to.deep.equal(devices.map(imei).sort());
    expect(rows.every((r) => r.outcome === 'succeeded')).to.equal(true);
    expect(summary.steps[0]!.devices).to.include({ total: 10, succeeded: 10 });
  });
});
