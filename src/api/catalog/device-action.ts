/** The actions that change the state of devices of the M2M area, which all look alike. */
import type Type from 'typebox';
import { C } from './load-schemas.js';
import { normalizeDevices } from './normalize.js';
import type { Json, Method, Operation } from './operation.js';

/**
 * A device action of the M2M area: its request schema is read through `input` when first needed, and what a
 * playbook step of it may give (exactly its devices) through `stepInput`.
 */
export const m2mDevice = <I extends Type.TSchema>(
  verb: string,
  summary: string,
  input: () => I,
  step: () => Type.TSchema,
  applied: (input: Json) => Json,
  o: { action?: string; method?: Method } = {},
) =>
  ({
    action: o.action ?? `devices.${verb}`,
    summary,
    area: 'm2m',
    method: o.method ?? 'POST',
    path: `/m2m/v1/devices/actions/${verb}`,
    get input() {
      return input();
    },
    get stepInput() {
      return step();
    },
    get output() {
      return C().RequestAccepted;
    },
    answersRequestId: true,
    mutating: true,
    retrySafe: false,
    errorShape: 'errorCode',
    normalize: normalizeDevices,
    strategy: 'deviceState',
    needsDevices: 'devices',
    applied,
  }) as const satisfies Operation;

/** The devices.list selection of devices in `state` (its `currentState`). */
export const inState = (state: string) => () => ({ currentState: state });
