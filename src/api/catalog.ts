/**
 * The action catalog: every API operation fleetbook can call, once. The client, `fleetbook call`, the
 * playbook validator, dry-run and the emulator all read this table; nothing else lists operations.
 *
 * An action takes one JSON object: the request body's fields plus the path parameters (product.md 3).
 */
import type Type from 'typebox';
import { onFirstUse } from '../util/on-first-use.js';
import { MAX_REPORT_DEVICES } from './limits.js';
import type * as Connectivity from './schemas/connectivity.js';
import type * as Location from './schemas/location.js';
import type * as Sensors from './schemas/sensors.js';
import type * as Subscriptions from './schemas/subscriptions.js';
import type * as Triggers from './schemas/triggers.js';

// The schemas are loaded when one is first read: checking a valid request takes the validator the build
// generated (api/generated.ts), so a run never builds them.
const C = onFirstUse<typeof Connectivity>(import.meta.url, './schemas/connectivity.js');
const L = onFirstUse<typeof Location>(import.meta.url, './schemas/location.js');
const S = onFirstUse<typeof Sensors>(import.meta.url, './schemas/sensors.js');
const U = onFirstUse<typeof Subscriptions>(import.meta.url, './schemas/subscriptions.js');
const T = onFirstUse<typeof Triggers>(import.meta.url, './schemas/triggers.js');

/** One rate budget per API area, shared by everything in the process (product.md 5). */
export type Area = 'm2m' | 'loc' | 'subsc' | 'dm' | 'oauth';
export const AREAS: readonly Area[] = ['m2m', 'loc', 'subsc', 'dm', 'oauth'];
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
/** Which of the three error body shapes of spec section 7 the operation documents. */
export type ErrorShape = 'errorCode' | 'error' | 'error+cause';
type Json = Record<string, unknown>;

export interface Operation {
  /** `area.verb`, the name `uses:` and `fleetbook call` take. */
  readonly action: string;
  readonly summary: string;
  readonly area: Area;
  readonly method: Method;
  /** Path under `{base_url}`, with `{param}` placeholders filled from the input. */
  readonly path: string;
  /** A different path for some inputs (listing triggers by account or by id). */
  readonly route?: (input: Json) => string;
  /** What the action takes. */
  readonly input: Type.TSchema;
  /** One request body as sent, when it differs from `input` (batches). */
  readonly request?: Type.TSchema;
  /** What the action returns, after every page or batch. */
  readonly output: Type.TSchema;
  /** One page's response, for paged actions. */
  readonly page?: Type.TSchema;
  readonly paging?: 'startIndex' | 'largestDeviceIdSeen';
  /** Changes state at the service: skipped by dry-run, counted by `limits`. */
  readonly mutating: boolean;
  /**
   * May be sent again after an unknown outcome (sent, no answer): read-only, or idempotent in effect. A call
   * that is not retry-safe is retried only when the error proves the request never reached the service
   * (connection refused, 429, 503).
   */
  readonly retrySafe: boolean;
  readonly errorShape: ErrorShape;
  /** Can report per-device errors of spec section 7.3 in its results. */
  readonly deviceErrors?: boolean;
  /**
   * Mutating, but names its devices only to read them (a location report): it changes nothing about them, so it
   * takes no per-device lock.
   */
  readonly onlyReadsDevices?: boolean;
  /** Rewrites the spellings the spec contradicts itself on to the one the examples use (docs/spec-decisions.md). */
  readonly normalize?: (input: Json) => Json;
  /**
   * How the runner executes the action (src/runner/strategies): `call` (the default) sends it and takes the
   * answer; `deviceState` changes devices, answers a request id, and has each device's outcome confirmed
   * (CarrierService callback, request status, or the devices' state); `listing` reads devices page by page;
   * `locate` and `locationReport` return a location or an error per device, with per-device retries.
   */
  readonly strategy?: Strategy;
  /** `deviceState`: the devices.list filter of the devices in the state the action leaves them in. */
  readonly applied?: (input: Json) => Json;
  /** The member that names devices when it is not `devices` or `deviceList` (a list of IMEIs). */
  readonly devicesIn?: string;
  /** Devices per request when the client splits an input into batches: a dry run plans that many calls. */
  readonly batchSize?: number;
}

export type Strategy = 'call' | 'deviceState' | 'listing' | 'locate' | 'locationReport';

