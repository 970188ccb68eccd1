/**
 * The seeded world: the customer profile, its accounts, users, OAuth clients, service plans, and devices.
 *
 * Devices are not stored. Device `n` (0 ≤ n < total, account `floor(n / devicesPerAccount)`) has identifiers
 * that are an arithmetic function of `n` and a few seeded bases, and every other property is `hash(seed, n)`.
 * Each identifier can be decoded back to `n`, so a lookup by IMEI, ICCID, MDN, MEID, ESN, MSISDN or IMSI is
 * O(1) with no index, and a reset with 100,000 devices allocates a few typed arrays (devices.ts) and nothing
 * else. IMEIs grow with `n`, so an account's devices are already in the order devices.list pages in.
 */
import { Random, codedUuid, decodeUuid, hash32, luhnDigit, luhnValid, seedHash, unit } from './random.js';
import { DAY_MS } from './sim-clock.js';
import {
  DAILY_MB,
  DEFAULT_CLIENT,
  DEFAULT_USERS,
  GROUPS,
  MB,
  MODELS,
  NON_IOT,
  TYPE_SHARES,
  type AccountInfo,
  type DeviceType,
  type OAuthClient,
  type Plan,
  type UserInfo,
} from './seed-tables.js';

/** Salts, one per derived property, so that properties of one device are independent. */
const Salt = {
  Type: 1,
  Model: 2,
  State: 3,
  StateSince: 4,
  Created: 5,
  Plan: 6,
  Cache: 7,
  Lat: 8,
  Lon: 9,
  Radius: 10,
  CacheAge: 11,
  Usage: 12,
  Heavy: 13,
  Group: 14,
  Network: 15,
  Sms: 16,
} as const;

/** A seed device was made 30 to 400 days before the world starts (limits.ts keeps its start late enough). */
export const DEVICE_AGE_DAYS = [30, 400] as const;

/** The options of a world, checked (limits.ts) before it is made. */
export interface WorldOptions {
  seed: number | string;
  accounts: number;
  devicesPerAccount: number;
  /** Simulated time at which the world starts. */
  start: number;
}

export interface DeviceIdPair {
  id: string;
  kind: string;
}

export class World {
  readonly seed: number | string;
  readonly h: number;
  readonly start: number;
  readonly devicesPerAccount: number;
  /** Number of seed devices. */
  readonly total: number;
  readonly accounts: AccountInfo[];
  readonly accountIndex: Map<string, number>;
  readonly users: UserInfo[];
  readonly clients: OAuthClient[];
  readonly plans: Plan[];
  readonly profile: { ecpdId: string; organizationName: string; foreignId: string };
  /** The rate plan groups that account-group-share triggers refer to. */
  readonly ratePlanGroups: { id: number; planCodes: string[] }[];

  private readonly imeiBase: number;
  private readonly imeiStride: number;
  private readonly iccidBase: number;
  private readonly iccidStride: number;
  private readonly mdnBase: number;
  private readonly mdnStride: number;
  private readonly imsiBase: number;
  private readonly esnA: number;
  private readonly esnB: number;
  private readonly esnInv: number;

