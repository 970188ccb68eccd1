/**
 * Connectivity management, 5G device attributes, connectivity callbacks and sessions, under /m2m/v1
 * (spec 2.13, 4.4, 4.5, 5; facts). Request bodies of the 4.5 operations are not in the spec: they are the real
 * service's, as its SDKs' models show them (named at each schema; docs/spec-decisions.md).
 */
import Type from 'typebox';
import { CALLBACK_SERVICES } from '../callback-services.js';
import {
  AccountName,
  closed,
  DateTime,
  DEVICE_KINDS,
  DeviceId,
  Devices,
  ID_PATTERNS,
  kindEnum,
  RequestAccepted,
} from './common.js';

export { RequestAccepted };

export const LoginRequest = closed({
  username: Type.String({ minLength: 1 }),
  password: Type.String({ minLength: 1 }),
});
export const LoginResponse = Type.Object({ sessionToken: Type.String() });
export const LogoutRequest = closed({});
export const LogoutResponse = Type.Unknown();

// ── 5G device attributes (4.4) ──────────────────────────────────────────────────────────────────
export const AttributesRequest = closed({
  deviceId: closed({
    id: Type.String({ pattern: ID_PATTERNS.iccid, description: '20-digit ICCID.' }),
    kind: Type.String({ enum: ['iccid', 'ICCID'] }),
  }),
});

/** The states a device is in on the provider network, as listings write them (`carrierInformations[].state`). */
export const DEVICE_STATES = ['pending', 'active', 'deactive', 'suspend'] as const;

const CarrierInformation = Type.Object({
  carrierName: Type.Optional(Type.String()),
  servicePlan: Type.Optional(Type.String()),
  state: Type.String({ enum: [...DEVICE_STATES] }),
});
/** A device as the m2m API lists it (spec 2.13). */
export const DeviceRecord = Type.Object({
  accountName: Type.String(),
  billingCycleEndDate: Type.Optional(DateTime),
  carrierInformations: Type.Array(CarrierInformation),
  connected: Type.Optional(Type.Boolean()),
  createdAt: Type.Optional(DateTime),
  customFields: Type.Optional(Type.Array(Type.Object({ key: Type.String(), value: Type.String() }))),
  deviceIds: Type.Array(Type.Object({ id: Type.String(), kind: Type.String() })),
  extendedAttributes: Type.Optional(
    Type.Array(
      Type.Object({ key: Type.String(), value: Type.Optional(Type.Union([Type.String(), Type.Null()])) }),
    ),
  ),
  groupNames: Type.Optional(Type.Union([Type.Array(Type.String()), Type.String()])),
  ipAddress: Type.Optional(Type.String()),
  lastActivationBy: Type.Optional(Type.String()),
  lastActivationDate: Type.Optional(DateTime),
});
export type DeviceRecord = Type.Static<typeof DeviceRecord>;
export const DevicePage = Type.Object({ hasMoreData: Type.Boolean(), devices: Type.Array(DeviceRecord) });

/** `{ key, value }` custom fields: a device's, or the ones a request selects devices by. */
export const CustomFields = Type.Array(closed({ key: Type.String({ minLength: 1 }), value: Type.String() }), {
  minItems: 1,
  description: 'Custom field names and values: only devices that have every one of them.',
});

/** One device identifier match of `filter.deviceIdentifierFilters` (the real service's `DeviceIdSearch`). */
const DeviceIdentifierFilter = closed(
  {
    kind: Type.String({
      enum: kindEnum(DEVICE_KINDS),
      description: 'The kind of identifier matched: imei, iccid, mdn, msisdn, meid, esn, imsi or eid.',
    }),
    contains: Type.Optional(Type.String({ minLength: 1, description: 'Appears anywhere in the identifier.' })),
    startswith: Type.Optional(Type.String({ minLength: 1, description: 'The identifier starts with it.' })),
    endswith: Type.Optional(Type.String({ minLength: 1, description: 'The identifier ends with it.' })),
  },
  {
    minProperties: 2,
    'x-message': 'an identifier filter takes kind and at least one of contains, startswith, endswith',
  },
);