// ── normalisers: accept both spellings, send the examples' ──────────────────────────────────────
const rename = (obj: unknown, from: string, to: string): void => {
  if (obj && typeof obj === 'object' && from in obj) {
    const o = obj as Json;
    if (!(to in o)) o[to] = o[from];
    delete o[from];
  }
};
const clone = (input: Json): Json => structuredClone(input);

function normalizeTrigger(input: Json): Json {
  const out = clone(input);
  if (out.triggerCategory === 'pricePlanDataUsage') out.triggerCategory = 'PricePlanDataUsage';
  rename(out.notification, 'notificationFequencyFactor', 'notificationFrequencyFactor');
  const ppt = out.pricePlanTrigger as Json | undefined;
  rename(ppt, 'accountShare', 'accountGroupShare');
  const fc = (ppt?.payAsYouGo as Json | undefined)?.filterCriteria as Json | undefined;
  if (fc && typeof fc.carrierServicePlanCode === 'number')
    fc.carrierServicePlanCode = String(fc.carrierServicePlanCode);
  return out;
}

/** Flat `{ id, kind }` devices become `{ deviceIds: [{ id, kind }] }`; kinds are sent lower case. */
export function normalizeDevices(input: Json): Json {
  const out = { ...input };
  if (Array.isArray(out.devices)) {
    out.devices = out.devices.map((d: Json) => {
      if (Array.isArray(d.deviceIds))
        return {
          deviceIds: d.deviceIds.map((x: Json) => ({ id: x.id, kind: String(x.kind).toLowerCase() })),
        };
      const kind = String(d.kind).toLowerCase();
      // A checked flat identifier has only `id` and `kind`: one already in lower case is sent as it is.
      return { deviceIds: [kind === d.kind ? d : { id: d.id, kind }] };
    });
  }
  return out;
}

function normalizeLocation(input: Json): Json {
  const list = input.deviceList;
  // Most lists are already lower case: copy a 100,000-device list only when something changes.
  if (!Array.isArray(list) || list.every((d: Json) => d.kind === String(d.kind).toLowerCase())) return input;
  return { ...input, deviceList: list.map((d: Json) => ({ ...d, kind: String(d.kind).toLowerCase() })) };
}

function normalizeUsageTrigger(input: Json): Json {
  const out = clone(input);
  if (typeof out.thresholdValue === 'number') out.thresholdValue = String(out.thresholdValue);
  return out;
}

function normalizeManagedAccounts(input: Json): Json {
  const out = clone(input);
  if (Array.isArray(out.managedAccList)) {
    out.managedAccList = out.managedAccList.map((a: unknown) =>
      typeof a === 'object' && a ? (a as Json).id : a,
    );
  }
  return out;
}

function normalizeConfiguration(input: Json): Json {
  const out = clone(input);
  rename(out, 'accountName', 'accountname');
  rename((out.configuration as Json | undefined)?.HighPrecisionTiltConfig, 'holdTime', 'hold-time');
  return out;
}

function normalizeProfiles(input: Json): Json {
  const out = clone(input);
  if (out.profiles && !Array.isArray(out.profiles)) out.profiles = [out.profiles];
  for (const p of (out.profiles as Json[] | undefined) ?? [])
    rename(p.configuration, 'reportingInterval', 'resportingInterval');
  return out;
}

// ── the table ───────────────────────────────────────────────────────────────────────────────────
/** A device action of the M2M area: its request schema is read through `input` when first needed. */
const m2mDevice = <I extends Type.TSchema>(
  verb: string,
  summary: string,
  input: () => I,
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
    get output() {
      return C().RequestAccepted;
    },
    mutating: true,
    retrySafe: false,
    errorShape: 'errorCode',
    normalize: normalizeDevices,
    strategy: 'deviceState',
    applied,
  }) as const satisfies Operation;

const inState = (state: string) => () => ({ state });

