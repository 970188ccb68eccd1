/**
 * Results that come after their step (product.md 5a): the CarrierService message of a device that a run, since
 * ended, left `unconfirmed` once its step's confirmation time had passed, or that a run settled by a read of its
 * state (the read's guess: `succeeded` in the target state, `STATE NOT CHANGED` not in it, without the service's
 * reason), ended or still going. The ledger takes the service's word when it comes: a later entry with the
 * device's outcome and reason, which replaces the earlier one, and the run's summary counts move with it. A run
 * still going writes its summary as it ends, from what its steps counted: the moves are kept with the run
 * (`late_moves_json`) and its summary is read with them (withMoves), as are the steps it shows meanwhile. A device
 * confirmed by its message or by the request's status already has the service's word: a message that comes again
 * changes nothing. Both stores decide and write this in one transaction (Store.recordLate); what to write is
 * decided here, once for both.
 */
import type { EntryRow } from './rows.js';
import type { DeviceCounts, DeviceGroup, RunRecord, RunSummary, StepSummary } from './store.js';

/** A device's result in a message that came after its step. */
export interface LateResult {
  /** The entry (its seq), `unconfirmed` or a state read's, that named the device under the message's request id. */
  seq: number;
  deviceId: string;
  outcome: 'succeeded' | 'failed';
  errorType?: string;
  errorClass?: string;
}

/**
 * What a store writes for late results: the entries by step; of a run ended, its summary with its counts moved
 * (and those moved while it went on); of a run still going, the moves its summary is to be read with.
 */
