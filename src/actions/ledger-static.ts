/**
 * A ledger query's literal `error` types, judged on the text (policy.ts): the ledger keeps each device's error
 * by the name fleetbook records (spec 7.3 with SVC for the vendor's prefix, the carrier's codes, fleetbook's
 * own), and the query matches it exactly, so a type it never records finds no device, and the run goes on as
 * if none had failed so. A code without spaces (an API error code, `FB_...`) may be any the service sends.
 */
import { meantType, RECORDED_DEVICE_TYPES } from '../api/device-errors.js';
import type { StaticProblem } from './policy.js';

const CODE = /^[A-Z][A-Z0-9_]*$/;

/** Why a ledger query for `type` finds no device fleetbook recorded; undefined when it can find some. */
function errorTypeProblem(type: string): string | undefined {
  if (RECORDED_DEVICE_TYPES.includes(type) || CODE.test(type) || type.includes('${{')) return undefined;
  const meant = meantType(type, RECORDED_DEVICE_TYPES);
  if (meant?.spec)
    return `\`${type}\` is recorded by its spec name, \`${meant.type}\` (the vendor's prefix is read as SVC)`;
  return `\`${type}\` is no per-device error type fleetbook records${meant ? ` (did you mean \`${meant.type}\`?)` : ''}`;
}

export function ledgerQueryStatic(args: Record<string, unknown>): StaticProblem[] {
  const error = args.error;
  const types = Array.isArray(error) ? error : [error];
  const problems: StaticProblem[] = [];
  types.forEach((t, i) => {
    const problem = typeof t === 'string' ? errorTypeProblem(t) : undefined;
    if (problem)
      problems.push({
        path: Array.isArray(error) ? ['error', i] : ['error'],
        where: 'value',
        rule: 'error-type',
        message: `ledger.query: ${problem}: the query finds only the devices recorded with exactly this type`,
        severity: 'warning',
      });
  });
  return problems;
}
