/** Devices of the M2M area: listing, their attributes and usage, and the actions that change their state. */
import { inState, m2mDevice } from './device-action.js';
import { C } from './load-schemas.js';
import { normalizeIdentifiers } from './normalize.js';
import type { Operation } from './operation.js';

export const DEVICES = {
  'devices.attributes': {
    action: 'devices.attributes',
    summary: "Look up a 5G internet device's attributes by ICCID.",
    area: 'm2m',
    method: 'POST',
    path: '/m2m/v1/devices/actions/list',
    get input() {
      return C().AttributesRequest;
    },
    get output() {
      return C().DevicePage;
    },
    mutating: false,
    retrySafe: true,
    errorShape: 'errorCode',
  },
  'devices.list': {
    action: 'devices.list',
    summary: 'List the devices of an account (every page).',
    area: 'm2m',
    method: 'POST',
    path: '/m2m/v1/devices/actions/list',
    get input() {
      return C().ListDevicesRequest;
    },
    get output() {
      return C().ListDevicesResult;
    },
    get page() {
      return C().DevicePage;
    },
    paging: 'largestDeviceIdSeen',
    mutating: false,
    retrySafe: true,
    errorShape: 'errorCode',
    normalize: normalizeIdentifiers,
    strategy: 'listing',
  },
  'devices.suspend': m2mDevice(
    'suspend',
    'Suspend service of devices.',
    () => C().DeviceActionRequest,
    () => C().DeviceActionStep,
    inState('suspend'),
  ),
  'devices.restore': m2mDevice(
    'restore',
    'Restore service of suspended devices.',
    () => C().DeviceActionRequest,
    () => C().DeviceActionStep,
    inState('active'),
  ),
  'devices.activate': m2mDevice(
    'activate',
    'Activate service of devices.',
    () => C().ActivateRequest,
    () => C().ActivateStep,
    inState('active'),
  ),
  'devices.deactivate': m2mDevice(
    'deactivate',
    'Deactivate devices.',
    () => C().DeactivateRequest,
    () => C().DeactivateStep,
    inState('deactive'),
  ),
  'devices.changePlan': m2mDevice(
    'plan',
    'Change the service plan of devices.',
    () => C().ChangePlanRequest,
    () => C().ChangePlanStep,
    (input) => ({ servicePlan: String(input.servicePlan) }),
    {
      action: 'devices.changePlan',
      method: 'PUT',
    },
  ),
  'devices.usage': {
    action: 'devices.usage',
    summary: 'Daily usage history of one device.',
    area: 'm2m',
    method: 'POST',
    path: '/m2m/v1/devices/usage/actions/list',
    get input() {
      return C().UsageRequest;
    },
    get output() {
      return C().UsageResponse;
    },
    mutating: false,
    retrySafe: true,
    errorShape: 'errorCode',
    normalize: normalizeIdentifiers,
  },
} as const satisfies Record<string, Operation>;
