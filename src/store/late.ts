/**
 * Results that come after a run has ended (product.md 5a): the CarrierService message of a device that the run
 * left `unconfirmed` once its step's confirmation time had passed, or settled by a read of its state (the read's
 * guess: `succeeded` in the target state, `STATE NOT CHANGED` not in it, without the service's reason). The ledger
 * takes the service's word when it comes: a later entry with the device's outcome and reason, which replaces the
 * earlier one, and the run's summary counts move with it. A device confirmed by its message or by the request's
 * status already has the service's word: a message that comes again changes nothing. Both stores decide and write this in one transaction (Store.recordLate); what to write
 * is decided here, once for both.
 */
import { parse, type EntryRow } from './rows.js';
import type { DeviceCounts, DeviceGroup, RunSummary } from './store.js';

/** A device's result in a message that came after its run ended. */
export interface LateResult {
  /** The entry (its seq), `unconfirmed` or a state read's, that named the device under the message's request id. */
  seq: number;
  deviceId: string;
  outcome: 'succeeded' | 'failed';
  errorType?: string;
  errorClass?: string;
}

/** What a store writes for late results: the entries by step, and the run's summary with its counts moved. */
export interface LateWrites {
  steps: Map<string, DeviceGroup[]>;
  summary: RunSummary | undefined;
  /** Whether any device is recorded. */
  any: boolean;
  /** How many devices got each outcome. */
  recorded: LateCounts;
}

/** Devices recorded late, by the outcome they got. */
export interface LateCounts {
  succeeded: number;
  failed: number;
}

/** The seqs of the entries `results` name, and their devices: what a store reads the entries and devices of. */
export const lateSeqs = (results: readonly LateResult[]): number[] => [...new Set(results.map((r) => r.seq))];
export const lateDevices = (results: readonly LateResult[]): string[] => [
  ...new Set(results.map((r) => r.deviceId)),
];

/** What a store reads, in the transaction that writes, to decide what late results it records. */
export interface LateReads {
  /** The run's summary, as the store keeps it. */
  summaryJson: string | null;
  /** The run's `unconfirmed` entries and those of state reads (EntryRow.by_state_read), among those `results` name (lateSeqs). */
  entries: readonly EntryRow[];
  /**
   * The last seq of an entry naming each device of `results` (lateDevices) in each step, among the run's
   * entries from the first of `entries` on.
   */
  latest: readonly { step: string; id: string; seq: number }[];
}

/**
 * The writes for `results`, of which only those count whose entry is one of `reads.entries`, names the device,
 * and is still its latest result in the step (a device sent again, and confirmed then, keeps that outcome). A
 * device is counted once, whatever the messages that name it.
 */
export function lateWrites(reads: LateReads, results: readonly LateResult[]): LateWrites {
  const entries = new Map(reads.entries.map((e) => [e.seq, e]));
  const latest = new Map(reads.latest.map((r) => [`${r.step}\0${r.id}`, r.seq]));
  const summary = parse(reads.summaryJson) as RunSummary | undefined;
  const groups = new Map<string, DeviceGroup>();
  const done = new Set<string>();
  const recorded: LateCounts = { succeeded: 0, failed: 0 };
  const sum = summary && (structuredClone(summary) as RunSummary);
  for (const r of results) {
    const e = entries.get(r.seq);
    const key = e && `${e.step}\0${r.deviceId}`;
    if (!e || !key || done.has(key) || (latest.get(key) ?? e.seq) > e.seq) continue;
    if (e.outcome !== 'unconfirmed' && !e.by_state_read) continue;
    if (!(JSON.parse(e.device_ids) as string[]).includes(r.deviceId)) continue;
    done.add(key);
    recorded[r.outcome]++;
    const groupKey = [e.step, e.kind, e.request_id, e.attempts, r.outcome, r.errorType ?? ''].join('\0');
    let g = groups.get(groupKey);
    if (!g) {
      g = {
        kind: e.kind,
        ids: [],
        outcome: r.outcome,
        attempts: e.attempts,
        ...(e.request_id !== null ? { requestId: e.request_id } : {}),
        ...(r.errorType !== undefined ? { errorType: r.errorType } : {}),
        ...(r.errorClass !== undefined ? { errorClass: r.errorClass } : {}),
      };
      groups.set(groupKey, g);
    }
    g.ids.push(r.deviceId);
    if (!sum) continue;
    const read = Boolean(e.by_state_read);
    const moved = { outcome: e.outcome as Settled, from: e.error_type ?? undefined, to: r };
    move(sum.devices, moved);
    const step = sum.steps.find((s) => s.id === e.step);
    if (step) {
      move(step.devices, moved);
      const c = (step.confirmation ??= { callback: 0, requestStatus: 0, stateRead: 0 });
      // Confirmed by the message now, not by the read.
      if (read) c.stateRead = Math.max(0, c.stateRead - 1);
      c.afterRun = (c.afterRun ?? 0) + 1;
    }
  }
  const steps = new Map<string, DeviceGroup[]>();
  for (const [key, g] of groups) {
    const step = key.slice(0, key.indexOf('\0'));
    steps.set(step, [...(steps.get(step) ?? []), g]);
  }
  return { steps, summary: sum, recorded, any: done.size > 0 };
}

/** What an entry a late result replaces says of its devices. */
type Settled = 'unconfirmed' | 'succeeded' | 'failed';

/**
 * One device out of the entry's outcome (`unconfirmed` with the error of its last look, if any; a state read's
 * `succeeded`, or `failed` with `STATE NOT CHANGED`) and into the message's.
 */
function move(c: DeviceCounts, m: { outcome: Settled; from: string | undefined; to: LateResult }): void {
  c[m.outcome] = Math.max(0, c[m.outcome] - 1);
  c[m.to.outcome]++;
  const was = m.from === undefined ? undefined : c.byError[m.from];
  if (m.from !== undefined && was !== undefined) {
    if (was > 1) c.byError[m.from] = was - 1;
    else delete c.byError[m.from];
  }
  if (m.to.outcome === 'failed' && m.to.errorType !== undefined)
    c.byError[m.to.errorType] = (c.byError[m.to.errorType] ?? 0) + 1;
}
