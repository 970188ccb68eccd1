/**
 * What changes about devices: state, service plan, usage, and the devices that activation adds. Seed devices
 * keep their mutable fields in typed arrays indexed by device number; identity and the rest come from the
 * World. Devices added by `devices.activate` get numbers from `world.total` up and live in `extras`.
 *
 * Usage is exact and lazy: a device uses `rate` bytes per millisecond while active. Its history is a short
 * list of breakpoints (time, bytes so far, active after), materialised only for devices whose state changed
 * after the seed; for all others it follows from the seed. So usage over any interval is O(1) to read.
 */
import { type DeviceIdPair, type World } from './seed.js';
import { DEFAULT_GROUP, NON_IOT, type DeviceType } from './seed-tables.js';

export const STATES = ['pending', 'active', 'suspend', 'deactive'] as const;
export type DeviceState = (typeof STATES)[number];
export const PENDING = 0;
export const ACTIVE = 1;
export const SUSPENDED = 2;
export const DEACTIVE = 3;

interface Breakpoint {
  t: number;
  cum: number;
  active: boolean;
}

/** A change of state or plan made after the seed, at simulated time `t`: what the device was left in. */
export interface Change {
  t: number;
  state: number;
  plan: string;
}

interface Extra {
  account: number;
  ids: DeviceIdPair[];
  type: DeviceType;
  created: number;
}

export class DeviceStore {
  readonly world: World;
  private state: Uint8Array;
  private plan: Uint8Array;
  private readonly planSince = new Map<number, number>();
  private readonly history = new Map<number, Breakpoint[]>();
  private readonly extras: Extra[] = [];
  private readonly extraIndex = new Map<string, number>();
  /** Per account, the extra device numbers, sorted by their first identifier. */
  private readonly extrasByAccount: number[][];
  /** Each sensor's `deviceConfig` as set through the dm API, by device number (BLE sensors: -1 - x). */
  readonly configurations = new Map<number, Record<string, unknown>>();
  /** Device groups set through the API; every other device is in its seeded group. */
  private readonly groups = new Map<number, string>();
  /** Changes of state and plan after the seed, in time order, for the devices that had any. */
  private readonly changeLog = new Map<number, Change[]>();

