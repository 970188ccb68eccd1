/**
 * Reports about devices: connection and provisioning history of one device, aggregated usage (synchronous,
 * and by DeviceUsage callbacks), and suspension status (by DeviceSuspensionStatus callbacks).
 */
import { entry } from './entry.js';
import { H, R } from './load-schemas.js';
import { normalizeIdentifiers } from './normalize.js';
import type { Operation } from './operation.js';

const read = { mutating: false, retrySafe: true, errorShape: 'errorCode' } as const;

export const HISTORY = {
  'devices.connectionHistory': entry(
    {
      action: 'devices.connectionHistory',
      summary: 'Network connection events of one device in a period (every page of 500).',
      area: 'm2m',
      method: 'POST',
      path: '/m2m/v1/devices/connections/actions/listHistory',
      paging: 'earliest',
      ...read,
      normalize: normalizeIdentifiers,
    },
    () => H().DeviceHistoryRequest,
    () => H().ConnectionHistory,
    () => H().ConnectionHistoryPage,
  ),
  'devices.provisioningHistory': entry(
    {
      action: 'devices.provisioningHistory',
      summary:
        'Provisioning events (activate, suspend, restore, deactivate, plan) of one device in a period.',
      area: 'm2m',
      method: 'POST',
      path: '/m2m/v1/devices/history/actions/list',
      ...read,
      normalize: normalizeIdentifiers,
    },
    () => H().DeviceHistoryRequest,
    () => H().ProvisioningHistory,
  ),
  'devices.suspensionStatus': entry(
    {
      action: 'devices.suspensionStatus',
      summary: 'Suspension days used and left per device, sent as DeviceSuspensionStatus callbacks.',
      area: 'm2m',
      method: 'POST',
      path: '/m2m/v1/devices/suspension/status',
      ...read,
      answersRequestId: true,
      normalize: normalizeIdentifiers,
    },
    () => R().SuspensionStatusRequest,
    () => R().RequestAccepted,
  ),
  'usage.aggregate': entry(
    {
      action: 'usage.aggregate',
      summary: 'Sessions and bytes of up to 10 devices over up to 180 days, answered at once.',
      // The report of the connectivity usage: it shares that budget.
      area: 'm2m',
      method: 'POST',
      path: '/hyper-precise/v1/report/aggregate',
      ...read,
    },
    () => R().AggregateReportRequest,
    () => R().AggregateReport,
  ),
  'usage.aggregateAsync': entry(
    {
      action: 'usage.aggregateAsync',
      summary: 'Data and SMS used per device in a period of up to a month, sent as DeviceUsage callbacks.',
      area: 'm2m',
      method: 'POST',
      path: '/m2m/v1/devices/usage/actions/list/aggregate',
      ...read,
      answersRequestId: true,
      normalize: normalizeIdentifiers,
    },
    () => R().AggregateUsageRequest,
    () => R().RequestAccepted,
  ),
} as const satisfies Record<string, Operation>;