/**
 * The request of `POST /m2m/v1/devices/actions/list` as the real service takes it (its SDKs'
 * `AccountDeviceListRequest`): what selects devices at the top level, identifier matches under `filter`.
 * Every member given must hold for a device to be listed.
 */
export const ListDevicesRequest = closed({
  accountName: AccountName,
  deviceId: Type.Optional(DeviceId),
  groupName: Type.Optional(Type.String({ minLength: 1, description: 'Only devices in this device group.' })),
  servicePlan: Type.Optional(Type.String({ minLength: 1, description: 'Only devices on this service plan.' })),
  currentState: Type.Optional(
    Type.String({ enum: [...DEVICE_STATES], description: 'Only devices in this state.' }),
  ),
  customFields: Type.Optional(CustomFields),
  earliest: Type.Optional(Type.String({ format: 'date-time', description: 'Only devices added at or after it.' })),
  latest: Type.Optional(Type.String({ format: 'date-time', description: 'Only devices added at or before it.' })),
  filter: Type.Optional(
    closed(
      {
        deviceIdentifierFilters: Type.Array(DeviceIdentifierFilter, {
          minItems: 1,
          description: 'Identifier matches, all of which a device must meet.',
        }),
      },
      {
        'x-moved': {
          groupName: '`groupName` at the top level',
          servicePlan: '`servicePlan` at the top level',
          state: '`currentState` at the top level',
          kind: '`deviceIdentifierFilters: [{ kind, contains | startswith | endswith }]`',
        },
      },
    ),
  ),
  maxNumberOfDevices: Type.Optional(Type.Integer({ minimum: 1, maximum: 2000, description: 'Page size.' })),
  largestDeviceIdSeen: Type.Optional(
    Type.Union([Type.String(), Type.Integer({ minimum: 0 })], {
      description: 'Resume after this device (a string, or a number as the real service also takes it).',
    }),
  ),
});
/** The action's result once every page is read. */
export const ListDevicesResult = Type.Object({ devices: Type.Array(DeviceRecord) });

// ── device actions (4.5) ────────────────────────────────────────────────────────────────────────
/**
 * A request that acts on the devices it names in `member`, or on a device group: `groupName` alone reaches every
 * device of the group (docs/spec-decisions.md).
 */
const namesDevices = (member: string) => ({
  if: { not: { required: ['groupName'] } },
  then: { required: [member], 'x-message': 'name the devices, or give a groupName' },
});
const GroupName = Type.String({ minLength: 1, description: 'A device group: all of its devices, or only those.' });
const PlanFilter = Type.String({ minLength: 1, description: 'Only the devices on this service plan.' });
const IpPool = Type.String({
  pattern: '^[A-Za-z0-9]{3,32}$',
  description: 'A private IP pool (carrier group name): 3 to 32 letters and digits.',
});

/**
 * The members that select devices beside the ones named: a playbook step may not use them. The engine locks,
 * records and confirms each device a step names, so a step names exactly the devices it acts on; the refusal
 * says how to select them first.
 */
const selectingInAStep = (
  named: 'devices' | 'deviceIds',
  ...members: ('groupName' | 'servicePlan' | 'currentServicePlan' | 'customFields')[]
) => ({
  'x-moved': Object.fromEntries(
    members.map((m) => [
      m,
      `the step's \`${named}\`, selected first with devices.list { ${m === 'currentServicePlan' ? 'servicePlan' : m} } (a step acts on exactly the devices it names)`,
    ]),
  ),
});

/** What selects the devices of a device action: those named, or a device group, narrowed by custom fields. */
const selecting = {
  accountName: AccountName,
  devices: Type.Optional(Devices),
  groupName: Type.Optional(GroupName),
  customFields: Type.Optional(CustomFields),
};
/** A playbook step of a device action: exactly its devices, and the action's own members. */
const stepOf = <P extends Type.TProperties>(own: P, planFilter: 'servicePlan' | 'currentServicePlan') =>
  closed(
    { accountName: AccountName, devices: Devices, ...own },
    selectingInAStep('devices', 'groupName', planFilter, 'customFields'),
  );