  constructor(world: World) {
    this.world = world;
    const n = world.total;
    this.state = new Uint8Array(n);
    this.plan = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      this.state[i] = world.initialState(i);
      this.plan[i] = world.initialPlan(i);
    }
    this.extrasByAccount = world.accounts.map(() => []);
  }

  /** Number of devices, seed and added. */
  get size(): number {
    return this.world.total + this.extras.length;
  }

  private extra(n: number): Extra {
    return this.extras[n - this.world.total] as Extra;
  }

  private grow(): void {
    const cap = this.world.total + this.extras.length + 1;
    if (cap <= this.state.length) return;
    const size = Math.max(cap, Math.ceil(this.state.length * 1.5) + 16);
    const s = new Uint8Array(size);
    s.set(this.state);
    const p = new Uint8Array(size);
    p.set(this.plan);
    this.state = s;
    this.plan = p;
  }

  // ── lookup ────────────────────────────────────────────────────────────────────────────────────

  /** The device an identifier names, or -1. Kinds are matched case-insensitively. */
  find(kind: string, id: string): number {
    const k = kind.toLowerCase();
    const n = this.world.decode(k, id);
    if (n >= 0) return n;
    return this.extraIndex.get(`${k}:${k === 'meid' || k === 'esn' ? id.toUpperCase() : id}`) ?? -1;
  }

  account(n: number): number {
    return n < this.world.total ? this.world.accountOf(n) : this.extra(n).account;
  }

  deviceIds(n: number): DeviceIdPair[] {
    return n < this.world.total ? this.world.deviceIds(n) : this.extra(n).ids;
  }

  idOf(n: number, kind: string): string | undefined {
    if (n < this.world.total) return this.world.idOf(n, kind);
    return this.extra(n).ids.find((d) => d.kind === kind)?.id;
  }

  /** The first identifier: the key of the device's mutation list and of devices.list order. */
  primaryId(n: number): string {
    return n < this.world.total ? this.world.imei(n) : (this.extra(n).ids[0] as DeviceIdPair).id;
  }

  type(n: number): DeviceType {
    return n < this.world.total ? this.world.type(n) : this.extra(n).type;
  }

  iot(n: number): boolean {
    return !NON_IOT.has(this.type(n));
  }

  created(n: number): number {
    return n < this.world.total ? this.world.created(n) : this.extra(n).created;
  }

  stateOf(n: number): DeviceState {
    return STATES[this.state[n] as number] as DeviceState;
  }

  stateCode(n: number): number {
    return this.state[n] as number;
  }

  planOf(n: number): string {
    return this.world.plans[this.plan[n] as number]!.code;
  }

  planSinceOf(n: number): number {
    return this.planSince.get(n) ?? this.created(n);
  }

  rate(n: number): number {
    // An added device has no seeded profile; it uses data like a mid-range tracker.
    return n < this.world.total ? this.world.rate(n) : 10_000_000 / 86_400_000;
  }

  hasCachedLocation(n: number): boolean {
    // Added devices have not reported yet.
    return n < this.world.total ? this.world.hasCachedLocation(n) : false;
  }

  // ── change ────────────────────────────────────────────────────────────────────────────────────

  setState(n: number, state: number, at: number): void {
    const bps = this.breakpoints(n);
    const cum = this.cumulative(n, at);
    bps.push({ t: at, cum, active: state === ACTIVE });
    this.history.set(n, bps);
    this.state[n] = state;
    this.logChange(n, at);
  }

  setPlan(n: number, code: string, at: number): boolean {
    const i = this.world.plans.findIndex((p) => p.code === code);
    if (i < 0) return false;
    const changed = this.plan[n] !== i;
    if (changed) this.planSince.set(n, at);
    this.plan[n] = i;
    if (changed) this.logChange(n, at);
    return true;
  }

  /**
   * Records what the device is left in at `at`. A plan set at the instant of a state change (activation with a
   * plan) belongs to that change.
   */
  private logChange(n: number, at: number): void {
    let log = this.changeLog.get(n);
    if (!log) this.changeLog.set(n, (log = []));
    const last = log[log.length - 1];
    const now = { t: at, state: this.state[n] as number, plan: this.planOf(n) };
    if (last?.t === at && last.state === now.state) log[log.length - 1] = now;
    else log.push(now);
  }

  /** The changes of state and plan made after the seed (provisioning history). */
  changes(n: number): readonly Change[] {
    return this.changeLog.get(n) ?? [];
  }

  /** The device group: one set through the API, else the seeded one (devices added by activation: the default). */
  group(n: number): string {
    return this.groups.get(n) ?? (n < this.world.total ? this.world.group(n) : DEFAULT_GROUP);
  }

  setGroup(n: number, name: string): void {
    this.groups.set(n, name);
  }

  /** Adds a device that activation brought into the account; returns its number. */
  add(account: number, ids: DeviceIdPair[], at: number, mdn: string): number {
    this.grow();
    const n = this.world.total + this.extras.length;
    const all = ids.map((d) => ({
      id: d.kind === 'meid' || d.kind === 'esn' ? d.id.toUpperCase() : d.id,
      kind: d.kind.toLowerCase(),
    }));
    if (!all.some((d) => d.kind === 'mdn'))
      all.push({ id: mdn, kind: 'mdn' }, { id: `1${mdn}`, kind: 'msisdn' });
    this.extras.push({ account, ids: all, type: 'tracker', created: at });
    for (const d of all) this.extraIndex.set(`${d.kind}:${d.id}`, n);
    this.state[n] = PENDING;
    this.plan[n] = 0;
    this.history.set(n, [{ t: at, cum: 0, active: false }]);
    const list = this.extrasByAccount[account] as number[];
    const key = this.primaryId(n);
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.primaryId(list[mid] as number) < key) lo = mid + 1;
      else hi = mid;
    }
    list.splice(lo, 0, n);
    return n;
  }

  // ── usage ─────────────────────────────────────────────────────────────────────────────────────

  private breakpoints(n: number): Breakpoint[] {
    const known = this.history.get(n);
    if (known) return known;
    const w = this.world;
    const created = w.created(n);
    const initial = w.initialState(n);
    if (initial === ACTIVE) return [{ t: created, cum: 0, active: true }];
    if (initial === PENDING) return [{ t: created, cum: 0, active: false }];
    const since = w.stateSince(n);
    return [
      { t: created, cum: 0, active: true },
      { t: since, cum: w.rate(n) * (since - created), active: false },
    ];
  }

  /** Bytes used from the device's creation up to `t`. */
  cumulative(n: number, t: number): number {
    const known = this.history.get(n);
    if (!known && n < this.world.total && this.world.initialState(n) === ACTIVE) {
      const created = this.world.created(n);
      return t <= created ? 0 : this.world.rate(n) * (t - created);
    }
    const bps = known ?? this.breakpoints(n);
    let b: Breakpoint | undefined;
    for (const bp of bps) {
      if (bp.t > t) break;
      b = bp;
    }
    if (!b) return 0;
    return b.cum + (b.active ? this.rate(n) * (t - b.t) : 0);
  }

  /** Whether the device was active (in service, using data) at `t`. */
  activeAt(n: number, t: number): boolean {
    let active = false;
    for (const bp of this.history.get(n) ?? this.breakpoints(n)) {
      if (bp.t > t) break;
      active = bp.active;
    }
    return active;
  }

  /** Bytes used in [from, to). */
  usage(n: number, from: number, to: number): number {
    return Math.max(0, this.cumulative(n, to) - this.cumulative(n, from));
  }

  /**
   * Whole bytes used in [from, to), as the API reports them: the rounded running total at `to` less the one at
   * `from`, so that the bytes of adjacent periods (the days of a usage history) add up to those of the whole.
   */
  bytes(n: number, from: number, to: number): number {
    return Math.max(0, Math.round(this.cumulative(n, to)) - Math.round(this.cumulative(n, from)));
  }

  // ── listing ───────────────────────────────────────────────────────────────────────────────────

  /** Device numbers of an account in devices.list order: by first identifier, ascending. */
  *inOrder(account: number, after = ''): Generator<number> {
    const w = this.world;
    const dpa = w.devicesPerAccount;
    const first = account * dpa;
    // IMEIs grow with n: a binary search finds the first seed device after `after`.
    let lo = first;
    let hi = first + dpa;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (w.imei(mid) <= after) lo = mid + 1;
      else hi = mid;
    }
    let s = lo;
    const extras = (this.extrasByAccount[account] ?? []).filter((n) => this.primaryId(n) > after);
    let e = 0;
    while (s < first + dpa || e < extras.length) {
      const se = s < first + dpa ? w.imei(s) : undefined;
      const xn = extras[e];
      const xe = xn !== undefined ? this.primaryId(xn) : undefined;
      if (se !== undefined && (xe === undefined || se < xe)) yield s++;
      else {
        e++;
        yield xn as number;
      }
    }
  }

  /** Number of devices in an account. */
  countIn(account: number): number {
    return this.world.devicesPerAccount + (this.extrasByAccount[account]?.length ?? 0);
  }
}