  constructor(o: WorldOptions) {
    this.seed = o.seed;
    this.h = seedHash(o.seed);
    this.start = o.start;
    this.devicesPerAccount = o.devicesPerAccount;
    this.total = o.accounts * o.devicesPerAccount;
    const r = new Random(this.h);

    // Identifier bases: a TAC under reporting body 35, a Verizon-style ICCID issuer, real-looking area codes.
    this.imeiBase = Number(`35${r.digits(6)}`) * 1_000_000 + r.int(0, 99_999);
    this.imeiStride = r.int(1, 7);
    this.iccidBase = r.int(100_000_000, 3_999_999_999) * 1000;
    this.iccidStride = r.int(1, 5);
    const npa = r.pick([201, 212, 303, 312, 415, 512, 617, 702, 808, 919]);
    this.mdnBase = npa * 10_000_000 + r.int(200, 899) * 10_000;
    this.mdnStride = r.int(1, 3);
    this.imsiBase = r.int(0, 99_999_999);
    this.esnA = (r.int(0, 0x7fffff) * 2 + 1) % 0x1000000;
    this.esnB = r.int(0, 0xffffff);
    this.esnInv = inverseMod24(this.esnA);

    // The default world (seed 1) uses the account names of the docs and example playbooks, so that they run
    // against it as written; every other seed draws its own.
    const drawn = `0${r.digits(9)}`;
    const base = o.seed === 1 || o.seed === '1' ? '0000123456' : drawn;
    this.accounts = [];
    this.accountIndex = new Map();
    for (let i = 0; i < o.accounts; i++) {
      const name = `${base}-${String(i + 1).padStart(5, '0')}`;
      // The last account of three or more is outside the primary's managed list and not registered for
      // location, so that "Unregistered account" and adding a managed account can happen.
      const outside = o.accounts >= 3 && i === o.accounts - 1;
      this.accounts.push({
        index: i,
        name,
        primary: i === 0,
        managed: !outside,
        locationRegistered: !outside,
        billCycleDay: r.int(1, 28),
        locationSubscription: Math.max(100, o.devicesPerAccount * 30),
      });
      this.accountIndex.set(name, i);
    }
    const names = this.accounts.map((a) => a.name);
    const [admin, operator, field] = DEFAULT_USERS;
    this.users = [
      { ...admin, accounts: names, primary: true },
      { ...operator, accounts: names.length > 1 ? names.slice(1) : names, primary: false },
      { ...field, accounts: [names[names.length > 1 ? 1 : 0] as string], primary: false },
    ];
    this.clients = [DEFAULT_CLIENT];

    const planBase = r.int(70_000, 89_000);
    this.plans = [
      { code: String(planBase), name: 'IoT 25MB', allowanceBytes: 25 * MB, family: 'iot' },
      { code: String(planBase + 1), name: 'IoT Shared 1GB', allowanceBytes: 1024 * MB, family: 'iot' },
      { code: String(planBase + 2), name: 'IoT 5GB', allowanceBytes: 5 * 1024 * MB, family: 'iot' },
      {
        code: String(planBase + 3),
        name: 'Fixed Wireless Unlimited',
        allowanceBytes: 300 * 1024 * MB,
        family: 'fwa',
      },
      {
        code: String(planBase + 4),
        name: 'Smartphone Unlimited',
        allowanceBytes: 100 * 1024 * MB,
        family: 'phone',
      },
    ];
    const orgs = ['Acme Logistics', 'Northwind Utilities', 'Contoso Fleet Services', 'Globex Field Ops'];
    this.profile = {
      ecpdId: String(r.int(1_000_000, 9_999_999)),
      organizationName: r.pick(orgs),
      foreignId: codedUuid(this.h, 6, 0),
    };
    this.ratePlanGroups = [
      { id: r.int(10_000, 99_999), planCodes: [this.plans[1]!.code, this.plans[2]!.code] },
      { id: r.int(10_000, 99_999), planCodes: [this.plans[0]!.code] },
    ];
  }

  account(name: string): AccountInfo | undefined {
    const i = this.accountIndex.get(name);
    return i === undefined ? undefined : this.accounts[i];
  }

  user(username: string): UserInfo | undefined {
    return this.users.find((u) => u.username === username);
  }

  plan(code: string): Plan | undefined {
    return this.plans.find((p) => p.code === code);
  }

  // ── identifiers of seed device n ──────────────────────────────────────────────────────────────

  imei(n: number): string {
    const body = String(this.imeiBase + n * this.imeiStride).padStart(14, '0');
    return body + String(luhnDigit(body));
  }

  /** The MEID of an LTE device is its IMEI without the check digit (hex form, 14 characters). */
  meid(n: number): string {
    return this.imei(n).slice(0, 14);
  }

  /** A pseudo-ESN: manufacturer code 0x80 and 24 bits, an invertible permutation of `n`. */
  esn(n: number): string {
    const x = (this.esnA * n + this.esnB) % 0x1000000;
    return `80${x.toString(16).toUpperCase().padStart(6, '0')}`;
  }

  iccid(n: number): string {
    const body = `891480${String(this.iccidBase + n * this.iccidStride).padStart(13, '0')}`;
    return body + String(luhnDigit(body));
  }

  mdn(n: number): string {
    return String(this.mdnBase + n * this.mdnStride);
  }

  msisdn(n: number): string {
    return `1${this.mdn(n)}`;
  }

  imsi(n: number): string {
    return `311480${String(this.imsiBase + n).padStart(9, '0')}`;
  }

  /** Every identifier of a seed device, IMEI first (devices.list pages by the first). */
  deviceIds(n: number): DeviceIdPair[] {
    return [
      { id: this.imei(n), kind: 'imei' },
      { id: this.iccid(n), kind: 'iccid' },
      { id: this.mdn(n), kind: 'mdn' },
      { id: this.msisdn(n), kind: 'msisdn' },
      { id: this.meid(n), kind: 'meid' },
      { id: this.esn(n), kind: 'esn' },
      { id: this.imsi(n), kind: 'imsi' },
    ];
  }

