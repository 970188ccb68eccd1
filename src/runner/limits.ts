/** A run's `limits` (playbook and step): a mutating call that would take the run past one is never sent. */
import type { OwnDeviceType } from '../api/device-errors.js';
import type { Playbook } from '../playbook/schema.js';
import type { RunContext, StepCount } from './context.js';
import { idsOf, withResult, type DeviceSet } from './devices.js';
import { LimitError, type Json } from './types.js';

type Limits = NonNullable<Playbook['limits']>;

/** The error type of the devices a step did not send because a limit of `limits` would have been passed. */
const LIMIT_EXCEEDED: OwnDeviceType = 'LIMIT EXCEEDED';

export class RunLimits {
  /** Every device a mutating call of this run has named, which the playbook's `limits` count. */
  private readonly mutated = new Set<string>();
  /**
   * The devices each step with `limits` of its own has named: a step's limit is its own blast radius (over its
   * iterations in a fan-out), whatever the other steps change.
   */
  private readonly byStep = new Map<string, Set<string>>();
  /** The size of each account's fleet, listed once a run (a listing asked for by steps side by side is one). */
  private readonly fleet = new Map<string, Promise<number>>();

  constructor(private readonly ctx: RunContext) {}

  /**
   * Throws LimitError when the step's devices would take the run (or the step) past a limit, having recorded
   * them `skipped` (LIMIT_EXCEEDED) in the ledger and the step's counts: what a limit kept back is not left
   * unsaid. Else counts them. Once the fleet's size is known, the check and the count are made with nothing
   * awaited in between: steps checked side by side (a fan-out's batches) are checked one after the other, and
   * cannot pass a limit together.
   */
  async check(
    count: StepCount,
    stepLimits: Limits | undefined,
    devices: DeviceSet,
    input: Json,
  ): Promise<void> {
    try {
      await this.admit(count, stepLimits, devices, input);
    } catch (e) {
      if (e instanceof LimitError) {
        const groups = withResult(devices, { outcome: 'skipped', errorType: LIMIT_EXCEEDED, attempts: 0 });
        this.ctx.recordFailing(count, groups);
      }
      throw e;
    }
  }

  private async admit(
    count: StepCount,
    stepLimits: Limits | undefined,
    devices: DeviceSet,
    input: Json,
  ): Promise<void> {
    const { stepId } = count;
    const runLimits = this.ctx.plan.playbook.limits;
    if ((!runLimits && !stepLimits) || !devices.size) return;
    const account = typeof input.accountName === 'string' ? input.accountName : undefined;
    const fleet =
      account !== undefined &&
      (runLimits?.maxPercentOfFleet !== undefined || stepLimits?.maxPercentOfFleet !== undefined)
        ? await this.fleetSize(account, count)
        : undefined;
    const ids = idsOf(devices);
    const step = `step \`${stepId}\``;
    /** Each limit with what it counts, and how its refusal begins: whose limit, and what would pass it. */
    const counted: { limits: Limits; set: Set<string>; of: string; would: string }[] = [];
    if (runLimits)
      counted.push({ limits: runLimits, set: this.mutated, of: '', would: `${step} would bring this run` });
    if (stepLimits)
      counted.push({
        limits: stepLimits,
        set: this.stepSet(stepId),
        of: ` of ${step}`,
        would: 'it would bring the step',
      });
    for (const { limits: l, set, of, would } of counted) {
      let after = set.size;
      for (const id of ids) if (!set.has(id)) after++;
      if (l.maxDevices !== undefined && after > l.maxDevices) {
        throw new LimitError(
          `limits.maxDevices${of} is ${l.maxDevices}: ${would} to ${after} devices; nothing was sent`,
        );
      }
      if (l.maxPercentOfFleet !== undefined && fleet !== undefined) {
        const pct = fleet ? (after / fleet) * 100 : 100;
        if (pct > l.maxPercentOfFleet) {
          throw new LimitError(
            `limits.maxPercentOfFleet${of} is ${l.maxPercentOfFleet} %: ${would} to ${after} of the ${fleet} devices of ${account} (${pct.toFixed(1)} %); nothing was sent`,
          );
        }
      }
    }
    for (const { set } of counted) for (const id of ids) set.add(id);
  }

  /**
   * A resumed run: the devices its earlier executions named in calls that may have changed them (every outcome
   * but `skipped`, which was never sent) count again, as if the run had never stopped.
   */
  async resume(): Promise<void> {
    const { plan, o, id } = this.ctx;
    const { limitedSteps: steps, ownLimits } = plan;
    if (!steps) return;
    const run = plan.playbook.limits !== undefined;
    for await (const page of o.store.eachDeviceResult(id))
      for (const r of page) {
        if (r.outcome === 'skipped' || !steps.has(r.step)) continue;
        if (run) this.mutated.add(r.deviceId);
        if (ownLimits.has(r.step)) this.stepSet(r.step).add(r.deviceId);
      }
  }

  private stepSet(stepId: string): Set<string> {
    let set = this.byStep.get(stepId);
    if (!set) this.byStep.set(stepId, (set = new Set()));
    return set;
  }

  /** The devices of an account: the listing's requests count for the step that asked first. */
  private fleetSize(accountName: string, count: StepCount): Promise<number> {
    let n = this.fleet.get(accountName);
    if (n === undefined) {
      n = (async () => {
        let size = 0;
        for await (const _ of this.ctx.o.client.items(
          'devices.list',
          { accountName },
          this.ctx.requestsOf(count),
        ))
          size++;
        return size;
      })();
      // A listing that failed is asked again by the next step that needs it.
      n.catch(() => this.fleet.delete(accountName));
      this.fleet.set(accountName, n);
    }
    return n;
  }
}
