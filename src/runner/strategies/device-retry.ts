/**
 * The per-device policy of a step (`devices.retry`, `devices.ignore`), for every strategy that gets an outcome
 * per device: after a first pass, the devices that failed with a type a rule names are sent again, alone, with
 * the rule's arguments, up to its attempts; then the failures `ignore` names become `skipped`.
 */
import { render } from '../../expressions/template.js';
import type { DeviceGroup } from '../../store/store.js';
import type { DeviceResults } from '../device-results.js';
import { withDevices } from '../devices.js';
import type { Json } from '../types.js';
import type { ActionCall } from './index.js';

/**
 * Runs `pass` over the step's input, then over the devices the rules retry. `pass` adds each device's result to
 * `results` and returns the step's output. Returns the last output and the groups `ignore` made skipped.
 */
export async function withDeviceRetries(
  x: ActionCall,
  results: DeviceResults,
  pass: (input: Json, attempt: number) => Promise<unknown>,
): Promise<{ output: unknown; ignored: DeviceGroup[] }> {
  return applyDeviceRules(x, results, pass, await pass(x.input, 1));
}

/**
 * The rules over devices that have a first result in `results` already: those that failed with a type a rule
 * names are sent again (`pass`), then the failures `ignore` names become `skipped`.
 */
export async function applyDeviceRules(
  x: ActionCall,
  results: DeviceResults,
  pass: (input: Json, attempt: number) => Promise<unknown>,
  first?: unknown,
): Promise<{ output: unknown; ignored: DeviceGroup[] }> {
  const { ctx, step } = x;
  let output = first;
  for (const rule of x.plan.deviceRetry) {
    for (let attempt = 2; attempt <= rule.maxAttempts; attempt++) {
      const again = results.resend(
        (g) => g.outcome === 'failed' && g.errorType !== undefined && rule.on.has(g.errorType),
      );
      if (!again.size) break;
      if (rule.delayMs) await ctx.clock.sleep(rule.delayMs, x.signal);
      const overrides = render(rule.with ?? {}, x.scope.ctx, x.scope.inLoop) as Json;
      ctx.log.info('retrying devices', { step: step.id, devices: again.size, on: [...rule.on], attempt });
      output = await pass({ ...withDevices(x.input, again), ...overrides }, attempt);
    }
  }
  const ignored = results.skip(
    (g) => g.outcome === 'failed' && g.errorType !== undefined && x.plan.ignore.has(g.errorType),
  );
  return { output, ignored };
}
