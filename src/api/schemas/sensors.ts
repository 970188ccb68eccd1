/** Sensor insights, profiles, rules and notification groups, under /dm/v1 (spec 2.6–2.12, 4.3). */
import Type from 'typebox';
import { AccountName, closed, DateTime, ID_PATTERNS, Uuid } from './common.js';

const digits = (pattern: string) => Type.Union([Type.String({ pattern }), Type.Integer({ minimum: 0 })]);

export const Filter = closed({
  $expand: Type.Optional(Type.String()),
  $limitnumber: Type.Optional(Type.Integer({ minimum: 1, description: 'Records per page. Default 100.' })),
  $nopagination: Type.Optional(
    Type.Boolean({ description: 'false requests pagination; true answers every record at once. Default false.' }),
  ),
  $page: Type.Optional(Type.String()),
  $pagenumber: Type.Optional(Type.Integer({ minimum: 1, description: 'The page to answer; the first is 1. Default 1.' })),
  $projection: Type.Optional(Type.Array(Type.String())),
  $selection: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});

/** `resourceidentifier` (2.7). The tilt-sensor form uses only `id`. */
export const ResourceIdentifier = closed(
  {
    id: Type.Optional(Uuid),
    deveui: Type.Optional(
      Type.String({ pattern: '^[0-9A-Fa-f]{16}$|^([0-9A-Fa-f]{2}[-:]){7}[0-9A-Fa-f]{2}$' }),
    ),
    deviceid: Type.Optional(Uuid),
    esn: Type.Optional(digits('^[0-9]+$')),
    iccid: Type.Optional(Type.String({ pattern: ID_PATTERNS.iccid })),
    imei: Type.Optional(digits(ID_PATTERNS.imei)),
    imsi: Type.Optional(digits('^[0-9]+$')),
    mac: Type.Optional(
      Type.String({ pattern: '^([0-9A-Fa-f]{2}-){5}[0-9A-Fa-f]{2}$|^([0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}$' }),
    ),
    manufacturer: Type.Optional(Type.String()),
    meid: Type.Optional(Type.String()),
    msisdn: Type.Optional(Type.String({ pattern: ID_PATTERNS.msisdn })),
    node_uuid: Type.Optional(Uuid),
    qrcode: Type.Optional(Type.String({ pattern: '^[0-9]+$' })),
    serial: Type.Optional(Type.String()),
  },
  { minProperties: 1 },
);

export const SensorQueryRequest = closed({
  accountname: AccountName,
  filter: Type.Optional(Filter),
  resourceidentifier: Type.Optional(ResourceIdentifier),
});

/**
 * `fields` of a device record (2.6) and of a configuration's action result (2.10): identifier details, and in
 * `deviceConfig` the configuration set, as the request's `configuration.deviceConfig` held it (`ble`) and the
 * tilt settings beside it. Open: the identifier details vary by device.
 */
const ConfigFields = Type.Object(
  {
    deviceConfig: Type.Optional(
      Type.Object(
        {
          ble: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
          HighPrecisionTiltConfig: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
        },
        {
          additionalProperties: true,
          description: 'The configuration set: `ble` (BLE form), `HighPrecisionTiltConfig` (tilt form).',
        },
      ),
    ),
  },
  { additionalProperties: true },
);

/** The device record (2.6). The service may answer one record or an array of them. */
export const SensorRecord = Type.Object({
  accountclientid: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  billingaccountid: Type.String(),
  chipset: Type.Optional(Type.String()),
  createdon: Type.Optional(DateTime),
  lastupdated: Type.Optional(DateTime),
  customdata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  description: Type.Optional(Type.String()),
  esn: Type.Optional(Type.Integer()),
  fields: Type.Optional(ConfigFields),
  foreignid: Type.Optional(Type.String()),
  hardwareversion: Type.Optional(Type.String()),
  iccid: Type.Optional(Type.String()),
  id: Type.String(),
  imei: Type.Optional(Type.Integer()),
  imsi: Type.Optional(Type.Integer()),
  licenses: Type.Optional(Type.Array(Type.Unknown())),
  mac: Type.Optional(Type.String()),
  manufacturer: Type.Optional(Type.String()),
  meid: Type.Optional(Type.String()),
  msisdn: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
  parentdeviceid: Type.Optional(Type.String()),
  productmodel: Type.Optional(Type.String()),
  providerid: Type.Optional(Type.String()),
  qrcode: Type.Optional(Type.String()),
  refid: Type.Optional(Type.String()),
  refidtype: Type.Optional(Type.String()),
  serial: Type.Optional(Type.String()),
  services: Type.Optional(Type.Array(Type.Unknown())),
  sku: Type.Optional(Type.String()),
  softwareversion: Type.Optional(Type.String()),
  state: Type.Optional(Type.String()),
  version: Type.Optional(Type.String()),
  versionid: Type.Optional(Type.String()),
});
export const SensorQueryResponse = Type.Union([SensorRecord, Type.Array(SensorRecord)]);

