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

/**
 * Runs `pass` over the step's input, then over the devices the rules retry (those whose latest result failed
 * with a type a rule names), then makes the failures `ignore` names `skipped`. `pass` adds each device's result
 * to `results` and returns the step's output. Returns the last output and the groups `ignore` made skipped.
 */
export async function withDeviceRetries(
  x: ActionCall,
  results: DeviceResults,
  pass: (input: Json, attempt: number) => Promise<unknown>,
): Promise<{ output: unknown; ignored: DeviceGroup[] }> {
  let output = await pass(x.input, 1);
  for (const rule of x.plan.deviceRetry) {
    for (let attempt = 2; attempt <= rule.maxAttempts; attempt++) {
      const again = results.resend(
        (g) => g.outcome === 'failed' && g.errorType !== undefined && rule.on.has(g.errorType),
      );
      if (!again.size) break;
      const overrides = await beforeRetry(x, rule, again.size, attempt);
      output = await pass({ ...withDevices(x.input, again), ...overrides }, attempt);
    }
  }
  const ignored = results.skip(
    (g) => g.outcome === 'failed' && g.errorType !== undefined && x.plan.ignore.has(g.errorType),
  );
  return { output, ignored };
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
