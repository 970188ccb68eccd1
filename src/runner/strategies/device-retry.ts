/**
 * The per-device policy of a step (`devices.retry`, `devices.ignore`), for every strategy that gets an outcome
 * per device: after a first pass, the devices that failed with a type a rule names are sent again, alone, with
 * the rule's arguments, up to its attempts; then the failures `ignore` names become `skipped`.
 */
import { render } from '../../expressions/template.js';
import type { DeviceGroup } from '../../store/store.js';
import type { DeviceResults } from '../device-results.js';
import type { DeviceRetryRule } from '../plan.js';
import { withDevices } from '../devices.js';
import type { Json } from '../types.js';
import type { ActionCall } from './index.js';

/** A pass of the policy: the first (`rule` -1, attempt 1), or a rule's attempt. */
export interface RetryPass {
  rule: number;
  attempt: number;
}

export const FIRST_PASS: RetryPass = { rule: -1, attempt: 1 };

/**
 * Runs `pass` over the step's input, then over the devices the rules retry (those whose latest result failed
 * with a type a rule names), then makes the failures `ignore` names `skipped`. `pass` adds each device's result
 * to `results` and returns the step's output; it is told which rule's attempt it is (`rule` -1: the first pass).
 * Returns the last output and the groups `ignore` made skipped. `from`: the pass a resumed step was in, whose
 * call takes up what an earlier execution began (its checkpoint); the passes go on after it, not from the first.
 */
export async function withDeviceRetries(
  x: ActionCall,
  results: DeviceResults,
  from: RetryPass,
  pass: (input: Json, attempt: number, rule: number) => Promise<unknown>,
): Promise<{ output: unknown; ignored: DeviceGroup[] }> {
  let output = await pass(x.input, from.attempt, from.rule);
  for (const [i, rule] of x.plan.deviceRetry.entries()) {
    if (i < from.rule) continue;
    for (let attempt = i === from.rule ? from.attempt + 1 : 2; attempt <= rule.maxAttempts; attempt++) {
      const again = results.resend(
        (g) => g.outcome === 'failed' && g.errorType !== undefined && rule.on.has(g.errorType),
      );
      if (!again.size) break;
      const overrides = await beforeRetry(x, rule, again.size, attempt);
      output = await pass({ ...withDevices(x.input, again), ...overrides }, attempt, i);
    }
  }
  const ignored = results.skip((g) => ignores(x, g));
  return { output, ignored };
}

/** Whether `g` failed with a type `devices.ignore` names. */
export function ignores(x: ActionCall, g: DeviceGroup): boolean {
  return g.outcome === 'failed' && g.errorType !== undefined && x.plan.ignore.has(g.errorType);
}

/**
 * Where the policy sends a device that failed with `type` in pass `after`: the same rule's next attempt, while
 * it has attempts left and names the type; else the first later rule that names it. Undefined when none does:
 * that failure is the device's final result.
 */
export function nextPass(
  rules: readonly DeviceRetryRule[],
  type: string,
  after: RetryPass,
): RetryPass | undefined {
  const current = rules[after.rule];
  if (current?.on.has(type) && after.attempt < current.maxAttempts)
    return { rule: after.rule, attempt: after.attempt + 1 };
  for (let rule = after.rule + 1; rule < rules.length; rule++) {
    const r = rules[rule] as DeviceRetryRule;
    if (r.on.has(type) && r.maxAttempts >= 2) return { rule, attempt: 2 };
  }
  return undefined;
}

/**
 * `groups`, results of pass `after`, with the failures `ignore` names that are final (no later pass sends their
 * devices again) made `skipped`: what the step records for them whether or not it ends well.
 */
export function finalIgnored(x: ActionCall, groups: DeviceGroup[], after: RetryPass): DeviceGroup[] {
  return groups.map((g) =>
    ignores(x, g) && !nextPass(x.plan.deviceRetry, g.errorType as string, after)
      ? { ...g, outcome: 'skipped' }
      : g,
  );
}

/**
 * Before a rule's attempt sends `devices` devices again: its delay, and the log line; returns the arguments the
 * rule changes (`with`).
 */
export async function beforeRetry(
  x: ActionCall,
  rule: DeviceRetryRule,
  devices: number,
  attempt: number,
): Promise<Json> {
  if (rule.delayMs) await x.ctx.clock.sleep(rule.delayMs, x.signal);
  x.ctx.log.info('retrying devices', { step: x.step.id, devices, on: [...rule.on], attempt });
  return render(rule.with ?? {}, x.scope.ctx, x.scope.inLoop) as Json;
}
