/**
 * The event of each callback service (spec 6 and 2.14; public-api-facts.md, "Connectivity callbacks"): what a
 * playbook reads as `event`. That is the message the service posts without the envelope's listener
 * credentials and delivery counters (`username`, `password`, `callbackCount`, `maxCallbackThreshold`), which
 * the daemon drops before it stores the message.
 *
 * Where the spec, the facts and the emulator show a payload, its objects are closed, so that a misspelt member
 * is found. The payloads of the six services of 2.14 are not shown anywhere: only the envelope is typed, and the
 * rest is open (any member, of any type); each names the payload member of its example, which tells its messages
 * from the others' on the catch-all route.
 */
import Type from 'typebox';
import { AccountName, closed, DateTime } from '../api/schemas/common.js';

const RequestId = Type.String({
  minLength: 1,
  description: 'The request the message answers (a UUID); with the payload kind, what duplicates share.',
});

/** A device identifier as callbacks write it: the kind in lower or upper case (`imei`, `IMEI`). */
const DeviceIdentifier = closed({
  id: Type.String({ minLength: 1 }),
  kind: Type.String({
    minLength: 1,
    description: 'imei, iccid, mdn, msisdn, meid, esn, imsi or eid, any case.',
  }),
});
const DeviceIds = Type.Array(DeviceIdentifier, {
  description: 'The identifiers the request named the device by.',
});

/** An object whose members no source shows: any member, of any type (`description` says which object it is). */
const unshown = (description = 'Not shown: any members.') =>
  Type.Object({}, { additionalProperties: true, description });

const Status = Type.String({ enum: ['Success', 'Failed'], description: 'Whether the carrier did it.' });
const FaultResponse = closed(
  {
    faultcode: Type.String({ description: 'The carrier error code, e.g. DEVICE DEACTIVATED.' }),
    faultstring: Type.String({ description: 'The sentence that explains it.' }),
  },
  { description: 'Why the carrier failed the device; only when status is Failed.' },
);

// ── CarrierService ──────────────────────────────────────────────────────────────────────────────

const StateChange = closed({
  accountName: AccountName,
  servicePlan: Type.Optional(Type.String({ description: 'The plan given (activation, plan change).' })),
});

export const CarrierService = closed(
  {
    requestId: RequestId,
    deviceIds: DeviceIds,
    deviceResponse: closed(
      {
        activateResponse: Type.Optional(StateChange),
        suspendResponse: Type.Optional(StateChange),
        restoreResponse: Type.Optional(StateChange),
        deactivateResponse: Type.Optional(StateChange),
        changePlanResponse: Type.Optional(StateChange),
        changeIdentifierResponse: Type.Optional(unshown()),
      },
      { description: 'One member, named for the request: suspendResponse, restoreResponse, ...' },
    ),
    status: Status,
    faultResponse: Type.Optional(FaultResponse),
  },
  { description: 'The result of a device state change, one message per device of the request.' },
);

// ── DeviceUsage ─────────────────────────────────────────────────────────────────────────────────

const PayAsYouGo = closed({
  carrierServicePlanCode: Type.String({ description: 'Service plan ID.' }),
  servicePlanDescription: Type.String(),
  deviceIds: DeviceIds,
  triggerDateTime: DateTime,
  triggerValue: Type.Integer({
    description:
      'Value at which the trigger activates, set by the threshold: the threshold, in thresholdUnit.',
  }),
  cycleType: Type.String({ description: 'DAILY, WEEKLY or MONTHLY (any case).' }),
  threshold: Type.Integer(),
  thresholdUnit: Type.String({ enum: ['KB', 'MB', 'GB', 'TB'] }),
  message: Type.String({ description: 'The text of the trigger.' }),
});

const AlertServiceResponse = closed(
  {
    triggerId: Type.String(),
    triggerName: Type.String(),
    triggerCategory: Type.String({ description: 'Always PricePlanDataUsage.' }),
    accountName: AccountName,
    payAsYouGo: Type.Optional(PayAsYouGo),
    accountShare: Type.Optional(
      unshown('Account-share triggers; members not shown. An update sends its accountGroupShare definition.'),
    ),
  },
  { description: 'A price plan trigger activated, or an account-share trigger updated (spec 4.1, 6).' },
);

const UsageRecord = closed({
  deviceIds: DeviceIds,
  bytesUsed: Type.Integer(),
  smsUsed: Type.Integer(),
  startTime: DateTime,
  endTime: DateTime,
});

