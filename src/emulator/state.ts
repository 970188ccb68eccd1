/**
 * Everything the emulator remembers between requests, in one object that a reset replaces whole. What
 * survives a reset lives in `Core` instead: the OAuth tokens (clients keep them across a reset, and a bearer
 * token that vanished would be a permanent 401 to them), the callback dispatcher and the options.
 */
import type { Holds } from './holds.js';
import type { Logger } from '../log.js';
import type { CallbackDispatcher } from './callbacks.js';
import { DeviceStore } from './devices.js';
import { RateGate, defaultFaults, type Faults } from './faults.js';
import { Random } from './random.js';
import { RequestLog } from './requests.js';
import { World } from './seed.js';
import { LOCATION_SKU, type AccountInfo } from './seed-tables.js';
import { SimClock, iso } from './sim-clock.js';
import type { TokenStore } from './auth.js';

export interface Session {
  token: string;
  username: string;
  /** Simulated time of the last request made with the token. */
  lastUsed: number;
}

export interface Listener {
  accountName: string;
  serviceName: string;
  url: string;
  username?: string;
  password?: string;
  /** Which API registered it; each API lists the listeners registered through it. */
  via: 'm2m' | 'loc';
}

/** An account's exclusion list. Replaced, never changed in place, so that a report can keep a snapshot. */
export interface Exclusions {
  readonly allDevice: boolean;
  readonly list: readonly string[];
  readonly set: ReadonlySet<string>;
  readonly updateTime?: number;
}

export const NO_EXCLUSIONS: Exclusions = Object.freeze({
  allDevice: false,
  list: [],
  set: new Set<string>(),
});

export interface Report {
  txid: string;
  account: number;
  accountName: string;
  /** Device numbers, in request order. */
  devices: Int32Array;
  /** Index into LOCATION_KINDS of the identifier each device was named by (the msid echoes it). */
  kinds: Uint8Array;
  cacheMode: number;
  createdAt: number;
  /** Simulated ms from creation to completion; 0 for cacheMode 0. */
  durationMs: number;
  exclusions: Exclusions;
  deviceErrors: Record<string, number>;
  /** Each device's draw of per-device faults and fix time (EmulatorState.draw), in the report's order. */
  draws: Uint16Array;
}

export interface PricePlanTrigger {
  triggerId: string;
  triggerName: string;
  ecpdId: string;
  /** Only the devices of this device group (the real service's `deviceGroupName`). */
  deviceGroupName?: string;
  triggerCategory: string;
  pricePlanTrigger: Record<string, unknown>;
  notification: Record<string, unknown>;
  active: boolean;
  createdAt: number;
  modifiedAt: number;
  /** Activations already made, by `<kind>:<device or account>:<cycle start>`, with the cycle's start. */
  fired: Map<string, number>;
  /** Activations waiting for the daily summary. */
  summary: Record<string, unknown>[];
}

export interface UsageTrigger {
  triggerId: string;
  accountName: string;
  serviceName: string;
  triggerName: string;
  thresholdValue: string;
  allowExcess: boolean;
  sendSmsNotification: boolean;
  smsPhoneNumbers?: string;
  sendEmailNotification?: boolean;
  emailAddresses?: string;
  createDate: string;
  updateDate: string;
  /** Billing cycles (by start) in which the trigger already alerted. */
  alerted: Set<number>;
}

export interface Rule {
  id: string;
  account: string;
  record: Record<string, unknown>;
}

export interface NotificationGroup {
  id: string;
  account: string;
  name: string;
  userids: string[];
}

export interface Profile {
  id: string;
  account: string;
  record: Record<string, unknown>;
}

/** The managed-account actions on an account (subscriptions.ts). */
export interface ManagedTx {
  txid: string;
  primary: string;
  type: string;
  /** The txid of the provisioning, once provisioned. */
  provisioned?: string;
}

/** A device group of an account (groups.ts). */
export interface DeviceGroupInfo {
  name: string;
  description: string;
  isDefault: boolean;
}

export interface Mutation {
  action: string;
  at: string;
  requestId?: string;
}

