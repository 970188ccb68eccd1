/**
 * One valid input per action of the catalog, with the path and body the server must receive for it. Typed by
 * `ActionName`: an action added to the catalog without a case here fails the type check.
 */
import type { ActionInput, ActionName } from '../../src/api/catalog.js';

export const ACC = '0000123456-00001';
const ACC2 = '0000123456-00002';
const ACC3 = '0000123456-00003';
const SKU = 'TS-LOC-COARSE-CellID-Aggr';
const IMEI = '353456789012345';
const IMEI2 = '353456789012346';
const ICCID = '89148000001234567890';
const UUID = '0123456789abcdef0123456789abcdef';
export const UUID36 = '12345678-90ab-cdef-1234-567890abcdef';
/** A report id with characters that must be percent-encoded in a path segment. */
const TXID = 'tx 1/ä?#%';
const TXID_ENC = 'tx%201%2F%C3%A4%3F%23%25';

export interface Case<A extends ActionName> {
  input: ActionInput<A>;
  /** Path as it reaches the server, base path included, still encoded. */
  path: string;
  /** The JSON body the server must receive; undefined for GET and DELETE (no body at all). */
  body?: unknown;
}
export type Table = { [A in ActionName]: Case<A> };

/** A valid trigger notification. */
export const notification = {
  notificationType: 'PerEvent',
  callback: true,
  notificationFrequencyFactor: 1,
  notificationFrequencyInterval: 'Daily',
  reminder: false,
  severity: 'Major',
} as const;