export const NetworkExperienceRequest = closed({ accountname: AccountName, filter: Type.Optional(Filter) });
export const NetworkExperienceRecord = Type.Object({
  billingaccountid: Type.String(),
  createdon: Type.Optional(DateTime),
  lastupdated: Type.Optional(DateTime),
  date: Type.Optional(DateTime),
  devicesbad: Type.Integer(),
  devicesfair: Type.Integer(),
  devicesgood: Type.Integer(),
  devicestotal: Type.Integer(),
  hours: Type.Optional(Type.Integer()),
  minutes: Type.Optional(Type.Integer()),
  foreignid: Type.Optional(Type.String()),
  id: Type.String(),
  version: Type.Optional(Type.String()),
  versionid: Type.Optional(Type.String()),
});
export const NetworkExperienceResponse = Type.Union([
  NetworkExperienceRecord,
  Type.Array(NetworkExperienceRecord),
]);

export const OnboardingStatusRequest = closed({
  accountname: AccountName,
  gatewayidentifier: closed({ deviceid: Uuid }),
  onboarding: closed({ sensoridentifiers: closed({ deveui: Type.String({ minLength: 1 }) }) }),
});
export const OnboardingStatusResponse = Type.Object({
  events: Type.Array(
    Type.Object({
      createdon: Type.Optional(DateTime),
      errmsg: Type.Optional(Type.String()),
      fields: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      state: Type.String({ enum: ['success', 'failed'] }),
      transactionid: Type.String(),
    }),
  ),
});

// ── configuration (2.10) ────────────────────────────────────────────────────────────────────────
const Ble = closed({
  dataMode: Type.Optional(Type.Integer()),
  manufacturerId: Type.Optional(Type.Integer()),
  maxNumScan: Type.Optional(Type.Integer({ minimum: 0 })),
  minSigStr: Type.Optional(Type.Integer({ description: 'dB' })),
  monitorPeriod: Type.Optional(Type.Integer({ minimum: 0 })),
  opMode: Type.Optional(Type.Integer()),
  reportOffset: Type.Optional(Type.Integer({ minimum: 0 })),
  reportPeriod: Type.Optional(Type.Integer({ minimum: 0 })),
  reportType: Type.Optional(Type.Integer()),
  scanDuration: Type.Optional(Type.Integer({ minimum: 0 })),
  moreManufId: Type.Optional(Type.Array(Type.Integer())),
});
const Tilt = closed({
  mode: Type.String({ enum: ['periodic', 'reportOnChange'] }),
  'periodic-reporting': Type.Optional(
    closed({
      unit: Type.String({ enum: ['hours', 'minutes'] }),
      hours: Type.Optional(Type.Integer({ minimum: 0 })),
      minutes: Type.Optional(Type.Integer({ minimum: 0 })),
    }),
  ),
  'hold-time': Type.Optional(
    Type.Integer({ minimum: 0, description: 'Hold time in milliseconds (the example spelling).' }),
  ),
  holdTime: Type.Optional(
    Type.Integer({ minimum: 0, description: 'Field-table spelling; sent as hold-time.' }),
  ),
  'angle-away': Type.Optional(Type.Integer({ minimum: 0, maximum: 180 })),
  'angle-toward': Type.Optional(Type.Integer({ minimum: 0, maximum: 180 })),
  tscore: Type.Optional(closed({ profileid: Uuid, profileversionid: Uuid })),
});
export const SetConfigurationRequest = closed(
  {
    accountname: Type.Optional(AccountName),
    accountName: Type.Optional(AccountName),
    configuration: Type.Object(
      {
        deviceConfig: Type.Optional(Type.Object({ ble: Type.Optional(Ble) })),
        HighPrecisionTiltConfig: Type.Optional(Tilt),
      },
      { minProperties: 1 },
    ),
    resourceidentifier: ResourceIdentifier,
  },
  {
    description: 'accountname (the field table) or accountName (the tilt example); sent as accountname.',
    allOf: [
      { anyOf: [{ required: ['accountname'] }, { required: ['accountName'] }] },
      { not: { required: ['accountname', 'accountName'] } },
    ],
  },
);
export const SetConfigurationResponse = Type.Object({
  actionresult: Type.Array(
    Type.Object({
      createdon: Type.Optional(DateTime),
      description: Type.Optional(Type.String()),
      deviceid: Type.Optional(Type.String()),
      errmsg: Type.Optional(Type.String()),
      fields: Type.Optional(ConfigFields),
      foreignid: Type.Optional(Type.String()),
      id: Type.Optional(Type.String()),
      lastupdated: Type.Optional(DateTime),
      state: Type.String({ enum: ['success', 'failed'] }),
      transactionid: Type.Optional(Type.String()),
      version: Type.Optional(Type.String()),
      versionid: Type.Optional(Type.String()),
    }),
  ),
});

