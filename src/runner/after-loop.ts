/**
 * What a step inside a forEach reads as after the loop (`steps.<inner>`): what it did over every iteration, not
 * one iteration's state nor a made-up success. Its `status` is `failed` when an iteration's was (`error` says in
 * how many, and the first one's error), `skipped` when every iteration that reached it skipped it (`reason`),
 * else `succeeded` (`planned` in a dry run); its `devices` are its totals; its `output` is null (each iteration
 * had its own: the loop's is `{ iterations, failed }`). Its `items`: a device action's per-device results over
 * every iteration, from the ledger, after a loop that is not itself in one (only when an expression outside the
 * loop reads them: Plan.itemsAfterLoops); they cannot be read after a loop inside another, nor a listing's or a
 * ledger query's, each iteration of which found its own; the other steps have none.
 */
import { isAction } from '../api/catalog.js';
import type { Step } from '../playbook/schema.js';
import { addCounts, emptyCounts, type DeviceCounts, type StepStatus } from '../store/store.js';
import { findsItems, unreadableItems, type RunContext } from './context.js';
import { stepsIn } from './plan.js';
import type { Scope, StepState } from './types.js';

/** Which status of an iteration the step reads as after the loop, the first listed that any iteration had. */
const PRECEDENCE: StepStatus[] = ['failed', 'cancelled', 'succeeded', 'planned', 'skipped'];

interface Over {
  /** Per status, how many iterations ended the step so, and the first (by index) with its error or reason. */
  by: Map<StepStatus, { n: number; first: number; why?: string | undefined }>;
  devices: DeviceCounts;
  /** The reasons of the iterations that skipped it. */
  reasons: Set<string>;
}

/** The states of the steps inside a forEach, iteration by iteration: what they read as after the loop. */
export class AfterLoop {
  private readonly over = new Map<string, Over>();
  private readonly inner: Step[];
  /** What the forEach shows of its body's devices: those of its steps, a nested forEach's counted by its own. */
  readonly devices = emptyCounts();

  constructor(
    private readonly ctx: RunContext,
    private readonly loop: Extract<Step, { forEach: unknown }>,
  ) {
    this.inner = stepsIn(loop.forEach.steps as Step[]);
  }

  /** Takes the states the steps of iteration `index` ended with (those it reached), from its scope. */
  add(index: number, child: Scope, parent: Scope): void {
    for (const s of this.inner) {
      const st = child.ctx.steps[s.id];
      if (!st || st === parent.ctx.steps[s.id]) continue;
      if (!('forEach' in s)) addCounts(this.devices, st.devices);
      let o = this.over.get(s.id);
      if (!o) this.over.set(s.id, (o = { by: new Map(), devices: emptyCounts(), reasons: new Set() }));
      addCounts(o.devices, st.devices);
      const why = st.status === 'skipped' ? st.reason : st.error;
      if (st.status === 'skipped' && st.reason) o.reasons.add(st.reason);
      const b = o.by.get(st.status);
      if (!b) o.by.set(st.status, { n: 1, first: index, why });
      else {
        b.n++;
        if (index < b.first) Object.assign(b, { first: index, why });
      }
    }
  }

  /** Sets, in `scope`, each inner step's state after the loop, over `iterations` iterations. */
  async settle(scope: Scope, iterations: number): Promise<void> {
    for (const s of this.inner) scope.ctx.steps[s.id] = await this.stateOf(s, scope, iterations);
  }

  private async stateOf(s: Step, scope: Scope, iterations: number): Promise<StepState> {
    const o = this.over.get(s.id);
    const status = PRECEDENCE.find((st) => o?.by.has(st)) ?? 'skipped';
    const b = o?.by.get(status);
    const state: StepState = { status, output: null, items: [], devices: o?.devices ?? emptyCounts() };
    if (!b) state.reason = `no iteration of forEach \`${this.loop.id}\` reached it`;
    else if (status === 'failed' || status === 'cancelled')
      state.error = `${status} in ${b.n} of ${iterations} iterations (iteration ${b.first}: ${b.why ?? status})`;
    else if (status === 'skipped' && b.why)
      state.reason =
        (o?.reasons.size ?? 0) > 1 ? `skipped in every iteration (iteration ${b.first}: ${b.why})` : b.why;
    const read = `\`steps.${s.id}.items\` cannot be read after forEach \`${this.loop.id}\``;
    if (findsItems(s))
      return unreadableItems(
        state,
        `${read}: each of its iterations found its own, and they are not kept together; read them inside the loop`,
      );
    if (!('uses' in s) || !isAction(s.uses)) return state;
    if (scope.inLoop) {
      const outermost = this.ctx.plan.loops.get(s.id)?.[0] ?? this.loop.id;
      return unreadableItems(
        state,
        `${read}, which runs inside forEach \`${outermost}\`: its per-device results over every iteration ` +
          `are read from the ledger only after \`${outermost}\`; read them inside the loop, or after \`${outermost}\``,
      );
    }
    if (b && this.ctx.plan.itemsAfterLoops.has(s.id)) state.items = await this.ctx.ledgerItems(s.id);
    return state;
  }
}
