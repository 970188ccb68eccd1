/**
 * The nightly location report with 5 % injected SVC CACHE UNAVAILABLE, against the emulator over loopback:
 * every device that failed with the type is sent again once, alone, with cacheMode 1, and no other device is;
 * the summary's counts are the emulator's own per-device entries.
 */
import { expect } from 'chai';
import type { Client } from '../../src/api/client.js';
import type { Emulator } from '../../src/emulator/index.js';
import { runPlaybook } from '../../src/runner/runner.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import {
  calls,
  clientFor,
  countOutcomes,
  emulator,
  memoryStore,
  playbook,
  setFaults,
  spy,
  type Json,
  type SpiedCall,
} from './helpers.js';
import { NIGHTLY_REPORT } from './playbooks.js';

const NIGHTLY = NIGHTLY_REPORT({ name: 'nightly-location-report' });

/** Every entry of a report, read from the emulator through a separate client. */
async function entries(client: Client, account: string, txid: string): Promise<Json[]> {
  const out: Json[] = [];
  for await (const e of client.items('location.getReport', { accountName: account, txid }))
    out.push(e as Json);
  return out;
}

const errorType = (e: Json): string | undefined => {
  const t = (e.error as Json | undefined)?.type;
  return typeof t === 'string' && t !== '' ? t : undefined;
};

describe('runner: nightly location report with 5 % cache misses', function () {
  this.timeout(30_000);
  let emu: Emulator;
  let client: Client;
  let reader: Client;
  let store: SqliteStore;
  let account: string;

  before(async () => {
    // 600 simulated seconds per real second: a cacheMode 1 report (3 simulated minutes) takes 0.3 s.
    emu = await emulator({ devicesPerAccount: 3000, timeScale: 600 });
    account = emu.defaults.accounts[0]!;
    await setFaults(emu, { deviceErrors: { 'SVC CACHE UNAVAILABLE': 0.05 } });
    client = clientFor(emu);
    reader = clientFor(emu);
    store = memoryStore();
  });
  after(async () => {
    await store.close();
    await client.close();
    await reader.close();
    await emu.close();
  });

  it('retries exactly the failed devices once with cacheMode 1, and counts what the emulator reports', async () => {
    const sent: SpiedCall[] = spy(client);
    const summary = await runPlaybook(playbook(NIGHTLY), {
      client,
      store,
      inputs: { account },
      pollIntervalMs: 50,
    });
    expect(summary.status, summary.error).to.equal('succeeded');

    // Two reports were created: the whole list at cacheMode 0, then only the cache misses at cacheMode 1.
    const creates = sent.filter((c) => c.action === 'location.createReport');
    expect(creates).to.have.length(2);
    const emulatorCalls = await calls(emu);
    expect(emulatorCalls.actions['location.createReport']).to.equal(2);
    // Nothing about a report is a device mutation.
    expect(Object.keys(emulatorCalls.devices)).to.have.length(0);

    const [first, second] = creates as [SpiedCall, SpiedCall];
    expect(first.input.cacheMode).to.equal('0');
    expect(second.input.cacheMode).to.equal('1');
    const listed = (first.input.deviceList as { id: string }[]).map((d) => d.id);
    expect(listed).to.have.length(3000);

    // What the emulator says about the first report: which devices missed the cache.
    const txid1 = ((first.output as Json).reports as Json[])[0]!.txid as string;
    const txid2 = ((second.output as Json).reports as Json[])[0]!.txid as string;
    const report1 = await entries(reader, account, txid1);
    expect(report1).to.have.length(3000);
    const misses = report1.filter((e) => errorType(e) === 'SVC CACHE UNAVAILABLE').map((e) => String(e.msid));
    // About 5 % of the IoT devices that are on the network, and at least a handful.
    expect(misses.length).to.be.within(60, 250);

    // The retry named exactly those devices, each once, and no other.
    const retried = (second.input.deviceList as { id: string }[]).map((d) => d.id);
    expect(new Set(retried).size).to.equal(retried.length);
    expect([...retried].sort()).to.deep.equal([...misses].sort());

    // The final outcome of each device: the second report's entry for the retried ones, else the first's.
    const report2 = await entries(reader, account, txid2);
    expect(report2).to.have.length(misses.length);
    const final = new Map<string, Json>();
    for (const e of report1) final.set(String(e.msid), e);
    for (const e of report2) final.set(String(e.msid), e);
    const expected = countOutcomes(
      [...final.values()].map((e) => ({
        outcome: errorType(e) ? 'failed' : 'succeeded',
        error: errorType(e),
      })),
    );
    const step = summary.steps.find((s) => s.id === 'report')!;
    expect(step.devices).to.deep.equal(expected);
    expect(summary.devices).to.deep.equal(expected);
    // cacheMode 1 cannot miss the cache.
    expect(expected.byError['SVC CACHE UNAVAILABLE'] ?? 0).to.equal(0);

    // The ledger: attempts 2 for the retried devices, 1 for every other one, one row per device.
    const rows = await store.deviceResults(summary.runId, 'report');
    expect(rows).to.have.length(3000);
    const missSet = new Set(misses);
    for (const r of rows) expect(r.attempts, r.deviceId).to.equal(missSet.has(r.deviceId) ? 2 : 1);
    for (const r of rows) {
      const e = final.get(r.deviceId)!;
      expect(r.outcome, r.deviceId).to.equal(errorType(e) ? 'failed' : 'succeeded');
      expect(r.errorType, r.deviceId).to.equal(errorType(e));
    }
  });
});