// ── device profiles (2.9) ───────────────────────────────────────────────────────────────────────
const ProfileIn = closed({
  id: Type.Optional(Uuid),
  kind: Type.Optional(Type.String()),
  version: Type.Optional(Type.String()),
  modelid: Type.Optional(Uuid),
  name: Type.Optional(Type.String()),
  configuration: Type.Optional(
    closed({
      randomInt: Type.Optional(
        Type.Integer({ minimum: 0, description: 'Reporting interval in hours if an event is detected.' }),
      ),
      resportingInterval: Type.Optional(
        Type.Integer({
          minimum: 0,
          description: 'Default reporting interval in hours (the example spelling).',
        }),
      ),
      reportingInterval: Type.Optional(
        Type.Integer({ minimum: 0, description: 'Field-table spelling; sent as resportingInterval.' }),
      ),
    }),
  ),
});
export const UpdateProfilesRequest = closed({
  accountname: AccountName,
  profiles: Type.Union([Type.Array(ProfileIn, { minItems: 1 }), ProfileIn], {
    description:
      'An array of profiles (the example), or one profile object (the field table); sent as an array.',
  }),
});
export const Profile = Type.Object({
  id: Type.String(),
  kind: Type.Optional(Type.String()),
  version: Type.Optional(Type.String()),
  versionid: Type.Optional(Type.String()),
  modelid: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
  configuration: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  createdon: Type.Optional(DateTime),
  lastupdated: Type.Optional(DateTime),
  foreignid: Type.Optional(Type.String()),
  billingaccountid: Type.Optional(Type.String()),
});
export const UpdateProfilesResponse = Type.Array(Profile);

// ── rules (2.11) ────────────────────────────────────────────────────────────────────────────────
export const Rule = Type.Object({
  accountclientid: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  billingaccountid: Type.Optional(Type.String()),
  createdon: Type.Optional(DateTime),
  lastupdated: Type.Optional(DateTime),
  description: Type.Optional(Type.String()),
  deviceid: Type.Optional(Type.String()),
  disabled: Type.Optional(Type.Boolean()),
  foreignid: Type.Optional(Type.String()),
  id: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
  rulechain: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  rulesyntax: Type.Optional(Type.String()),
  version: Type.Optional(Type.String()),
  versionid: Type.Optional(Type.String()),
});
export const OverwriteRuleRequest = closed({
  accountname: AccountName,
  resourceidentifier: closed({ id: Uuid }),
  rule: closed({
    name: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    deviceid: Type.Optional(Uuid),
    disabled: Type.Optional(Type.Boolean()),
    rulechain: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    rulesyntax: Type.Optional(Type.String({ description: 'camel and json styles are supported.' })),
    version: Type.Optional(Type.String()),
  }),
});

export const RemoveUsersRequest = closed({
  accountname: AccountName,
  id: Type.String({ minLength: 1, description: 'The notification group.' }),
  userids: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, uniqueItems: true }),
});
/** Status 200 with no body. */
export const NoBody = Type.Null();