export const DeviceUsage = closed(
  {
    requestId: RequestId,
    deviceIds: Type.Optional(DeviceIds),
    deviceResponse: closed({
      alertServiceResponse: Type.Optional(AlertServiceResponse),
      usageResponse: Type.Optional(
        Type.Array(UsageRecord, { description: 'Aggregated usage of one device (usage.aggregateAsync).' }),
      ),
    }),
  },
  { description: 'Price plan trigger alerts, and aggregated usage asked for by callback.' },
);

// ── DeviceSuspensionStatus ──────────────────────────────────────────────────────────────────────

export const DeviceSuspensionStatus = closed(
  {
    requestId: RequestId,
    deviceIds: DeviceIds,
    deviceResponse: closed({
      suspensionStatusResponse: closed({
        accountName: AccountName,
        state: Type.String({ enum: ['pending', 'active', 'suspend', 'deactive'] }),
        suspendedSince: Type.Optional(DateTime),
        suspendedDaysInLast12Months: Type.Integer(),
        remainingSuspendDays: Type.Integer(),
      }),
    }),
  },
  { description: 'The suspension status of one device (devices.suspensionStatus).' },
);

// ── EnhancedConnectivityService ─────────────────────────────────────────────────────────────────

export const EnhancedConnectivityService = closed(
  {
    requestId: RequestId,
    deviceIds: DeviceIds,
    deviceResponse: closed({
      smsResponse: closed({
        accountName: AccountName,
        message: Type.String({ description: 'The text the device sent.' }),
        timestamp: DateTime,
      }),
    }),
  },
  { description: 'An SMS a device sent (after sms.startCallbacks).' },
);

// ── Location ────────────────────────────────────────────────────────────────────────────────────

export const Location = closed(
  {
    requestId: RequestId,
    locationReportResponse: Type.Optional(
      closed(
        {
          accountName: AccountName,
          txid: Type.String(),
          status: Type.String({ enum: ['COMPLETED'] }),
          totalCount: Type.Integer(),
          completedAt: DateTime,
        },
        { description: 'A cacheMode 1 or 2 location report completed.' },
      ),
    ),
    usageTriggerResponse: Type.Optional(
      closed(
        {
          triggerId: Type.String(),
          triggerName: Type.String(),
          accountName: AccountName,
          serviceName: Type.String(),
          thresholdValue: Type.String({ description: 'Percent of the subscription, e.g. "90".' }),
          usagePercentage: Type.Integer(),
          usedTransactions: Type.Integer(),
          subscribedTransactions: Type.Integer(),
          checkedAt: DateTime,
        },
        { description: 'A location usage trigger passed its threshold.' },
      ),
    ),
  },
  { description: 'Location report completions and location usage trigger alerts.' },
);

// ── the services of 2.14, whose payloads are not shown ──────────────────────────────────────────

/**
 * The envelope of a connectivity message whose payload no source shows. `payload` names the member of
 * `deviceResponse` that says the message is this service's (the member of its example): on the catch-all route
 * the listener files a message under the one service whose schema names its `…Response` member. That member,
 * like any other of `deviceResponse`, is untyped.
 */
const envelope = (description: string, payload: string) =>
  Type.Object(
    {
      requestId: RequestId,
      deviceIds: Type.Optional(DeviceIds),
      deviceResponse: Type.Optional(
        Type.Object(
          {
            [payload]: Type.Optional(
              unshown(
                'What the message reports; members not shown. POST /callbacks files a message under this service by this member.',
              ),
            ),
          },
          { additionalProperties: true, description: 'Not shown: any members.' },
        ),
      ),
      status: Type.Optional(Type.String()),
      faultResponse: Type.Optional(FaultResponse),
    },
    { description: `${description} The payload (\`deviceResponse\`) is not shown: its members are untyped.` },
  );

export const DeviceProfileService = envelope(
  'Results of device profile changes (download, enable, disable, delete).',
  'profileResponse',
);
export const DeviceService = envelope(
  'Results of device availability and upload requests.',
  'availabilityResponse',
);
export const DiagnosticsService = envelope(
  'Registration and state changes of SCEF devices (awake, asleep).',
  'reachabilityResponse',
);
export const ExternalProvisioningChanges = envelope(
  'Provisioning changes made outside the API: activate, deactivate, suspend, resume, change MDN.',
  'externalProvisioningChangeResponse',
);
export const NetworkEventService = envelope('Network events of devices.', 'networkEventResponse');
export const StateService = envelope('Results of requests that move devices to a state.', 'stateResponse');