export interface LateWrites {
  steps: Map<string, DeviceGroup[]>;
  summary: RunSummary | undefined;
  /** Of a run still going: every move recorded while it goes on, these included (`late_moves_json`). */
  moves: LateMove[] | undefined;
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

/**
 * `n` devices moved from the outcome of the entry they were settled by (`unconfirmed` with the error of its last
 * look, if any; a state read's `succeeded`, or `failed` with `STATE NOT CHANGED`) to the one their message gives,
 * in the counts of their step and their run, and from the means that confirmed them (a state read) to `afterRun`.
 * Kept as counts, one per kind of move: a run of a million devices keeps a few.
 */
export interface LateMove {
  step: string;
  outcome: Settled;
  from?: string;
  to: Pick<LateResult, 'outcome' | 'errorType'>;
  /** The entry was a state read's. */
  read: boolean;
  n: number;
}

/** The run's row, as both stores read it (`SELECT ${LATE_RUN_COLUMNS} FROM runs`) to record late results. */
export interface LateRun {
  /** The run's summary, as the store keeps it. */
  summary_json: string | null;
  /** Set once the run has ended: the entries of a run still going that a message settles are its state reads'. */
  ended_at: string | null;
  /** The moves recorded while the run went on, not yet counted in its summary. */
  late_moves_json: string | null;
}

export const LATE_RUN_COLUMNS = 'summary_json, ended_at, late_moves_json';

/**
 * What Store.updateRun changes of a run: a member not given keeps its value. `movesCounted`: the summary given was
 * counted from the ledger (`runs cancel`), the results recorded late while the run went on among them, which are
 * then not applied to it again (RunRecord.lateMoves).
 */
export type RunUpdate = Partial<Pick<RunRecord, 'status' | 'endedAt' | 'summary' | 'error'>> & {
  movesCounted?: true;
};

/** What a store reads, in the transaction that writes, to decide what late results it records. */
export interface LateReads {
  run: LateRun;
  /**
   * Of a run not ended, the keys of its steps under way (`step_calls`: a step's row lives from its first request to
   * its end): their entries are left to a pass after the step ends. The step still counts its devices and may
   * send them again (a `devices.retry` pass), or resume from them; a late entry beside its own would count a
   * device twice.
   */
  underWay: readonly string[];
  /** The run's `unconfirmed` entries and those of state reads (EntryRow.by_state_read), among those `results` name (lateSeqs). */
  entries: readonly EntryRow[];
  /**
   * The last seq of an entry naming each device of `results` (lateDevices) in each step, among the run's
   * entries from the first of `entries` on.
   */
  latest: readonly { step: string; id: string; seq: number }[];
}

/**
 * The writes for `results`, of which only those count whose entry is one of `reads.entries` (of a run still
 * going, a state read's), names the device, and is still its latest result in the step (a device sent again, and
 * confirmed then, keeps that outcome). A device is counted once, whatever the messages that name it.
 */
export function lateWrites(reads: LateReads, results: readonly LateResult[]): LateWrites {
  const entries = new Map(reads.entries.map((e) => [e.seq, e]));
  const latest = new Map(reads.latest.map((r) => [`${r.step}\0${r.id}`, r.seq]));
  const groups = new Map<string, DeviceGroup>();
  const done = new Set<string>();
  const recorded: LateCounts = { succeeded: 0, failed: 0 };
  // The moves recorded while the run went on first, then these, added to those of the same kind.
  const moves = new Map<string, LateMove>();
  const add = (m: LateMove) => {
    const key = JSON.stringify([
      m.step,
      m.outcome,
      m.from ?? null,
      m.to.outcome,
      m.to.errorType ?? null,
      m.read,
    ]);
    const had = moves.get(key);
    if (had) had.n += m.n;
    else moves.set(key, { ...m });
  };
  const { summary_json, ended_at, late_moves_json } = reads.run;
  const ended = ended_at !== null;
  // A step's key ends with its id (`loop[3]/suspend`); a ledger entry names the step by its id.
  const going = new Set(ended ? [] : reads.underWay.map((k) => k.slice(k.lastIndexOf('/') + 1)));
  if (late_moves_json !== null) for (const m of JSON.parse(late_moves_json) as LateMove[]) add(m);
  for (const r of results) {
    const e = entries.get(r.seq);
    const key = e && `${e.step}\0${r.deviceId}`;
    if (!e || !key || done.has(key) || (latest.get(key) ?? e.seq) > e.seq) continue;
    if (!e.by_state_read && (e.outcome !== 'unconfirmed' || !ended)) continue;
    if (going.has(e.step)) continue;
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
    add({
      step: e.step,
      outcome: e.outcome as Settled,
      ...(e.error_type !== null ? { from: e.error_type } : {}),
      to: { outcome: r.outcome, ...(r.errorType !== undefined ? { errorType: r.errorType } : {}) },
      read: Boolean(e.by_state_read),
      n: 1,
    });
  }
  const steps = new Map<string, DeviceGroup[]>();
  for (const [key, g] of groups) {
    const step = key.slice(0, key.indexOf('\0'));
    steps.set(step, [...(steps.get(step) ?? []), g]);
  }
  const all = [...moves.values()];
  const summary = summary_json === null ? undefined : (JSON.parse(summary_json) as RunSummary);
  return {
    steps,
    // Ended: the summary the run wrote, with what came while it went on and what comes now.
    summary: ended && summary ? withMoves(summary, all) : undefined,
    moves: ended ? undefined : all,
    recorded,
    any: done.size > 0,
  };
}

/** `summary` (not changed) with its counts moved by `moves`: those of each move's step and the run's. */
export function withMoves(summary: RunSummary, moves: readonly LateMove[]): RunSummary {
  if (!moves.length) return summary;
  const sum = structuredClone(summary);
  for (const m of moves) {
    move(sum.devices, m);
    const step = sum.steps.find((s) => s.id === m.step);
    if (step) moveStep(step, m);
  }
  return sum;
}

/** The steps a run not ended shows (run-views.ts liveView), changed in place by the moves recorded meanwhile. */
export function moveSteps(steps: readonly StepSummary[], moves: readonly LateMove[]): void {
  for (const m of moves) {
    const step = steps.find((s) => s.id === m.step);
    if (step) moveStep(step, m);
  }
}

function moveStep(step: StepSummary, m: LateMove): void {
  move(step.devices, m);
  const c = (step.confirmation ??= { callback: 0, requestStatus: 0, stateRead: 0 });
  // Confirmed by the message now, not by the read.
  if (m.read) c.stateRead = Math.max(0, c.stateRead - m.n);
  c.afterRun = (c.afterRun ?? 0) + m.n;
}

/** What an entry a late result replaces says of its devices. */
type Settled = 'unconfirmed' | 'succeeded' | 'failed';

/** The move's devices out of their entry's outcome and into their message's (LateMove). */
function move(c: DeviceCounts, m: LateMove): void {
  c[m.outcome] = Math.max(0, c[m.outcome] - m.n);
  c[m.to.outcome] += m.n;
  const was = m.from === undefined ? undefined : c.byError[m.from];
  if (m.from !== undefined && was !== undefined) {
    if (was > m.n) c.byError[m.from] = was - m.n;
    else delete c.byError[m.from];
  }
  if (m.to.outcome === 'failed' && m.to.errorType !== undefined)
    c.byError[m.to.errorType] = (c.byError[m.to.errorType] ?? 0) + m.n;
}