/** Something to do at a simulated time. */
export interface Timer {
  at: number;
  seq: number;
  run: () => void;
}

function earlier(a: Timer, b: Timer): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

export interface ResolvedOptions {
  port: number;
  host: string;
  seed: number | string;
  accounts: number;
  devicesPerAccount: number;
  timeScale: number;
  start: number;
  callbackSecret: string;
  demoTriggers: boolean;
  wallClock: () => number;
  logger: Logger;
}

/** The requests whose devices meet per-device faults: location requests and device-state requests. */
export type DrawKind = 'location' | 'deviceState';

export class EmulatorState {
  readonly world: World;
  readonly devices: DeviceStore;
  readonly clock: SimClock;
  faults: Faults = defaultFaults();
  gate?: RateGate;
  /** `faults.neverFinishDevices`, to look identifiers up in. */
  neverFinish: ReadonlySet<string> = new Set();
  /** Fault decisions: seeded, so that a run with the same requests meets the same faults. */
  readonly faultRng: Random;
  /** How many draws of per-device faults each device met, by kind of request (draw). */
  private readonly draws: Record<DrawKind, Uint16Array> = {
    location: new Uint16Array(0),
    deviceState: new Uint16Array(0),
  };

  readonly sessions = new Map<string, Session>();
  readonly failedLogins = new Map<string, number>();
  readonly locked = new Set<string>();

  readonly exclusions = new Map<number, Exclusions>();
  readonly reports = new Map<string, Report>();
  /** Location transactions per account in its current billing cycle. */
  readonly locationUsage = new Map<number, { cycle: number; count: number }>();
  /** Location transactions per account per simulated day (days since the epoch): the usage report's counts. */
  readonly locationDaily = new Map<number, Map<number, number>>();
  readonly locationRegistered = new Set<string>();
  /** Accounts on the primary account's managed list. */
  readonly managed = new Set<string>();
  /**
   * The managed-account actions on an account: the TxId of the add, to be quoted when provisioning, and the
   * txid provisioning answered, to be quoted when cancelling.
   */
  readonly managedTx = new Map<string, ManagedTx>();

  /** Listeners by account, then service name. */
  readonly listeners = new Map<string, Map<string, Listener>>();
  readonly triggers = new Map<string, PricePlanTrigger>();
  readonly usageTriggers = new Map<string, UsageTrigger>();
  readonly rules = new Map<string, Rule>();
  readonly groups = new Map<string, NotificationGroup>();
  readonly profiles = new Map<string, Profile>();
  /** Device groups by account, by name (groups.ts), made from the seed when an account's are first asked for. */
  readonly deviceGroups = new Map<number, Map<string, DeviceGroupInfo>>();
  /**
   * Accounts whose mobile-originated SMS go to their EnhancedConnectivityService listener (sms.startCallbacks),
   * with the simulated time up to which they have been sent.
   */
  readonly smsCallbacks = new Map<number, number>();

  /** Who activated a device, and when, for devices activated through the API. */
  readonly activations = new Map<number, { by: string; at: number }>();

  readonly actions = new Map<string, number>();
  readonly mutations = new Map<string, Mutation[]>();
  /** What the carrier did to each device of its asynchronous requests (requests.ts). */
  readonly requests = new RequestLog();
  /** SMS and e-mail notifications the service would have sent, the latest 10,000. */
  readonly notifications: Record<string, unknown>[] = [];

  /** A binary min-heap by time: reminders for thousands of activations must not make scheduling quadratic. */
  private readonly timers: Timer[] = [];
  private timerSeq = 0;
  /** Simulated time up to which scheduled work has been done. */
  processedUntil: number;
  /** Simulated time of the last evaluation of price plan triggers. */
  evaluatedAt: number;

