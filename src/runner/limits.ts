/** A run's `limits` (playbook and step): a mutating call that would take the run past one is never sent. */
import type { Playbook } from '../playbook/schema.js';
import type { RunContext, StepCount } from './context.js';
import { idsOf, type DeviceSet } from './devices.js';
import { LimitError, type Json } from './types.js';

type Limits = NonNullable<Playbook['limits']>;

export class RunLimits {
  /** Every device a mutating call of this run has named. */
  private readonly mutated = new Set<string>();
  /** The size of each account's fleet, listed once a run (a listing asked for by steps side by side is one). */
  private readonly fleet = new Map<string, Promise<number>>();

  constructor(private readonly ctx: RunContext) {}

  /**
   * Throws LimitError when the step's devices would take the run past a limit; else counts them. Once the
   * fleet's size is known, the check and the count are made with nothing awaited in between: steps checked side
   * by side (a fan-out's batches) are checked one after the other, and cannot pass a limit together.
   */
  async check(
    count: StepCount,
    stepLimits: Limits | undefined,
    devices: DeviceSet,
    input: Json,
  ): Promise<void> {
    const { stepId } = count;
    const limits = [this.ctx.plan.playbook.limits, stepLimits].filter((l): l is Limits => Boolean(l));
    if (!limits.length || !devices.size) return;
    const account = typeof input.accountName === 'string' ? input.accountName : undefined;
    const fleet =
      account !== undefined && limits.some((l) => l.maxPercentOfFleet !== undefined)
        ? await this.fleetSize(account, count)
        : undefined;
    const fresh = new Set<string>();
    for (const id of idsOf(devices)) if (!this.mutated.has(id)) fresh.add(id);
    const after = this.mutated.size + fresh.size;
    for (const l of limits) {
      if (l.maxDevices !== undefined && after > l.maxDevices) {
        throw new LimitError(
          `limits.maxDevices is ${l.maxDevices}: step \`${stepId}\` would bring this run to ${after} devices; nothing was sent`,
        );
      }
      if (l.maxPercentOfFleet !== undefined && fleet !== undefined) {
        const pct = fleet ? (after / fleet) * 100 : 100;
        if (pct > l.maxPercentOfFleet) {
          throw new LimitError(
            `limits.maxPercentOfFleet is ${l.maxPercentOfFleet} %: step \`${stepId}\` would bring this run to ${after} of the ${fleet} devices of ${account} (${pct.toFixed(1)} %); nothing was sent`,
          );
        }
      }
    }
    for (const id of fresh) this.mutated.add(id);
  }

  /**
   * A resumed run: the devices its earlier executions named in calls that may have changed them (every outcome
   * but `skipped`, which was never sent) count again, as if the run had never stopped.
   */
  async resume(): Promise<void> {
    const { plan, o, id } = this.ctx;
    const steps = plan.limitedSteps;
    if (!steps) return;
    for await (const page of o.store.eachDeviceResult(id))
      for (const r of page) if (r.outcome !== 'skipped' && steps.has(r.step)) this.mutated.add(r.deviceId);
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
