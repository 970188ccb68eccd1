/** A run's `limits` (playbook and step): a mutating call that would take the run past one is never sent. */
import type { Playbook } from '../playbook/schema.js';
import type { RunContext, StepCount } from './context.js';
import { idsOf, type DeviceSet } from './devices.js';
import { LimitError, type Json } from './types.js';

type Limits = NonNullable<Playbook['limits']>;

export class RunLimits {
  /** Every device a mutating call of this run has named. */
  private readonly mutated = new Set<string>();
  private readonly fleet = new Map<string, number>();

  constructor(private readonly ctx: RunContext) {}

  /** Throws LimitError when the step's devices would take the run past a limit; else counts them. */
  async check(
    count: StepCount,
    stepLimits: Limits | undefined,
    devices: DeviceSet,
    input: Json,
  ): Promise<void> {
    const { stepId } = count;
    const limits = [this.ctx.plan.playbook.limits, stepLimits].filter((l): l is Limits => Boolean(l));
    if (!limits.length || !devices.size) return;
    const ids = idsOf(devices);
    const after = new Set(this.mutated);
    for (const id of ids) after.add(id);
    for (const l of limits) {
      if (l.maxDevices !== undefined && after.size > l.maxDevices) {
        throw new LimitError(
          `limits.maxDevices is ${l.maxDevices}: step \`${stepId}\` would bring this run to ${after.size} devices; nothing was sent`,
        );
      }
      if (l.maxPercentOfFleet !== undefined && typeof input.accountName === 'string') {
        const fleet = await this.fleetSize(input.accountName, count);
        const pct = fleet ? (after.size / fleet) * 100 : 100;
        if (pct > l.maxPercentOfFleet) {
          throw new LimitError(
            `limits.maxPercentOfFleet is ${l.maxPercentOfFleet} %: step \`${stepId}\` would bring this run to ${after.size} of the ${fleet} devices of ${input.accountName} (${pct.toFixed(1)} %); nothing was sent`,
          );
        }
      }
    }
    for (const id of ids) this.mutated.add(id);
  }

  /** The devices of an account, listed once a run: the listing's requests count for the step that asked. */
  private async fleetSize(accountName: string, count: StepCount): Promise<number> {
    let n = this.fleet.get(accountName);
    if (n === undefined) {
      n = 0;
      for await (const _ of this.ctx.o.client.items(
        'devices.list',
        { accountName },
        this.ctx.requestsOf(count),
      ))
        n++;
      this.fleet.set(accountName, n);
    }
    return n;
  }
}