export const CATALOG = {
  'session.login': {
    action: 'session.login',
    summary: 'Log in; returns a session token (the client does this by itself).',
    area: 'm2m',
    method: 'POST',
    path: '/m2m/v1/session/login',
    get input() {
      return C().LoginRequest;
    },
    get output() {
      return C().LoginResponse;
    },
    mutating: false,
    // Five consecutive failed logins lock the user: a login is never re-sent on an unknown outcome.
    retrySafe: false,
    errorShape: 'errorCode',
  },
  'session.logout': {
    action: 'session.logout',
    summary: 'End the current session.',
    area: 'm2m',
    method: 'POST',
    path: '/m2m/v1/session/logout',
    get input() {
      return C().LogoutRequest;
    },
    get output() {
      return C().LogoutResponse;
    },
    mutating: false,
    retrySafe: true,
    errorShape: 'errorCode',
  },
  'triggers.createPayAsYouGo': {
    action: 'triggers.createPayAsYouGo',
    summary: 'Create a pay-as-you-go price plan usage trigger.',
    area: 'm2m',
    method: 'POST',
    path: '/m2m/v2/triggers',
    get input() {
      return T().CreatePayAsYouGoRequest;
    },
    get output() {
      return T().TriggerIdResponse;
    },
    mutating: true,
    retrySafe: false,
    errorShape: 'error',
    normalize: normalizeTrigger,
  },
  'triggers.updateAccountGroupShare': {
    action: 'triggers.updateAccountGroupShare',
    summary: 'Overwrite an account-group-share price plan trigger.',
    area: 'm2m',
    method: 'PUT',
    path: '/m2m/v2/triggers',
    get input() {
      return T().UpdateAccountGroupShareRequest;
    },
    get output() {
      return T().TriggerIdResponse;
    },
    mutating: true,
    retrySafe: true,
    errorShape: 'error',
    normalize: normalizeTrigger,
  },
  'triggers.list': {
    action: 'triggers.list',
    summary: 'List price plan triggers: all, of one account, or one by id.',
    area: 'm2m',
    method: 'GET',
    path: '/m2m/v2/triggers',
    route: (i: Json) =>
      i.triggerId
        ? `/m2m/v2/triggers/${enc(i.triggerId)}`
        : i.accountName
          ? `/m2m/v2/triggers/accounts/${enc(i.accountName)}`
          : '/m2m/v2/triggers',
    get input() {
      return T().ListTriggersRequest;
    },
    get output() {
      return T().ListTriggersResponse;
    },
    mutating: false,
    retrySafe: true,
    errorShape: 'error',
  },
  'location.setExclusions': {
    action: 'location.setExclusions',
    summary: 'Append to or replace the devices excluded from location.',
    area: 'loc',
    method: 'POST',
    path: '/loc/v1/consents',
    get input() {
      return L().SetExclusionsRequest;
    },
    get output() {
      return L().SetExclusionsResponse;
    },
    mutating: true,
    retrySafe: true,
    errorShape: 'errorCode',
    devicesIn: 'exclusion',
  },
  'location.getExclusions': {
    action: 'location.getExclusions',
    summary: 'Read the exclusion list (every page).',
    area: 'loc',
    method: 'GET',
    path: '/loc/v1/consents/{accountName}/index/{startIndex}',
    get input() {
      return L().GetExclusionsRequest;
    },
    get output() {
      return L().GetExclusionsResult;
    },
    get page() {
      return L().ExclusionsPage;
    },
    paging: 'startIndex',
    mutating: false,
    retrySafe: true,
    errorShape: 'errorCode',
  },
  'location.locate': {
    action: 'location.locate',
    summary: 'Locate devices synchronously.',
    area: 'loc',
    method: 'POST',
    path: '/loc/v1/locations',
    get input() {
      return L().LocateRequest;
    },
    get output() {
      return L().LocateResponse;
    },
    mutating: false,
    retrySafe: true,
    errorShape: 'errorCode',
    deviceErrors: true,
    normalize: normalizeLocation,
    strategy: 'locate',
  },
  'location.createReport': {
    action: 'location.createReport',
    summary:
      'Request an asynchronous location report; more than 10,000 devices are sent in several requests.',
    area: 'loc',
    method: 'POST',
    path: '/loc/v1/locationreports',
    get input() {
      return L().CreateReportInput;
    },
    get request() {
      return L().CreateReportRequest;
    },
    get output() {
      return L().CreateReportResult;
    },
    // A report is a billable resource: dry-run does not create one, and an unknown outcome is not re-sent.
    mutating: true,
    onlyReadsDevices: true,
    retrySafe: false,
    errorShape: 'errorCode',
    deviceErrors: true,
    normalize: normalizeLocation,
    strategy: 'locationReport',
    batchSize: MAX_REPORT_DEVICES,
  },
  'location.getReportStatus': {
    action: 'location.getReportStatus',
    summary: 'Status of a location report: QUEUED, INPROGRESS or COMPLETED.',
    area: 'loc',
    method: 'GET',
    path: '/loc/v1/locationreports/{accountName}/report/{txid}/status',
    get input() {
      return L().ReportRefRequest;
    },
    get output() {
      return L().ReportStatusResponse;
    },
    mutating: false,
    retrySafe: true,
    errorShape: 'errorCode',
  },
  'location.getReport': {
    action: 'location.getReport',
    summary: 'Per-device results of a location report (every page).',
    area: 'loc',
    method: 'GET',
    path: '/loc/v1/locationreports/{accountName}/report/{txid}/index/{startIndex}',
    get input() {
      return L().GetReportRequest;
    },
    get output() {
      return L().GetReportResult;
    },
    get page() {
      return L().ReportPage;
    },
    paging: 'startIndex',
    mutating: false,
    retrySafe: true,
    errorShape: 'errorCode',
    deviceErrors: true,
  },
  'location.cancelReport': {
    action: 'location.cancelReport',
    summary: 'Cancel a location report that has not completed.',
    area: 'loc',
    method: 'DELETE',
    path: '/loc/v1/locationreports/{accountName}/report/{txid}',
    get input() {
      return L().ReportRefRequest;
    },
    get output() {
      return L().CancelReportResponse;
    },
    mutating: true,
    retrySafe: true,
    errorShape: 'errorCode',
  },
  'usageTriggers.create': {
    action: 'usageTriggers.create',
    summary: 'Create a location usage trigger.',
    area: 'subsc',
    method: 'POST',
    path: '/subsc/v1/usage/triggers',
    get input() {
      return U().CreateUsageTriggerRequest;
    },
    get output() {
      return U().UsageTrigger;
    },
    mutating: true,
    retrySafe: false,
    errorShape: 'errorCode',
    normalize: normalizeUsageTrigger,
  },
  'usageTriggers.update': {
    action: 'usageTriggers.update',
    summary: 'Update a location usage trigger.',
    area: 'subsc',
    method: 'POST',
    path: '/subsc/v1/usage/triggers/{triggerId}',
    get input() {
      return U().UpdateUsageTriggerRequest;
    },
    get output() {
      return U().UsageTrigger;
    },
    mutating: true,
    retrySafe: true,
    errorShape: 'errorCode',
    normalize: normalizeUsageTrigger,
  },
  'usageTriggers.delete': {
    action: 'usageTriggers.delete',
    summary: 'Delete a location usage trigger.',
    area: 'subsc',
    method: 'DELETE',
    path: '/subsc/v1/usage/accounts/{accountName}/triggers/{triggerId}',
    get input() {
      return U().DeleteUsageTriggerRequest;
    },
    get output() {
      return U().SuccessResponse;
    },
    mutating: true,
    retrySafe: true,
    errorShape: 'errorCode',
  },
  'managedAccounts.add': {
    action: 'managedAccounts.add',
    summary: 'Add managed billing accounts to a primary account; returns the TxId to activate them with.',
    area: 'subsc',
    method: 'POST',
    path: '/subsc/v1/managedaccounts/actions/add',
    get input() {
      return U().AddManagedAccountsRequest;
    },
    get output() {
      return U().AddManagedAccountsResponse;
    },
    mutating: true,
    retrySafe: false,
    errorShape: 'errorCode',
    normalize: normalizeManagedAccounts,
  },
  'locationCallbacks.list': {
    action: 'locationCallbacks.list',
    summary: 'List the callback listeners of an account.',
    // /fota/v1 has no budget of its own: it serves location listeners, so it shares the location area.
    area: 'loc',
    method: 'GET',
    path: '/fota/v1/callbacks/{accountName}',
    get input() {
      return L().AccountOnlyRequest;
    },
    get output() {
      return L().ListenerList;
    },
    mutating: false,
    retrySafe: true,
    errorShape: 'errorCode',
  },
  'locationCallbacks.register': {
    action: 'locationCallbacks.register',
    summary: 'Register the Location callback listener of an account.',
    area: 'loc',
    method: 'POST',
    path: '/loc/v1/callbacks/{accountName}',
    get input() {
      return L().RegisterLocationCallbackRequest;
    },
    get output() {
      return L().RegisteredResponse;
    },
    mutating: true,
    retrySafe: true,
    errorShape: 'errorCode',
    normalize: (i: Json) => ({ name: 'Location', ...i }),
  },
  'locationCallbacks.deregister': {
    action: 'locationCallbacks.deregister',
    summary: 'Stop Location callback messages for an account.',
    area: 'loc',
    method: 'DELETE',
    path: '/loc/v1/callbacks/{accountName}/name/{serviceName}',
    get input() {
      return L().DeregisterLocationCallbackRequest;
    },
    get output() {
      return L().DeregisterResponse;
    },
    mutating: true,
    retrySafe: true,
    errorShape: 'errorCode',
    normalize: (i: Json) => ({ serviceName: 'Location', ...i }),
  },
  'callbacks.list': {
    action: 'callbacks.list',
    summary: 'List the connectivity callback listeners of an account.',
    area: 'm2m',
    method: 'GET',
    path: '/m2m/v1/callbacks/{accountName}',
    get input() {
      return L().AccountOnlyRequest;
    },
    get output() {
      return L().ListenerList;
    },
    mutating: false,
    retrySafe: true,
    errorShape: 'errorCode',
  },
  'callbacks.register': {
    action: 'callbacks.register',
    summary: 'Register a connectivity callback listener for a service.',
    area: 'm2m',
    method: 'POST',
    path: '/m2m/v1/callbacks/{accountName}',
    get input() {
      return C().RegisterCallbackRequest;
    },
    get output() {
      return L().RegisteredResponse;
    },
    mutating: true,
    retrySafe: true,
    errorShape: 'errorCode',
  },
  'callbacks.deregister': {
    action: 'callbacks.deregister',
    summary: 'Deregister a connectivity callback listener.',
    area: 'm2m',
    method: 'DELETE',
    path: '/m2m/v1/callbacks/{accountName}/name/{serviceName}',
    get input() {
      return C().DeregisterCallbackRequest;
    },
    get output() {
      return L().RegisteredResponse;
    },
    mutating: true,
    retrySafe: true,
    errorShape: 'errorCode',
  },
  'sensors.query': {
    action: 'sensors.query',
    summary: 'Query sensors.',
    area: 'dm',
    method: 'POST',
    path: '/dm/v1/devices/sensors/actions/query',
    get input() {
      return S().SensorQueryRequest;
    },
    get output() {
      return S().SensorQueryResponse;
    },
    mutating: false,
    retrySafe: true,
    errorShape: 'error+cause',
  },
  'sensors.networkExperience': {
    action: 'sensors.networkExperience',
    summary: 'Network experience overview (good, fair and bad device counts).',
    area: 'dm',
    method: 'POST',
    path: '/dm/v1/devices/networkexperience/actions/query',
    get input() {
      return S().NetworkExperienceRequest;
    },
    get output() {
      return S().NetworkExperienceResponse;
    },
    mutating: false,
    retrySafe: true,
    errorShape: 'error+cause',
  },
  'sensors.onboardingStatus': {
    action: 'sensors.onboardingStatus',
    summary: 'Onboarding status of a sensor behind a gateway.',
    area: 'dm',
    method: 'POST',
    path: '/dm/v1/devices/sensors/onboard/status/actions/query',
    get input() {
      return S().OnboardingStatusRequest;
    },
    get output() {
      return S().OnboardingStatusResponse;
    },
    mutating: false,
    retrySafe: true,
    errorShape: 'error+cause',
  },
  'sensors.setConfiguration': {
    action: 'sensors.setConfiguration',
    summary: 'Set a sensor configuration (BLE or tilt form).',
    area: 'dm',
    method: 'POST',
    path: '/dm/v1/devices/actions/set',
    get input() {
      return S().SetConfigurationRequest;
    },
    get output() {
      return S().SetConfigurationResponse;
    },
    mutating: true,
    retrySafe: true,
    errorShape: 'error+cause',
    normalize: normalizeConfiguration,
  },
  'deviceProfiles.update': {
    action: 'deviceProfiles.update',
    summary: 'Partially update device profiles.',
    area: 'dm',
    method: 'PATCH',
    path: '/dm/v1/deviceConfigurationProfiles',
    get input() {
      return S().UpdateProfilesRequest;
    },
    get output() {
      return S().UpdateProfilesResponse;
    },
    mutating: true,
    retrySafe: true,
    errorShape: 'error+cause',
    normalize: normalizeProfiles,
  },
  'rules.overwrite': {
    action: 'rules.overwrite',
    summary: 'Overwrite a Smart Alert rule.',
    area: 'dm',
    method: 'POST',
    path: '/dm/v1/rules',
    get input() {
      return S().OverwriteRuleRequest;
    },
    get output() {
      return S().Rule;
    },
    mutating: true,
    retrySafe: true,
    errorShape: 'error+cause',
  },
  'notificationGroups.removeUsers': {
    action: 'notificationGroups.removeUsers',
    summary: 'Remove users from a notification group.',
    area: 'dm',
    method: 'POST',
    path: '/dm/v1/notificationGroups/actions/remove-users',
    get input() {
      return S().RemoveUsersRequest;
    },
    get output() {
      return S().NoBody;
    },
    mutating: true,
    retrySafe: true,
    errorShape: 'error+cause',
  },
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
    strategy: 'listing',
  },
  'devices.suspend': m2mDevice(
    'suspend',
    'Suspend service of devices.',
    () => C().DeviceActionRequest,
    inState('suspend'),
  ),
  'devices.restore': m2mDevice(
    'restore',
    'Restore service of suspended devices.',
    () => C().DeviceActionRequest,
    inState('active'),
  ),
  'devices.activate': m2mDevice(
    'activate',
    'Activate service of devices.',
    () => C().ActivateRequest,
    inState('active'),
  ),
  'devices.deactivate': m2mDevice(
    'deactivate',
    'Deactivate devices.',
    () => C().DeactivateRequest,
    inState('deactive'),
  ),
  'devices.changePlan': m2mDevice(
    'plan',
    'Change the service plan of devices.',
    () => C().ChangePlanRequest,
    (input) => ({ servicePlan: String(input.servicePlan) }),
    {
      action: 'devices.changePlan',
      method: 'PUT',
    },
  ),
  'devices.usage': {
    action: 'devices.usage',
    summary: 'Usage history of devices.',
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
    normalize: normalizeDevices,
  },
  'sms.send': {
    action: 'sms.send',
    summary: 'Send an SMS to devices (queued by the service).',
    area: 'm2m',
    method: 'POST',
    path: '/m2m/v1/sms',
    get input() {
      return C().SmsRequest;
    },
    get output() {
      return C().RequestAccepted;
    },
    mutating: true,
    retrySafe: false,
    errorShape: 'errorCode',
    normalize: normalizeDevices,
  },
  'requests.status': {
    action: 'requests.status',
    summary: 'Status of a device action or SMS request: Pending, Success, Failed or PartialSuccess.',
    area: 'm2m',
    method: 'GET',
    path: '/m2m/v1/accounts/{accountName}/requests/{requestId}/status',
    get input() {
      return C().RequestStatusRequest;
    },
    get output() {
      return C().RequestStatusResponse;
    },
    mutating: false,
    retrySafe: true,
    errorShape: 'errorCode',
  },
} as const satisfies Record<string, Operation>;

export type ActionName = keyof typeof CATALOG;
export type ActionInput<A extends ActionName> = Type.Static<(typeof CATALOG)[A]['input']>;
export type ActionOutput<A extends ActionName> = Type.Static<(typeof CATALOG)[A]['output']>;
export const ACTIONS = Object.keys(CATALOG) as ActionName[];

export function isAction(name: string): name is ActionName {
  return Object.hasOwn(CATALOG, name);
}

export function operation(name: ActionName): Operation {
  return CATALOG[name];
}

function enc(v: unknown): string {
  return encodeURIComponent(String(v));
}

/** The path parameters an operation's template names, e.g. `['accountName', 'txid']`. */
export function pathParams(op: Operation): string[] {
  let names = paramNames.get(op.path);
  if (!names) {
    names = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
    paramNames.set(op.path, names);
  }
  return names;
}
/** The parameters of each path template, found once: every request asks. */
const paramNames = new Map<string, string[]>();

/** The path for an input, every `{param}` filled and encoded. */
export function resolvePath(op: Operation, input: Json): string {
  if (op.route) return op.route(input);
  return op.path.replace(/\{(\w+)\}/g, (_, name: string) => enc(input[name] ?? ''));
}
