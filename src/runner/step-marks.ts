/**
 * The marks a run writes so that what it shows of its steps while it goes on (`runs show`, `GET /runs/{id}`, the
 * console's run page: store/checkpoint-steps.ts) is true, not guessed: a step outside any loop marks its start
 * (`running`, with when) and its skip by `if` (`skipped`, with why), as a checkpoint under its key. Inside a loop
 * only the first start and the first skip of each step are marked, however many iterations run it: a step with no
 * mark there was never begun. A loop inside a loop is the exception: each of its starts is marked (one write an
 * iteration of the loop it is in, beside its own checkpoint as it ends), so that one that ended is not shown
 * `running` while the loop it is in goes on. Each is one small write in the store's turn of a write that happens anyway (the
 * checkpoint of the step before it, of the run's creation), and the step's own checkpoints replace its start mark.
 *
 * A run resumed (restore.ts) runs again a step whose start mark is its only checkpoint, its `if` evaluated again;
 * it does not evaluate again the `if` of a step outside any loop whose skip is marked: the skip stands, as a
 * finished step does (runner.ts reads a step's checkpoint before its `if`). Inside a loop, where most iterations'
 * skips are not marked, every iteration resumed evaluates again the `if` of its steps not finished.
 */
import type { Store } from '../store/store.js';
import { IF_FALSE, type StepCount } from './context.js';
import type { Checkpoint } from './types.js';

export class StepMarks {
  /** The steps inside loops whose first start, and first skip, this execution marked. */
  private readonly begun = new Set<string>();
  private readonly skipped = new Set<string>();

  constructor(
    private readonly store: Store,
    private readonly runId: string,
  ) {}

  /**
   * Marks step `id` begun under `key` at `at`, which its execution's checkpoints keep (`count`): every start
   * outside a loop, the first inside one, and every start of a loop (`loop`) inside one.
   */
  started(count: StepCount, key: string, id: string, inLoop: boolean, at: string, loop = false): void {
    if (inLoop && !loop && !once(this.begun, id)) return;
    count.startedAt = at;
    this.store.saveStep(this.runId, key, { status: 'running', startedAt: at } satisfies Checkpoint);
  }

  /** Marks step `id` skipped by its `if` under `key`: every skip outside a loop, the first inside one. */
  skippedByIf(key: string, id: string, inLoop: boolean): void {
    if (inLoop && !once(this.skipped, id)) return;
    this.store.saveStep(this.runId, key, { status: 'skipped', reason: IF_FALSE } satisfies Checkpoint);
  }
}

/** Whether `cp` marks a skip by `if`. */
export function skippedByIf(cp: Checkpoint | undefined): boolean {
  return cp?.status === 'skipped' && cp.reason === IF_FALSE;
}

/**
 * The checkpoints `cps` (a run's, as the store keeps them) a resumed run goes on from: without the marks of a start
 * (nothing done yet: the step runs again) nor those of a skip inside a loop (the `if` is evaluated again).
 */
export function resumable(cps: ReadonlyMap<string, unknown>): Map<string, Checkpoint> {
  const out = new Map<string, Checkpoint>();
  for (const [key, value] of cps) {
    const cp = value as Checkpoint;
    // A key inside a loop names the loop's iteration (`each[3]/note`); a step id has no bracket.
    if (cp?.status === 'running' || (key.includes('[') && skippedByIf(cp))) continue;
    out.set(key, cp);
  }
  return out;
}

/**
 * The counts the store kept of the steps whose start mark is their only checkpoint (a listing, a read, begun and
 * stopped by a crash; an iteration inside a loop, marked or not: store/step-calls.ts), by key: the step runs again,
 * and its calls count those its earlier execution sent.
 */
export function begunCounts(
  cps: ReadonlyMap<string, unknown>,
): Map<string, Pick<Checkpoint, 'calls' | 'attempts'>> {
  const out = new Map<string, Pick<Checkpoint, 'calls' | 'attempts'>>();
  for (const [key, value] of cps) {
    const cp = value as Checkpoint;
    if (cp?.status === 'running' && (cp.calls || cp.attempts))
      out.set(key, { calls: cp.calls ?? 0, attempts: cp.attempts ?? 0 });
  }
  return out;
}

function once(set: Set<string>, id: string): boolean {
  if (set.has(id)) return false;
  set.add(id);
  return true;
}
