/**
 * A test case's world and faults, as a test file writes them (friendly names, durations), turned into the
 * embedded emulator's options: the same world `fleetbook emulator` and the control API build.
 */
import type { Faults } from '../emulator/index.js';
import { parseDuration } from '../playbook/duration.js';

type Json = Record<string, unknown>;

/** The default world of a test: the embedded emulator's (seed 1, 3 accounts of 50 devices). */
export interface World {
  seed?: number | string;
  accounts?: number;
  devicesPerAccount?: number;
  timeScale?: number;
}

const seconds = (v: unknown) => (parseDuration(String(v)) ?? 0) / 1000;

/** Test-file name → the emulator's fault, with the conversion of its value. */
const FAULT_NAMES: Record<string, [keyof Faults, (v: unknown) => unknown]> = {
  serverErrors: ['errorRate', (v) => v],
  connectionResets: ['resetRate', (v) => v],
  latency: ['latencyMs', (v) => parseDuration(String(v)) ?? 0],
  rateLimit: ['maxRequestsPerSecond', (v) => v],
  sessionExpiry: ['sessionTtlSeconds', seconds],
  deviceErrors: ['deviceErrors', (v) => v],
  carrierDelay: ['processingSeconds', seconds],
  neverFinish: ['neverFinishRate', (v) => v],
  neverFinishDevices: ['neverFinishDevices', (v) => v],
  droppedCallbacks: ['dropCallbackRate', (v) => v],
};

/** The emulator's faults for a test file's `faults` (already checked against its schema). */
export function emulatorFaults(faults: Json): Partial<Faults> {
  const out: Json = {};
  for (const [name, value] of Object.entries(faults)) {
    const [fault, convert] = FAULT_NAMES[name] as [keyof Faults, (v: unknown) => unknown];
    out[fault] = convert(value);
  }
  return out as Partial<Faults>;
}
