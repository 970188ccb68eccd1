/**
 * Usage and suspension reports over many devices: the aggregated usage report (synchronous, at most 10
 * devices), aggregated usage by DeviceUsage callbacks, and suspension status by DeviceSuspensionStatus callbacks
 * (spec 4.5 quick references; shapes from the vendor's published SDK, docs/spec-decisions.md).
 */
import Type from 'typebox';
import { MAX_SYNC_REPORT_DEVICES } from '../limits.js';
import { AccountName, closed, DateTime, DeviceId, ID_PATTERNS } from './common.js';

export const AggregateReportRequest = closed({
  accountNumber: AccountName,
  imei: Type.Array(Type.String({ pattern: ID_PATTERNS.imei, description: '15 digits.' }), {
    maxItems: MAX_SYNC_REPORT_DEVICES,
    uniqueItems: true,
    description: 'IMEIs, at most 10; none: every device of the account that the filters keep.',
  }),
  startDate: Type.Optional(
    Type.String({ format: 'date', description: 'First day (YYYY-MM-DD); default 180 days ago.' }),
  ),
  endDate: Type.Optional(Type.String({ format: 'date', description: 'Last day (YYYY-MM-DD); default today.' })),
  deviceGroup: Type.Optional(Type.String({ minLength: 1, description: 'Only devices of this group.' })),
  dataPlan: Type.Optional(Type.String({ minLength: 1, description: 'Only devices on this plan code.' })),
  noSessionFlag: Type.Optional(Type.Boolean({ description: 'Only devices that had no session.' })),
});
export const AggregateReport = Type.Object({
  txid: Type.Optional(Type.String()),
  usage: Type.Array(
    Type.Object({
      imei: Type.Optional(Type.String()),
      numberOfSessions: Type.Optional(Type.Number()),
      bytesTransferred: Type.Optional(Type.Number()),
    }),
  ),
  errors: Type.Optional(
    Type.Array(Type.Object({ imei: Type.Optional(Type.String()), errorMessage: Type.Optional(Type.String()) })),
  ),
});

const Label = closed({ name: Type.String({ maxLength: 20 }), value: Type.String({ maxLength: 50 }) });

export const AggregateUsageRequest = closed(
  {
    accountName: Type.Optional(AccountName),
    deviceIds: Type.Optional(Type.Array(DeviceId, { minItems: 1 })),
    groupName: Type.Optional(Type.String({ minLength: 1 })),
    label: Type.Optional(Type.Array(Label, { minItems: 1 })),
    startTime: DateTime,
    endTime: DateTime,
  },
  {
    allOf: [
      {
        anyOf: [{ required: ['accountName'] }, { required: ['deviceIds'] }],
        'x-message': 'give accountName (every device of the account, or of groupName) or deviceIds',
      },
      {
        if: { required: ['groupName'] },
        then: { required: ['accountName'] },
        'x-message': 'groupName needs accountName',
      },
      {
        not: { required: ['deviceIds', 'label'] },
        'x-message': 'give deviceIds or label, not both',
      },
    ],
  },
);

const DeviceFilter = closed({
  groupName: Type.Optional(Type.String({ minLength: 1 })),
  servicePlan: Type.Optional(Type.String({ minLength: 1 })),
  customFields: Type.Optional(
    Type.Array(closed({ key: Type.String(), value: Type.String() }), { minItems: 1 }),
  ),
});

export const SuspensionStatusRequest = closed(
  {
    accountName: Type.Optional(AccountName),
    deviceIds: Type.Optional(Type.Array(DeviceId, { minItems: 1 })),
    filter: Type.Optional(DeviceFilter),
  },
  {
    anyOf: [{ required: ['deviceIds'] }, { required: ['accountName'] }],
    'x-message': 'give deviceIds, or accountName (with a filter, or for every device of the account)',
  },
);

/** The answer of the reports sent by callback: the requestId their messages carry. */
export { RequestAccepted } from './common.js';
