/**
 * The calls and attempts of a step's execution as its requests leave (step_calls, a small row by step key), kept
 * apart from its checkpoint so that a request writes a few bytes, not the checkpoint again: the checkpoint of a
 * step under way can be large, and a status poll, a listing's page, leaves every few hundred milliseconds. Read
 * with the checkpoints (loadSteps, stepMarks): a run resumed after a crash counts them, and a run under way shows
 * them. The checkpoint a step ends with keeps its own counts, which a later row never replaces: the row goes in the
 * same commit (endsCalls), and the rows of the steps that never ended go with the run's end. A loop of 100,000
 * reads keeps the rows of its iterations under way, not one an iteration until the run is pruned.
 */
import { ENDED } from './checkpoint-steps.js';

/** A row of step_calls: the counts of the execution under `step_key` when its latest request left. */
export interface StepCallsRow {
  step_key: string;
  calls: number;
  attempts: number;
}

/**
 * Whether the checkpoint `state`, about to be written, ends a step that made requests: its counts are final, and
 * its step_calls row (written only once a request counted, and resumed from) goes in the same commit.
 */
export function endsCalls(state: unknown): boolean {
  const s = state as { status?: unknown; calls?: unknown } | null | undefined;
  return typeof s?.status === 'string' && ENDED.has(s.status) && typeof s.calls === 'number' && s.calls > 0;
}

/**
 * `cps` (checkpoints by key, as the store keeps them) with the counts of `rows`: in the checkpoint of a step under
 * way or begun, the larger of the two (a checkpoint written after the row keeps counts as large); with `begun`, a
 * row of a key with no checkpoint (an iteration inside a loop, which marks no start) as a `running` mark.
 */
export function withStepCalls(
  cps: Map<string, unknown>,
  rows: readonly StepCallsRow[],
  begun: boolean,
): Map<string, unknown> {
  for (const r of rows) {
    const cp = cps.get(r.step_key) as { status?: unknown; calls?: number; attempts?: number } | undefined;
    if (!cp) {
      if (begun) cps.set(r.step_key, { status: 'running', calls: r.calls, attempts: r.attempts });
      continue;
    }
    if (typeof cp.status === 'string' && ENDED.has(cp.status)) continue;
    cp.calls = Math.max(cp.calls ?? 0, Number(r.calls));
    cp.attempts = Math.max(cp.attempts ?? 0, Number(r.attempts));
  }
  return cps;
}
