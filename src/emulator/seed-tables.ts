/**
 * The fixed tables every seeded world draws from (seed.ts): device types and their models and data use, the
 * device groups, the default OAuth client and users, the location SKU; and the shapes of a world's accounts,
 * users and plans.
 */

export const DEVICE_TYPES = ['tracker', 'sensor', 'gateway', 'meter', 'router', 'phone', 'tablet'] as const;
export type DeviceType = (typeof DEVICE_TYPES)[number];
/** Phones and tablets are not IoT: location requests for them fail the device type check. */
export const NON_IOT: ReadonlySet<DeviceType> = new Set(['phone', 'tablet']);

/** Cumulative shares of each device type. */
export const TYPE_SHARES: [DeviceType, number][] = [
  ['tracker', 0.34],
  ['sensor', 0.54],
  ['gateway', 0.64],
  ['meter', 0.78],
  ['router', 0.95],
  ['phone', 0.98],
  ['tablet', 1],
];

export const MODELS: Record<DeviceType, [manufacturer: string, model: string, chipset: string][]> = {
  tracker: [
    ['Quectel', 'AT-200 Asset Tracker', 'BG95-M3'],
    ['Sierra Wireless', 'LX40 Tracker', 'WP7702'],
  ],
  sensor: [
    ['Telit', 'TiltSense HP', 'ME310G1'],
    ['Nordic', 'EnviroSense LTE-M', 'nRF9160'],
  ],
  gateway: [
    ['Cradlepoint', 'IBR900 BLE Gateway', 'MC7455'],
    ['Digi', 'IX20 Gateway', 'LE910C4'],
  ],
  meter: [
    ['Itron', 'Riva Cellular Meter', 'BG96'],
    ['Landis+Gyr', 'E360 LTE-M', 'SARA-R410M'],
  ],
  router: [
    ['Inseego', 'FX3100 5G Router', 'SDX55'],
    ['Netgear', 'LM1200 LTE Modem', 'MDM9207'],
  ],
  phone: [
    ['Samsung', 'Galaxy XCover6 Pro', 'SM7325'],
    ['Apple', 'iPhone 15', 'A16'],
  ],
  tablet: [
    ['Apple', 'iPad 10th gen', 'A14'],
    ['Samsung', 'Galaxy Tab Active4 Pro', 'SM7325'],
  ],
};

/** Typical daily data use of each type, in MB: [low, high]. */
export const DAILY_MB: Record<DeviceType, [number, number]> = {
  tracker: [2, 20],
  sensor: [0.1, 2],
  gateway: [20, 200],
  meter: [0.05, 1],
  router: [5_000, 40_000],
  phone: [500, 4_000],
  tablet: [200, 2_000],
};

export const GROUPS = ['North Fleet', 'South Fleet', 'Depot Sensors', 'Field Service'] as const;
/** The group every account has, which devices join when their group is deleted or they leave one. */
export const DEFAULT_GROUP = 'Default';
/** The seeded groups of every account, default group first, with their descriptions. */
export const SEEDED_GROUPS: readonly { name: string; description: string }[] = [
  { name: DEFAULT_GROUP, description: 'Devices in no other group' },
  ...GROUPS.map((name) => ({
    name,
    description: {
      'North Fleet': 'Trucks and trackers of the northern region',
      'South Fleet': 'Trucks and trackers of the southern region',
      'Depot Sensors': 'Fixed sensors and gateways at the depots',
      'Field Service': 'Devices of the field service teams',
    }[name],
  })),
];

export interface Plan {
  code: string;
  name: string;
  /** Data included per device per billing cycle, in bytes. */
  allowanceBytes: number;
  /** What kind of device the plan is sold for. */
  family: 'iot' | 'fwa' | 'phone';
}

export interface AccountInfo {
  index: number;
  name: string;
  /** The primary account of the profile: it manages the others for location. */
  primary: boolean;
  /** On the primary account's managed list (or is the primary itself). */
  managed: boolean;
  /** Provisioned for the location service. */
  locationRegistered: boolean;
  /** Day of the month the billing cycle starts, 1–28. */
  billCycleDay: number;
  /** Location transactions included per billing cycle. */
  locationSubscription: number;
}

export interface UserInfo {
  username: string;
  password: string;
  /** Account names the user may act on. */
  accounts: string[];
  /** A user of the primary account: may manage usage triggers and managed accounts. */
  primary: boolean;
}

export interface OAuthClient {
  clientId: string;
  clientSecret: string;
  scope: string;
}

/** Default credentials: fixed, so that docs/emulator.md can list them; the seed shapes accounts and devices only. */
export const DEFAULT_CLIENT: OAuthClient = {
  clientId: 'fleetbook-emulator',
  clientSecret: 'fleetbook-emulator-secret',
  scope: 'discovery:read serviceprofile:read serviceprofile:write',
};
export const DEFAULT_USERS = [
  { username: 'admin', password: 'admin-password' },
  { username: 'operator', password: 'operator-password' },
  { username: 'field', password: 'field-password' },
] as const;

/** The location SKU the primary account bought (public-api-facts.md example). */
export const LOCATION_SKU = 'TS-LOC-COARSE-CellID-Aggr';

/** A mebibyte, the unit of plan allowances and data use. */
export const MB = 1024 * 1024;
