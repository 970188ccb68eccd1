/**
 * The truth test of confirmed outcomes: a mix of devices in every state, and each device's ledger row checked
 * against the emulator's own record of the request that named it.
 */
import { expect } from 'chai';
import type { Emulator } from '../../src/emulator/index.js';
import type { LedgerRow } from '../../src/store/store.js';
import { accountDevices, imei } from '../runner/helpers.js';
import { readState } from './daemon.js';

/** Three devices of each state, from the account's seed. */
export async function mixOfStates(emu: Emulator, account: string): Promise<Map<string, string>> {
  const byState = new Map<string, string[]>();
  for (const d of await accountDevices(emu, account)) {
    const list = byState.get(d.state) ?? [];
    if (list.length < 3) list.push(imei(d));
    byState.set(d.state, list);
  }
  const mix = new Map<string, string>();
  for (const state of ['active', 'suspend', 'pending', 'deactive']) {
    const list = byState.get(state) ?? [];
    expect(list, `the seed has devices in state ${state}`).to.have.length(3);
    for (const id of list) mix.set(id, state);
  }
  return mix;
}

/**
 * Each device's ledger row against the emulator's record of the request the row names: succeeded exactly when
 * the emulator says Success, failed when it says Failed (with its reason, when `reasons`), unconfirmed when it
 * never finished.
 */
export function expectLedgerIsTheTruth(emu: Emulator, rows: LedgerRow[], reasons: boolean): void {
  for (const row of rows) {
    expect(row.requestId, `${row.deviceId} has the request id it was accepted under`).to.be.a('string');
    const record = emu.request(row.requestId!);
    expect(record, `the emulator knows request ${row.requestId}`).to.not.equal(undefined);
    const device = record!.devices.find((d) => d.deviceIds.some((x) => x.id === row.deviceId));
    expect(device, `request ${row.requestId} names ${row.deviceId}`).to.not.equal(undefined);
    const expected = { Success: 'succeeded', Failed: 'failed', Pending: 'unconfirmed' }[device!.status];
    expect(row.outcome, `${row.deviceId}: the emulator says ${device!.status}`).to.equal(expected);
    if (reasons && device!.status === 'Failed') expect(row.errorType).to.equal(device!.reason?.code);
  }
}

/** A device_results row of a suspend step, as the state file holds it. */
interface SuspendRow {
  device_id: string;
  outcome: string;
  error_type: string | null;
  request_id: string | null;
  attempts: number;
}

/** The ledger of run `runId`'s step `suspend`, read from the SQLite state file `state` (a daemon's, running). */
export function suspendLedger(state: string, runId: string): LedgerRow[] {
  return readState(state, (db) =>
    (
      db
        .prepare("SELECT * FROM device_results WHERE run_id = ? AND step = 'suspend'")
        .all(runId) as SuspendRow[]
    ).map((r) => ({
      runId,
      step: 'suspend',
      deviceId: r.device_id,
      kind: 'imei',
      outcome: r.outcome as LedgerRow['outcome'],
      ...(r.error_type !== null ? { errorType: r.error_type } : {}),
      ...(r.request_id !== null ? { requestId: r.request_id } : {}),
      attempts: r.attempts,
      at: '',
    })),
  );
}
