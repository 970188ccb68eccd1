/**
 * One realistic event of each callback service, as a playbook reads it (`event`): the emulator's messages for
 * the services it sends, the spec section 6 payload for price plan trigger alerts. Each validates against its
 * schema (test/events/events.test.ts). Each of the six services of spec 2.14, whose payloads no source shows,
 * reports the payload member its schema names, a member no other service's messages have: each is filed under
 * its own service on the catch-all route `POST /callbacks` (test/daemon/callback-examples.test.ts).
 */
import type { EventService } from './index.js';

const imei = { id: '990000862471854', kind: 'imei' };

export const EXAMPLES: Record<EventService, Record<string, unknown>> = {
  CarrierService: {
    requestId: '595f5c44-c31c-4552-8670-020a1545a84d',
    deviceIds: [imei],
    deviceResponse: { suspendResponse: { accountName: '0000123456-00001' } },
    status: 'Success',
  },
  DeviceSuspensionStatus: {
    requestId: '6f2b0d3e-5a1c-4f0e-9d64-2b1f8c7e9a10',
    deviceIds: [imei],
    deviceResponse: {
      suspensionStatusResponse: {
        accountName: '0000123456-00001',
        state: 'suspend',
        suspendedSince: '2026-03-02T09:15:00.000Z',
        suspendedDaysInLast12Months: 23,
        remainingSuspendDays: 157,
      },
    },
  },
  DeviceUsage: {
    requestId: '2d5c1e8a-7b34-4c5f-a1e2-9f0b3c4d5e6f',
    deviceResponse: {
      alertServiceResponse: {
        triggerId: '1c6d0b6a-3f6e-4d2b-9a5c-7e8f9a0b1c2d',
        triggerName: 'overuse-daily-5gb',
        triggerCategory: 'PricePlanDataUsage',
        accountName: '0000123456-00001',
        payAsYouGo: {
          carrierServicePlanCode: 'M2MPlan5GB',
          servicePlanDescription: 'M2M 5 GB',
          deviceIds: [{ id: '990000862471854', kind: 'IMEI' }],
          triggerDateTime: '2026-03-02T14:07:31.000Z',
          triggerValue: 5,
          cycleType: 'DAILY',
          threshold: 5,
          thresholdUnit: 'GB',
          message: 'Device passed 5 GB today',
        },
      },
    },
  },
  EnhancedConnectivityService: {
    requestId: '8a7b6c5d-4e3f-4a1b-8c9d-0e1f2a3b4c5d',
    deviceIds: [imei, { id: '5551234567', kind: 'mdn' }],
    deviceResponse: {
      smsResponse: {
        accountName: '0000123456-00001',
        message: 'TEMP 21.5C DOOR CLOSED',
        timestamp: '2026-03-02T10:42:05.000Z',
      },
    },
  },
  Location: {
    requestId: '3b4c5d6e-7f80-4912-a3b4-c5d6e7f8091a',
    locationReportResponse: {
      accountName: '0000123456-00001',
      txid: '0a1b2c3d-4e5f-4607-8819-2a3b4c5d6e7f',
      status: 'COMPLETED',
      totalCount: 250,
      completedAt: '2026-03-02T02:31:00.000Z',
    },
  },
  DeviceProfileService: {
    requestId: '9c8b7a69-5847-4362-b510-fedcba987654',
    deviceIds: [{ id: '89148000000800000001', kind: 'iccid' }],
    deviceResponse: { profileResponse: { action: 'enable', profileStatus: 'Enabled' } },
    status: 'Success',
  },
  DeviceService: {
    requestId: '0f1e2d3c-4b5a-4968-8776-5a4b3c2d1e0f',
    deviceIds: [imei],
    deviceResponse: { availabilityResponse: { available: true } },
    status: 'Success',
  },
  DiagnosticsService: {
    requestId: '7e6d5c4b-3a29-4817-9605-f4e3d2c1b0a9',
    deviceIds: [imei],
    deviceResponse: { reachabilityResponse: { state: 'awake', at: '2026-03-02T11:00:00.000Z' } },
    status: 'Success',
  },
  ExternalProvisioningChanges: {
    requestId: '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5e',
    deviceIds: [imei],
    deviceResponse: {
      externalProvisioningChangeResponse: {
        accountName: '0000123456-00001',
        change: 'Restore',
        source: 'portal',
      },
    },
    status: 'Success',
  },
  NetworkEventService: {
    requestId: '4d3c2b1a-0f9e-48d7-b6c5-a4b3c2d1e0f9',
    deviceIds: [imei],
    deviceResponse: { networkEventResponse: { event: 'attach', at: '2026-03-02T08:30:00.000Z' } },
  },
  StateService: {
    requestId: '5e4d3c2b-1a0f-49e8-87d6-c5b4a3928170',
    deviceIds: [imei],
    deviceResponse: { stateResponse: { state: 'active' } },
    status: 'Success',
  },
};