  idOf(n: number, kind: string): string | undefined {
    switch (kind) {
      case 'imei':
        return this.imei(n);
      case 'iccid':
        return this.iccid(n);
      case 'mdn':
        return this.mdn(n);
      case 'msisdn':
        return this.msisdn(n);
      case 'meid':
        return this.meid(n);
      case 'esn':
        return this.esn(n);
      case 'imsi':
        return this.imsi(n);
      default:
        return undefined;
    }
  }

  /** The seed device an identifier names, or -1. `kind` is lower case. */
  decode(kind: string, id: string): number {
    switch (kind) {
      case 'imei':
        return /^[0-9]{15}$/.test(id) && luhnValid(id)
          ? this.arith(Number(id.slice(0, 14)), this.imeiBase, this.imeiStride)
          : -1;
      case 'meid': {
        const hex14 = meidHex(id);
        return hex14 && /^[0-9]{14}$/.test(hex14)
          ? this.arith(Number(hex14), this.imeiBase, this.imeiStride)
          : -1;
      }
      case 'esn': {
        const x = esnValue(id);
        if (x === undefined) return -1;
        const n = (this.esnInv * ((x - this.esnB + 0x1000000) % 0x1000000)) % 0x1000000;
        return n < this.total ? n : -1;
      }
      case 'iccid':
        return /^891480[0-9]{14}$/.test(id) && luhnValid(id)
          ? this.arith(Number(id.slice(6, 19)), this.iccidBase, this.iccidStride)
          : -1;
      case 'mdn':
        return /^[0-9]{10}$/.test(id) ? this.arith(Number(id), this.mdnBase, this.mdnStride) : -1;
      case 'msisdn':
        return /^1[0-9]{10}$/.test(id)
          ? this.arith(Number(id.slice(1)), this.mdnBase, this.mdnStride)
          : /^[0-9]{10}$/.test(id)
            ? this.arith(Number(id), this.mdnBase, this.mdnStride)
            : -1;
      case 'imsi':
        return /^311480[0-9]{9}$/.test(id) ? this.arith(Number(id.slice(6)), this.imsiBase, 1) : -1;
      default:
        return -1;
    }
  }

  private arith(v: number, base: number, stride: number): number {
    const d = v - base;
    if (d < 0 || d % stride !== 0) return -1;
    const n = d / stride;
    return n < this.total ? n : -1;
  }

  // ── properties of seed device n ───────────────────────────────────────────────────────────────

  accountOf(n: number): number {
    return Math.floor(n / this.devicesPerAccount);
  }

  type(n: number): DeviceType {
    const u = unit(this.h, n, Salt.Type);
    for (const [t, share] of TYPE_SHARES) if (u < share) return t;
    return 'tracker';
  }

  model(n: number): { manufacturer: string; model: string; chipset: string } {
    const list = MODELS[this.type(n)];
    const [manufacturer, model, chipset] = list[hash32(this.h, n, Salt.Model) % list.length]!;
    return { manufacturer, model, chipset };
  }

  created(n: number): number {
    const [least, most] = DEVICE_AGE_DAYS;
    return this.start - Math.floor((least + unit(this.h, n, Salt.Created) * (most - least)) * DAY_MS);
  }

  /** 0 pending, 1 active, 2 suspend, 3 deactive (devices.ts STATES). */
  initialState(n: number): number {
    const u = unit(this.h, n, Salt.State);
    return u < 0.93 ? 1 : u < 0.95 ? 0 : u < 0.98 ? 2 : 3;
  }

  /** When a device that starts suspended or deactivated left the active state. */
  stateSince(n: number): number {
    const c = this.created(n);
    return c + Math.floor(unit(this.h, n, Salt.StateSince) * (this.start - c));
  }

  /** Index into `plans`. */
  initialPlan(n: number): number {
    const t = this.type(n);
    if (t === 'router') return 3;
    if (NON_IOT.has(t)) return 4;
    if (t === 'gateway') return 2;
    return unit(this.h, n, Salt.Plan) < 0.5 ? 0 : 1;
  }

  /** A few IoT devices have never reported a location: SVC CACHE UNAVAILABLE at cacheMode 0. */
  hasCachedLocation(n: number): boolean {
    return unit(this.h, n, Salt.Cache) >= 0.015;
  }

  /** Bytes per millisecond while active: by type, with a few heavy users among IoT devices. */
  rate(n: number): number {
    const t = this.type(n);
    const [lo, hi] = DAILY_MB[t];
    let mb = lo + unit(this.h, n, Salt.Usage) * (hi - lo);
    if (!NON_IOT.has(t) && t !== 'router' && unit(this.h, n, Salt.Heavy) < 0.03) mb *= 60;
    return (mb * MB) / DAY_MS;
  }