/** Suspend and restore (the SDKs' `CarrierActionsRequest`). */
const suspendOwn = {
  withBilling: Type.Optional(Type.Boolean({ description: 'Suspend: true keeps billing, false stops it.' })),
};
export const DeviceActionRequest = closed(
  { ...selecting, servicePlan: Type.Optional(PlanFilter), ...suspendOwn },
  namesDevices('devices'),
);
export const DeviceActionStep = stepOf(suspendOwn, 'servicePlan');

/** The customer and address of the primary place of use, for taxation (the SDKs' `PlaceOfUse`). */
const PlaceOfUse = closed({
  address: closed({
    addressLine1: Type.String({ minLength: 1 }),
    addressLine2: Type.Optional(Type.String()),
    city: Type.String({ minLength: 1 }),
    state: Type.String({ minLength: 1 }),
    zip: Type.String({ minLength: 1 }),
    zip4: Type.Optional(Type.String()),
    country: Type.String({ minLength: 1, description: 'US or USA.' }),
    phone: Type.Optional(Type.String()),
    phoneType: Type.Optional(Type.String()),
    emailAddress: Type.Optional(Type.String()),
  }),
  customerName: closed({
    title: Type.Optional(Type.String()),
    firstName: Type.String({ minLength: 1 }),
    middleName: Type.Optional(Type.String()),
    lastName: Type.String({ minLength: 1 }),
    suffix: Type.Optional(Type.String()),
  }),
});

/**
 * The SDKs' `CarrierActivateRequest`. With devices named, `groupName` is the group they join; alone, it
 * activates the devices of that group. `customFields` are values the devices are given, not a filter.
 */
const activateOwn = {
  accountName: AccountName,
  groupName: Type.Optional(GroupName),
  servicePlan: Type.String({ minLength: 1 }),
  mdnZipCode: Type.Optional(Type.String({ pattern: '^[0-9]{5}$' })),
  skuNumber: Type.Optional(Type.String()),
  carrierIpPoolName: Type.Optional(IpPool),
  carrierName: Type.Optional(Type.String({ minLength: 1, description: 'The carrier that activates.' })),
  costCenterCode: Type.Optional(Type.String({ minLength: 1 })),
  customFields: Type.Optional(CustomFields),
  leadId: Type.Optional(Type.String({ minLength: 1, description: 'A qualified or closed-won customer lead.' })),
  primaryPlaceOfUse: Type.Optional(PlaceOfUse),
  publicIpRestriction: Type.Optional(
    Type.String({ minLength: 1, description: 'Whether devices with public static IPs reach the Internet.' }),
  ),
};
export const ActivateRequest = closed({ ...activateOwn, devices: Type.Optional(Devices) }, namesDevices('devices'));
export const ActivateStep = closed({ ...activateOwn, devices: Devices });

/** The SDKs' `CarrierDeactivateRequest`. */
const deactivateOwn = {
  reasonCode: Type.Optional(Type.String({ description: 'Default FF.' })),
  etfWaiver: Type.Optional(Type.Boolean({ description: 'true requests an early termination fee waiver.' })),
  deleteAfterDeactivation: Type.Optional(
    Type.Boolean({ description: 'true removes the devices from the account once deactivated.' }),
  ),
};
export const DeactivateRequest = closed(
  { ...selecting, servicePlan: Type.Optional(PlanFilter), ...deactivateOwn },
  namesDevices('devices'),
);
export const DeactivateStep = stepOf(deactivateOwn, 'servicePlan');

/** The SDKs' `ServicePlanUpdateRequest`. */
const changePlanOwn = {
  servicePlan: Type.String({ minLength: 1, description: 'The plan the devices move to.' }),
  takeEffect: Type.Optional(
    Type.String({ format: 'date-time', description: 'When the change is made; at once when absent.' }),
  ),
  carrierIpPoolName: Type.Optional(IpPool),
};
export const ChangePlanRequest = closed(
  { ...selecting, currentServicePlan: Type.Optional(PlanFilter), ...changePlanOwn },
  namesDevices('devices'),
);
export const ChangePlanStep = stepOf(changePlanOwn, 'currentServicePlan');