export const CASES: Table = {
  'session.login': {
    input: { username: 'fleet-user', password: 'fleet-password-0001' },
    path: '/api/m2m/v1/session/login',
    body: { username: 'fleet-user', password: 'fleet-password-0001' },
  },
  'session.logout': { input: {}, path: '/api/m2m/v1/session/logout', body: {} },
  'triggers.createPayAsYouGo': {
    input: {
      triggerName: 'over-5GB',
      ecpdId: '1234567',
      // The field description's spelling; the examples' is sent.
      triggerCategory: 'pricePlanDataUsage',
      pricePlanTrigger: {
        payAsYouGo: {
          filterCriteria: { carrierServicePlanCode: 84777, accountNameList: [ACC] },
          condition: {
            conditionType: 'Individual',
            comparator: 'gt',
            threshold: 5,
            thresholdUnit: 'GB',
            cycleType: 'Monthly',
          },
          action: {
            suspend: true,
            suspendDetails: { suspendDuration: '30', suspendOption: 'WithoutBilling' },
          },
        },
      },
      notification: {
        notificationType: 'PerEvent',
        callback: true,
        notificationFequencyFactor: 2,
        notificationFrequencyInterval: 'Daily',
        reminder: false,
        severity: 'Major',
      },
      active: true,
    },
    path: '/api/m2m/v2/triggers',
    body: {
      triggerName: 'over-5GB',
      ecpdId: '1234567',
      triggerCategory: 'PricePlanDataUsage',
      pricePlanTrigger: {
        payAsYouGo: {
          filterCriteria: { carrierServicePlanCode: '84777', accountNameList: [ACC] },
          condition: {
            conditionType: 'Individual',
            comparator: 'gt',
            threshold: 5,
            thresholdUnit: 'GB',
            cycleType: 'Monthly',
          },
          action: {
            suspend: true,
            suspendDetails: { suspendDuration: '30', suspendOption: 'WithoutBilling' },
          },
        },
      },
      notification: {
        notificationType: 'PerEvent',
        callback: true,
        notificationFrequencyFactor: 2,
        notificationFrequencyInterval: 'Daily',
        reminder: false,
        severity: 'Major',
      },
      active: true,
    },
  },
  'triggers.updateAccountGroupShare': {
    input: {
      triggerId: UUID36,
      triggerName: 'group-share',
      ecpdId: '1234567',
      triggerCategory: 'PricePlanDataUsage',
      pricePlanTrigger: {
        // The field table's member name; the examples' is sent.
        accountShare: {
          accountGroupShareIndividual: {
            filterCriteria: { ratePlanGroupId: 7 },
            condition: { action: 'notify' },
            action: {
              notify: {
                alertType: 'individualpriceplan',
                threshold: [{ carrierCode: 'P100', percentage: { percentage90: true } }],
              },
            },
          },
        },
      },
      notification,
      active: false,
    },
    path: '/api/m2m/v2/triggers',
    body: {
      triggerId: UUID36,
      triggerName: 'group-share',
      ecpdId: '1234567',
      triggerCategory: 'PricePlanDataUsage',
      pricePlanTrigger: {
        accountGroupShare: {
          accountGroupShareIndividual: {
            filterCriteria: { ratePlanGroupId: 7 },
            condition: { action: 'notify' },
            action: {
              notify: {
                alertType: 'individualpriceplan',
                threshold: [{ carrierCode: 'P100', percentage: { percentage90: true } }],
              },
            },
          },
        },
      },
      notification,
      active: false,
    },
  },
  'triggers.list': { input: { accountName: ACC }, path: `/api/m2m/v2/triggers/accounts/${ACC}` },
  'location.setExclusions': {
    input: { accountName: ACC, type: 'append', allDevice: false, exclusion: [IMEI, IMEI2] },
    path: '/api/loc/v1/consents',
    body: { accountName: ACC, type: 'append', allDevice: false, exclusion: [IMEI, IMEI2] },
  },
  'location.getExclusions': { input: { accountName: ACC }, path: `/api/loc/v1/consents/${ACC}/index/0` },
  'location.locate': {
    input: { accountName: ACC, deviceList: [{ id: IMEI, kind: 'IMEI', mdn: '2015550123' }], cacheMode: '1' },
    path: '/api/loc/v1/locations',
    body: { accountName: ACC, deviceList: [{ id: IMEI, kind: 'imei', mdn: '2015550123' }], cacheMode: '1' },
  },
  'location.createReport': {
    input: {
      accountName: ACC,
      deviceList: [
        { id: IMEI, kind: 'imei' },
        { id: IMEI2, kind: 'IMEI' },
      ],
      accuracyMode: '0',
      cacheMode: '0',
    },
    path: '/api/loc/v1/locationreports',
    body: {
      accountName: ACC,
      deviceList: [
        { id: IMEI, kind: 'imei' },
        { id: IMEI2, kind: 'imei' },
      ],
      accuracyMode: '0',
      cacheMode: '0',
    },
  },
  'location.getReportStatus': {
    input: { accountName: ACC, txid: TXID },
    path: `/api/loc/v1/locationreports/${ACC}/report/${TXID_ENC}/status`,
  },
  'location.getReport': {
    input: { accountName: ACC, txid: TXID },
    path: `/api/loc/v1/locationreports/${ACC}/report/${TXID_ENC}/index/0`,
  },
  'location.cancelReport': {
    input: { accountName: ACC, txid: TXID },
    path: `/api/loc/v1/locationreports/${ACC}/report/${TXID_ENC}`,
  },
  'usageTriggers.create': {
    input: {
      accountName: ACC,
      serviceName: 'location',
      triggerName: 'loc-90',
      thresholdValue: 90,
      allowExcess: false,
      sendSmsNotification: true,
      smsPhoneNumbers: '2015550123,2015550124',
      sendEmailNotification: true,
      emailAddresses: 'ops@example.com, oncall@example.com',
    },
    path: '/api/subsc/v1/usage/triggers',
    body: {
      accountName: ACC,
      serviceName: 'location',
      triggerName: 'loc-90',
      thresholdValue: '90',
      allowExcess: false,
      sendSmsNotification: true,
      smsPhoneNumbers: '2015550123,2015550124',
      sendEmailNotification: true,
      emailAddresses: 'ops@example.com, oncall@example.com',
    },
  },
  'usageTriggers.update': {
    input: {
      triggerId: UUID,
      accountName: ACC,
      serviceName: 'Location',
      triggerName: 'loc-100',
      thresholdValue: 100,
      allowExcess: true,
      sendSmsNotification: false,
    },
    path: `/api/subsc/v1/usage/triggers/${UUID}`,
    body: {
      accountName: ACC,
      serviceName: 'Location',
      triggerName: 'loc-100',
      thresholdValue: '100',
      allowExcess: true,
      sendSmsNotification: false,
    },
  },
  'usageTriggers.delete': {
    input: { accountName: ACC, triggerId: UUID36 },
    path: `/api/subsc/v1/usage/accounts/${ACC}/triggers/${UUID36}`,
  },
  'managedAccounts.add': {
    input: {
      accountName: ACC,
      serviceName: 'Location',
      type: 'TS-LOC-COARSE-CellID-Aggr',
      managedAccList: [{ id: ACC2 }, ACC3],
    },
    path: '/api/subsc/v1/managedaccounts/actions/add',
    body: {
      accountName: ACC,
      serviceName: 'Location',
      type: 'TS-LOC-COARSE-CellID-Aggr',
      managedAccList: [ACC2, ACC3],
    },
  },
  'locationCallbacks.list': { input: { accountName: ACC }, path: `/api/fota/v1/callbacks/${ACC}` },
  'locationCallbacks.register': {
    input: { accountName: ACC, url: 'https://hooks.example.com/location' },
    path: `/api/loc/v1/callbacks/${ACC}`,
    body: { name: 'Location', url: 'https://hooks.example.com/location' },
  },
  'locationCallbacks.deregister': {
    input: { accountName: ACC },
    path: `/api/loc/v1/callbacks/${ACC}/name/Location`,
  },
  'callbacks.list': { input: { accountName: ACC }, path: `/api/m2m/v1/callbacks/${ACC}` },
  'callbacks.register': {
    input: {
      accountName: ACC,
      name: 'CarrierService',
      url: 'https://hooks.example.com/carrier',
      username: 'hook',
      password: 'hook-password',
    },
    path: `/api/m2m/v1/callbacks/${ACC}`,
    body: {
      name: 'CarrierService',
      url: 'https://hooks.example.com/carrier',
      username: 'hook',
      password: 'hook-password',
    },
  },
  'callbacks.deregister': {
    input: { accountName: ACC, serviceName: 'DeviceUsage' },
    path: `/api/m2m/v1/callbacks/${ACC}/name/DeviceUsage`,
  },
  'sensors.query': {
    input: {
      accountname: ACC,
      filter: { $limitnumber: 10, $nopagination: false },
      resourceidentifier: { imei: IMEI },
    },
    path: '/api/dm/v1/devices/sensors/actions/query',
    body: {
      accountname: ACC,
      filter: { $limitnumber: 10, $nopagination: false },
      // Spec 2.7 types the IMEI as an integer.
      resourceidentifier: { imei: Number(IMEI) },
    },
  },
  'sensors.networkExperience': {
    input: { accountname: ACC, filter: { $pagenumber: 2 } },
    path: '/api/dm/v1/devices/networkexperience/actions/query',
    body: { accountname: ACC, filter: { $pagenumber: 2 } },
  },
  'sensors.onboardingStatus': {
    input: {
      accountname: ACC,
      gatewayidentifier: { deviceid: UUID },
      onboarding: { sensoridentifiers: { deveui: '0011223344556677' } },
    },
    path: '/api/dm/v1/devices/sensors/onboard/status/actions/query',
    body: {
      accountname: ACC,
      gatewayidentifier: { deviceid: UUID },
      onboarding: { sensoridentifiers: { deveui: '0011223344556677' } },
    },
  },
  'sensors.setConfiguration': {
    input: {
      // The tilt example's spellings: accountName and holdTime.
      accountName: ACC,
      configuration: { HighPrecisionTiltConfig: { mode: 'periodic', holdTime: 500, 'angle-away': 30 } },
      resourceidentifier: { id: UUID },
    },
    path: '/api/dm/v1/devices/actions/set',
    body: {
      accountname: ACC,
      configuration: { HighPrecisionTiltConfig: { mode: 'periodic', 'hold-time': 500, 'angle-away': 30 } },
      resourceidentifier: { id: UUID },
    },
  },
  'deviceProfiles.update': {
    input: {
      accountname: ACC,
      // One profile object (the field table) with the field table's reportingInterval.
      profiles: { name: 'tilt-default', kind: 'tilt', configuration: { randomInt: 1, reportingInterval: 4 } },
    },
    path: '/api/dm/v1/deviceConfigurationProfiles',
    body: {
      accountname: ACC,
      profiles: [
        { name: 'tilt-default', kind: 'tilt', configuration: { randomInt: 1, resportingInterval: 4 } },
      ],
    },
  },
  'rules.overwrite': {
    input: {
      accountname: ACC,
      resourceidentifier: { id: UUID },
      rule: { name: 'tilt-alert', disabled: false, rulesyntax: 'json', rulechain: { when: 'tilt > 30' } },
    },
    path: '/api/dm/v1/rules',
    body: {
      accountname: ACC,
      resourceidentifier: { id: UUID },
      rule: { name: 'tilt-alert', disabled: false, rulesyntax: 'json', rulechain: { when: 'tilt > 30' } },
    },
  },
  'notificationGroups.removeUsers': {
    input: { accountname: ACC, id: 'group-1', userids: ['user-1', 'user-2'] },
    path: '/api/dm/v1/notificationGroups/actions/remove-users',
    body: { accountname: ACC, id: 'group-1', userids: ['user-1', 'user-2'] },
  },
  'devices.attributes': {
    input: { deviceId: { id: ICCID, kind: 'iccid' } },
    path: '/api/m2m/v1/devices/actions/list',
    body: { deviceId: { id: ICCID, kind: 'iccid' } },
  },
  'devices.list': {
    input: {
      accountName: ACC,
      currentState: 'active',
      filter: { deviceIdentifierFilters: [{ kind: 'IMEI', startswith: '3534' }] },
      maxNumberOfDevices: 500,
    },
    path: '/api/m2m/v1/devices/actions/list',
    body: {
      accountName: ACC,
      currentState: 'active',
      filter: { deviceIdentifierFilters: [{ kind: 'imei', startswith: '3534' }] },
      maxNumberOfDevices: 500,
    },
  },
  'devices.suspend': {
    // The flat list that callbacks and listings hand over.
    input: {
      accountName: ACC,
      devices: [
        { id: IMEI, kind: 'IMEI' },
        { id: ICCID, kind: 'iccid' },
      ],
    },
    path: '/api/m2m/v1/devices/actions/suspend',
    body: {
      accountName: ACC,
      devices: [{ deviceIds: [{ id: IMEI, kind: 'imei' }] }, { deviceIds: [{ id: ICCID, kind: 'iccid' }] }],
    },
  },
  'devices.restore': {
    // The API's own shape passes through (kinds lower-cased).
    input: {
      accountName: ACC,
      devices: [
        {
          deviceIds: [
            { id: IMEI, kind: 'imei' },
            { id: ICCID, kind: 'ICCID' },
          ],
        },
      ],
    },
    path: '/api/m2m/v1/devices/actions/restore',
    body: {
      accountName: ACC,
      devices: [
        {
          deviceIds: [
            { id: IMEI, kind: 'imei' },
            { id: ICCID, kind: 'iccid' },
          ],
        },
      ],
    },
  },
  'devices.activate': {
    input: {
      accountName: ACC,
      devices: [{ id: IMEI, kind: 'imei' }],
      servicePlan: 'M2M4G',
      mdnZipCode: '07920',
    },
    path: '/api/m2m/v1/devices/actions/activate',
    body: {
      accountName: ACC,
      devices: [{ deviceIds: [{ id: IMEI, kind: 'imei' }] }],
      servicePlan: 'M2M4G',
      mdnZipCode: '07920',
    },
  },
  'devices.deactivate': {
    input: {
      accountName: ACC,
      devices: [{ id: '2015550123', kind: 'mdn' }],
      reasonCode: 'FF',
      etfWaiver: true,
    },
    path: '/api/m2m/v1/devices/actions/deactivate',
    body: {
      accountName: ACC,
      devices: [{ deviceIds: [{ id: '2015550123', kind: 'mdn' }] }],
      reasonCode: 'FF',
      etfWaiver: true,
    },
  },
  'devices.changePlan': {
    input: { accountName: ACC, devices: [{ id: IMEI, kind: 'imei' }], servicePlan: 'M2M5G' },
    path: '/api/m2m/v1/devices/actions/plan',
    body: { accountName: ACC, devices: [{ deviceIds: [{ id: IMEI, kind: 'imei' }] }], servicePlan: 'M2M5G' },
  },
  'devices.usage': {
    input: {
      deviceId: { id: IMEI, kind: 'IMEI' },
      earliest: '2026-01-01T00:00:00Z',
      latest: '2026-01-31T23:59:59Z',
    },
    path: '/api/m2m/v1/devices/usage/actions/list',
    body: {
      deviceId: { id: IMEI, kind: 'imei' },
      earliest: '2026-01-01T00:00:00Z',
      latest: '2026-01-31T23:59:59Z',
    },
  },
  'sms.send': {
    input: {
      accountName: ACC,
      deviceIds: [{ id: IMEI, kind: 'IMEI' }],
      smsMessage: 'reboot',
      dataEncoding: '7-bit',
    },
    path: '/api/m2m/v1/sms',
    body: {
      accountName: ACC,
      deviceIds: [{ id: IMEI, kind: 'imei' }],
      smsMessage: 'reboot',
      dataEncoding: '7-bit',
    },
  },
  'requests.status': {
    input: { accountName: ACC, requestId: UUID36 },
    path: `/api/m2m/v1/accounts/${ACC}/requests/${UUID36}/status`,
  },
  'managedAccounts.provision': {
    input: { accountName: ACC2, paccountName: ACC, serviceName: 'Location', type: SKU, txid: UUID36 },
    path: '/api/subsc/v1/managedaccounts/actions/provision',
    body: { accountName: ACC2, paccountName: ACC, serviceName: 'Location', type: SKU, txid: UUID36 },
  },
  'managedAccounts.cancel': {
    input: { accountName: ACC2, paccountName: ACC, serviceName: 'Location', type: SKU, txid: UUID },
    path: '/api/subsc/v1/managedaccounts/actions/cancel',
    body: { accountName: ACC2, paccountName: ACC, serviceName: 'Location', type: SKU, txid: UUID },
  },
  // The service defaults to Location.
  'managedAccounts.list': {
    input: { accountName: ACC },
    path: `/api/subsc/v1/managedaccounts/${ACC}/service/Location`,
  },
  'accounts.get': { input: { accountName: ACC }, path: `/api/m2m/v1/accounts/${ACC}` },
  'accounts.statesAndServices': {
    input: { accountName: ACC },
    path: `/api/m2m/v1/accounts/${ACC}/statesandservices`,
  },
  'plans.list': { input: { accountName: ACC }, path: `/api/m2m/v1/plans/${ACC}` },
  'location.subscription': { input: { accountName: ACC }, path: `/api/loc/v1/subscriptions/${ACC}` },
  'location.usage': {
    input: { accountName: ACC, startDate: '04-01-2026', endDate: '04-30-2026', usageForAllAccounts: true },
    path: '/api/loc/v1/usage',
    body: { accountName: ACC, startDate: '04-01-2026', endDate: '04-30-2026', usageForAllAccounts: true },
  },
  'groups.create': {
    // Kinds are sent lower case.
    input: {
      accountName: ACC,
      groupName: 'Cold chain',
      groupDescription: 'Refrigerated trailers',
      devicesToAdd: [{ id: IMEI, kind: 'IMEI' }],
    },
    path: '/api/m2m/v1/groups',
    body: {
      accountName: ACC,
      groupName: 'Cold chain',
      groupDescription: 'Refrigerated trailers',
      devicesToAdd: [{ id: IMEI, kind: 'imei' }],
    },
  },
  'groups.list': { input: { accountName: ACC }, path: `/api/m2m/v1/groups/${ACC}` },
  // A group name with characters that must be percent-encoded; `next` goes in the query string.
  'groups.get': {
    input: { accountName: ACC, groupName: 'Cold chain/ä', next: 100 },
    path: `/api/m2m/v1/groups/${ACC}/name/Cold%20chain%2F%C3%A4?next=100`,
  },
  'groups.update': {
    input: {
      accountName: ACC,
      groupName: 'Cold chain',
      newGroupName: 'Cold chain East',
      devicesToAdd: [{ id: IMEI, kind: 'imei' }],
      devicesToRemove: [{ id: IMEI2, kind: 'IMEI' }],
    },
    path: `/api/m2m/v1/groups/${ACC}/name/Cold%20chain`,
    body: {
      newGroupName: 'Cold chain East',
      devicesToAdd: [{ id: IMEI, kind: 'imei' }],
      devicesToRemove: [{ id: IMEI2, kind: 'imei' }],
    },
  },
  'groups.delete': {
    input: { accountName: ACC, groupName: 'Cold chain East' },
    path: `/api/m2m/v1/groups/${ACC}/name/Cold%20chain%20East`,
  },
  'devices.connectionHistory': {
    input: {
      deviceId: { id: IMEI, kind: 'IMEI' },
      earliest: '2026-01-01T00:00:00Z',
      latest: '2026-01-02T00:00:00Z',
    },
    path: '/api/m2m/v1/devices/connections/actions/listHistory',
    body: {
      deviceId: { id: IMEI, kind: 'imei' },
      earliest: '2026-01-01T00:00:00Z',
      latest: '2026-01-02T00:00:00Z',
    },
  },
  'devices.provisioningHistory': {
    input: {
      deviceId: { id: ICCID, kind: 'iccid' },
      earliest: '2025-01-01T00:00:00Z',
      latest: '2026-01-02T00:00:00Z',
    },
    path: '/api/m2m/v1/devices/history/actions/list',
    body: {
      deviceId: { id: ICCID, kind: 'iccid' },
      earliest: '2025-01-01T00:00:00Z',
      latest: '2026-01-02T00:00:00Z',
    },
  },
  'devices.suspensionStatus': {
    input: { accountName: ACC, filter: { groupName: 'North Fleet', servicePlan: '84777' } },
    path: '/api/m2m/v1/devices/suspension/status',
    body: { accountName: ACC, filter: { groupName: 'North Fleet', servicePlan: '84777' } },
  },
  'usage.aggregate': {
    input: { accountNumber: ACC, imei: [IMEI, IMEI2], startDate: '2026-01-01', endDate: '2026-01-31' },
    path: '/api/hyper-precise/v1/report/aggregate',
    body: { accountNumber: ACC, imei: [IMEI, IMEI2], startDate: '2026-01-01', endDate: '2026-01-31' },
  },
  'usage.aggregateAsync': {
    input: {
      deviceIds: [{ id: IMEI, kind: 'IMEI' }],
      startTime: '2026-01-01T00:00:00Z',
      endTime: '2026-01-31T00:00:00Z',
    },
    path: '/api/m2m/v1/devices/usage/actions/list/aggregate',
    body: {
      deviceIds: [{ id: IMEI, kind: 'imei' }],
      startTime: '2026-01-01T00:00:00Z',
      endTime: '2026-01-31T00:00:00Z',
    },
  },
  'sms.history': { input: { accountName: ACC }, path: `/api/m2m/v1/sms/${ACC}/history` },
  // A PUT with no field in its body: the body is `{}`.
  'sms.startCallbacks': {
    input: { accountName: ACC },
    path: `/api/m2m/v1/sms/${ACC}/startCallbacks`,
    body: {},
  },
};