  /** SMS sent on one simulated day. */
  smsOnDay(n: number, day: number): number {
    return hash32(this.h, n, Salt.Sms, day) % 4;
  }

  /** Where a device usually is: somewhere in the contiguous United States. */
  home(n: number): { lat: number; lon: number; radius: number } {
    return {
      lat: 25 + unit(this.h, n, Salt.Lat) * 23,
      lon: -124 + unit(this.h, n, Salt.Lon) * 54,
      radius: 50 + Math.floor(unit(this.h, n, Salt.Radius) * 1950),
    };
  }

  /** Age of a cached fix, in ms: up to three hours. */
  cacheAge(n: number, salt: number): number {
    return Math.floor(unit(this.h, n, Salt.CacheAge, salt) * 3 * 3_600_000);
  }

  group(n: number): string {
    return GROUPS[hash32(this.h, n, Salt.Group) % GROUPS.length]!;
  }

  /** Network experience of a device on a day: 0 good, 1 fair, 2 bad. */
  network(n: number, day: number): number {
    const u = unit(this.h, n, Salt.Network, day);
    return u < 0.82 ? 0 : u < 0.95 ? 1 : 2;
  }

  // ── sensor-management identities (dm area) ────────────────────────────────────────────────────

  /** The resource UUID of a cellular device. */
  deviceUuid(n: number): string {
    return codedUuid(this.h, 1, n);
  }

  /** BLE sensors behind gateway `n`: two each. Sensor `x = 2n + j`. */
  bleSensors(n: number): number[] {
    return this.type(n) === 'gateway' ? [2 * n, 2 * n + 1] : [];
  }

  bleUuid(x: number): string {
    return codedUuid(this.h, 2, x);
  }

  /** EUI-64 of a BLE sensor: an OUI and 40 bits of `x`. */
  deveui(x: number): string {
    return `A84041${(x + 0x10000).toString(16).toUpperCase().padStart(10, '0')}`;
  }

  bleFromDeveui(deveui: string): number {
    const d = deveui.replace(/[-:]/g, '').toUpperCase();
    if (!/^A84041[0-9A-F]{10}$/.test(d)) return -1;
    const x = parseInt(d.slice(6), 16) - 0x10000;
    return x >= 0 && Math.floor(x / 2) < this.total && this.type(Math.floor(x / 2)) === 'gateway' ? x : -1;
  }

  bleMac(x: number): string {
    const v = (x + 0x100000).toString(16).toUpperCase().padStart(12, '0');
    return `F4:12:FA:${v.slice(6, 8)}:${v.slice(8, 10)}:${v.slice(10, 12)}`;
  }

  /** `(tag, x)` of a UUID made by this world, or undefined. */
  decodeUuid(uuid: string): { tag: number; x: number } | undefined {
    return decodeUuid(this.h, uuid);
  }

  uuid(tag: number, x: number): string {
    return codedUuid(this.h, tag, x);
  }
}

/** The 14-character hex form of an MEID given as 14 hex characters or 18 decimal digits. */
function meidHex(id: string): string | undefined {
  if (/^[0-9A-Fa-f]{14}$/.test(id)) return id.toUpperCase();
  if (/^[0-9]{18}$/.test(id)) {
    const hi = Number(id.slice(0, 10));
    const lo = Number(id.slice(10));
    if (hi > 0xffffffff || lo > 0xffffff) return undefined;
    return hi.toString(16).padStart(8, '0').toUpperCase() + lo.toString(16).padStart(6, '0').toUpperCase();
  }
  return undefined;
}

/** The 24-bit serial of a pseudo-ESN (manufacturer code 0x80) given as 8 hex characters or 11 digits. */
function esnValue(id: string): number | undefined {
  if (/^80[0-9A-Fa-f]{6}$/.test(id)) return parseInt(id.slice(2), 16);
  if (/^128[0-9]{8}$/.test(id)) {
    const v = Number(id.slice(3));
    return v <= 0xffffff ? v : undefined;
  }
  return undefined;
}

/** The inverse of an odd number modulo 2^24, by Newton's iteration (each step doubles the correct bits). */
function inverseMod24(a: number): number {
  const M = 0x1000000;
  let x = a;
  for (let i = 0; i < 5; i++) {
    const t = (a * x) % M;
    x = (x * ((2 - t + M) % M)) % M;
  }
  return x;
}