/**
 * The usage history of one device (the SDKs' `DeviceUsageListRequest`): a playbook wanting several devices'
 * usage asks for each in a forEach step.
 */
export const UsageRequest = closed(
  { deviceId: DeviceId, earliest: DateTime, latest: DateTime },
  { 'x-moved': { devices: '`deviceId`, one device per call (a forEach step for several)' } },
);
/** One day of a device's usage (the SDKs' `Usage`). */
export const UsageRecord = Type.Object({
  timestamp: DateTime,
  bytesUsed: Type.Integer(),
  smsUsed: Type.Integer(),
  servicePlan: Type.Optional(Type.String()),
  source: Type.Optional(Type.String({ description: 'Where the usage was read, e.g. Raw Usage.' })),
  extendedAttributes: Type.Optional(
    Type.Array(Type.Object({ key: Type.String(), value: Type.Optional(Type.String()) }), {
      description: 'Further counts as { key, value }: MoSms and MtSms, the SMS sent and received.',
    }),
  ),
});
export const UsageResponse = Type.Object({
  hasMoreData: Type.Boolean(),
  usageHistory: Type.Array(UsageRecord),
});
/** The SDKs' `SMSSendRequest`: a flat `deviceIds` list, or a device group. */
const DeviceIdList = Type.Array(DeviceId, {
  minItems: 1,
  'x-uniqueBy': 'id',
  description: 'The devices, one { id, kind } each.',
});
const smsOwn = {
  accountName: AccountName,
  smsMessage: Type.String({ minLength: 1, maxLength: 160 }),
  dataEncoding: Type.Optional(Type.String({ enum: ['7-bit', '8-bit-ASCII', '8-bit-UTF-8', '8-bit-DATA'] })),
};
const oldSmsDevices = { devices: '`deviceIds: [{ id, kind }]`, a flat list' };
export const SmsRequest = closed(
  {
    ...smsOwn,
    deviceIds: Type.Optional(DeviceIdList),
    groupName: Type.Optional(GroupName),
    servicePlan: Type.Optional(PlanFilter),
    customFields: Type.Optional(CustomFields),
  },
  { ...namesDevices('deviceIds'), 'x-moved': oldSmsDevices },
);
export const SmsStep = closed(
  { ...smsOwn, deviceIds: DeviceIdList },
  { 'x-moved': { ...oldSmsDevices, ...selectingInAStep('deviceIds', 'groupName', 'servicePlan', 'customFields')['x-moved'] } },
);

// ── asynchronous requests ───────────────────────────────────────────────────────────────────────
export const RequestStatusRequest = closed({
  accountName: AccountName,
  requestId: Type.String({ minLength: 1, description: 'The requestId a device action or SMS answered.' }),
});
/**
 * `Pending` until the service has finished every device of the request; then `Success` (every device),
 * `Failure` (none; the real service's spelling, `Failed` is read too) or `PartialSuccess` (docs/spec-decisions.md:
 * the spec shows only single-device requests).
 */
export const RequestStatusResponse = Type.Object({
  requestId: Type.String(),
  status: Type.String({ enum: ['Pending', 'Success', 'Failure', 'Failed', 'PartialSuccess'] }),
});

// ── connectivity callbacks ──────────────────────────────────────────────────────────────────────
const ServiceName = Type.String({ enum: [...CALLBACK_SERVICES] });

export const RegisterCallbackRequest = closed({
  accountName: AccountName,
  name: ServiceName,
  url: Type.String({ format: 'uri', pattern: '^https?://' }),
  username: Type.Optional(Type.String()),
  password: Type.Optional(Type.String()),
});
export const DeregisterCallbackRequest = closed({ accountName: AccountName, serviceName: ServiceName });
