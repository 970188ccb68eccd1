/**
 * The per-device policy of a step (`devices.retry`, `devices.ignore`), for every strategy that gets an outcome
 * per device: after a first pass, the devices that failed with a type a rule names are sent again, alone, with
 * the rule's arguments, up to its attempts; then the failures `ignore` names become `skipped`.
 */
import { render } from '../../expressions/template.js';
import type { DeviceResult } from '../../store/store.js';
import { withDevices } from '../devices.js';
import type { Json } from '../types.js';
import type { ActionCall } from './index.js';

/**
 * Runs `pass` over the step's input, then over the devices the rules retry. `pass` puts each device's result in
 * `results` (by device id) and returns the step's output. Returns the last output and the results `ignore`
 * changed.
 */
export async function withDeviceRetries(
  x: ActionCall,
  results: Map<string, DeviceResult>,
  pass: (input: Json, attempt: number) => Promise<unknown>,
): Promise<{ output: unknown; ignored: DeviceResult[] }> {
  const { ctx, step } = x;
  let output = await pass(x.input, 1);
  for (const rule of x.plan.deviceRetry) {
    for (let attempt = 2; attempt <= rule.maxAttempts; attempt++) {
      const again = [...results.values()].filter(
        (r) => r.outcome === 'failed' && r.errorType !== undefined && rule.on.has(r.errorType),
      );
      if (!again.length) break;
      if (rule.delayMs) await ctx.clock.sleep(rule.delayMs, x.signal);
      const overrides = render(rule.with ?? {}, x.scope.ctx, x.scope.inLoop) as Json;
      ctx.log.info('retrying devices', { step: step.id, devices: again.length, on: [...rule.on], attempt });
      output = await pass(
        { ...withDevices(x.input, new Set(again.map((r) => r.deviceId))), ...overrides },
        attempt,
      );
    }
  }
  const ignored: DeviceResult[] = [];
  for (const r of results.values()) {
    if (r.outcome === 'failed' && r.errorType && x.plan.ignore.has(r.errorType)) {
      r.outcome = 'skipped';
      ignored.push(r);
    }
  }
  return { output, ignored };
}