  constructor(o: ResolvedOptions) {
    this.world = new World({
      seed: o.seed,
      accounts: o.accounts,
      devicesPerAccount: o.devicesPerAccount,
      start: o.start,
    });
    this.devices = new DeviceStore(this.world);
    this.clock = new SimClock(o.start, o.timeScale, o.wallClock);
    this.faultRng = new Random(this.world.h ^ 0x5eed);
    this.processedUntil = o.start;
    this.evaluatedAt = o.start;
    const w = this.world;
    for (const a of w.accounts) {
      if (a.locationRegistered) this.locationRegistered.add(a.name);
      if (a.managed) this.managed.add(a.name);
      // Seeded managed accounts were added and provisioned before the world began, with seeded txids.
      if (a.managed && !a.primary)
        this.managedTx.set(a.name, {
          txid: w.uuid(16, a.index),
          primary: w.accounts[0]!.name,
          type: LOCATION_SKU,
          provisioned: w.uuid(17, a.index),
        });
    }
  }

  /**
   * Device `n`'s next draw of per-device faults for `kind` of request: how many times it met one before. A
   * device's faults then follow from its own history alone, not from the request it came in, its place there,
   * or the order in which requests sent at once arrived: the same run meets the same faults however its
   * batches race, and a device asked again meets fresh ones.
   */
  draw(kind: DrawKind, n: number): number {
    let counts = this.draws[kind];
    if (n >= counts.length) {
      const grown = new Uint16Array(Math.max(n + 1, 2 * counts.length, 1024));
      grown.set(counts);
      this.draws[kind] = counts = grown;
    }
    const k = counts[n] as number;
    // Past 65,535 draws it starts again from 0: the same faults come back, for a device asked that often.
    counts[n] = k + 1;
    return k;
  }

  now(): number {
    return this.clock.now();
  }

  setFaults(f: Faults): void {
    this.faults = f;
    this.gate = f.maxRequestsPerSecond > 0 ? new RateGate(Math.floor(f.maxRequestsPerSecond)) : undefined;
    this.neverFinish = new Set(f.neverFinishDevices);
  }

  count(action: string): void {
    this.actions.set(action, (this.actions.get(action) ?? 0) + 1);
  }

  /**
   * Records a mutation applied to a device, under its first identifier (the key tests look it up by), at `at`
   * (simulated ms; default now).
   */
  mutated(n: number, action: string, requestId?: string, at?: number): void {
    this.mutatedKey(this.devices.primaryId(n), action, requestId, at);
  }

  /** Records a mutation of something that is not a cellular device (a BLE sensor, by its deveui). */
  mutatedKey(key: string, action: string, requestId?: string, at = this.now()): void {
    let list = this.mutations.get(key);
    if (!list) {
      list = [];
      this.mutations.set(key, list);
    }
    list.push(requestId ? { action, at: iso(at), requestId } : { action, at: iso(at) });
  }

  notification(record: Record<string, unknown>): void {
    this.notifications.push(record);
    if (this.notifications.length > 10_000) this.notifications.splice(0, this.notifications.length - 10_000);
  }

  exclusionsOf(account: number): Exclusions {
    return this.exclusions.get(account) ?? NO_EXCLUSIONS;
  }

  listener(accountName: string, service: string): Listener | undefined {
    return this.listeners.get(accountName)?.get(service);
  }

  /** Runs `run` when simulated time reaches `at`; timers at the same instant run in the order scheduled. */
  schedule(at: number, run: () => void): void {
    const h = this.timers;
    h.push({ at, seq: this.timerSeq++, run });
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!earlier(h[i]!, h[parent]!)) break;
      [h[i], h[parent]] = [h[parent]!, h[i]!];
      i = parent;
    }
  }

  /** The next timer due, without removing it. */
  nextTimer(): Timer | undefined {
    return this.timers[0];
  }

  popTimer(): Timer | undefined {
    const h = this.timers;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && earlier(h[l]!, h[m]!)) m = l;
        if (r < h.length && earlier(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }

  accountInfo(name: string): AccountInfo | undefined {
    return this.world.account(name);
  }
}

/** What outlives a reset. */
export interface Core {
  readonly options: ResolvedOptions;
  state: EmulatorState;
  readonly tokens: TokenStore;
  readonly callbacks: CallbackDispatcher;
  readonly log: Logger;
  /** API requests received and not yet answered (their latency, a hold, their handler). */
  inFlight: number;
  /** Requests a test holds before they act (Emulator.hold). */
  readonly holds: Holds;
}
