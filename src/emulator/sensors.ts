/**
 * Sensor insights (`/dm/v1`): sensor query, network experience, onboarding status, configuration, device
 * profiles, rules and notification groups. Errors take the `{ error, error_description, cause }` shape.
 *
 * The sensors of an account are its cellular sensors and gateways, and two BLE sensors behind each gateway
 * (seed.ts). Rules, notification groups and profiles are seeded per account with UUIDs that
 * `GET /_emulator/accounts` lists, since the API has no call that lists them.
 */
import { account, uuid, validInput, type Answer, type Ctx, type Json } from './context.js';
import { Failure } from './errors.js';
import { hash32 } from './random.js';
import { DAY_MS, iso } from './sim-clock.js';
import type { EmulatorState } from './state.js';

/** Sensor records per page when `$nopagination` is not true and `$limitnumber` is not given. */
export const DEFAULT_LIMIT = 100;
const PROVIDER = 'Wireless Carrier';

const notFound = (what: string, cause: string) => new Failure(404, 'NOT_FOUND', `${what} not found`, cause);

/** A sensor: a cellular device (`n`), or BLE sensor `x` behind gateway `x >> 1`. */
type SensorRef = { cell: number } | { ble: number };

function isSensorType(st: EmulatorState, n: number): boolean {
  const t = st.devices.type(n);
  return t === 'sensor' || t === 'gateway';
}

function sensorsOf(st: EmulatorState, account: number): SensorRef[] {
  const out: SensorRef[] = [];
  for (const n of st.devices.inOrder(account)) {
    if (!isSensorType(st, n)) continue;
    out.push({ cell: n });
    if (n < st.world.total) for (const x of st.world.bleSensors(n)) out.push({ ble: x });
  }
  return out;
}

function accountOfRef(st: EmulatorState, r: SensorRef): number {
  return 'cell' in r ? st.devices.account(r.cell) : st.world.accountOf(r.ble >> 1);
}

function record(st: EmulatorState, r: SensorRef, now: number): Json {
  const w = st.world;
  const acct = w.accounts[accountOfRef(st, r)]!.name;
  const common = {
    accountclientid: null,
    billingaccountid: acct,
    customdata: {},
    foreignid: w.profile.foreignId,
    licenses: [],
    providerid: PROVIDER,
    services: [],
    version: '1',
  };
  if ('ble' in r) {
    const x = r.ble;
    const gateway = x >> 1;
    const config = st.devices.configurations.get(-1 - x);
    return {
      ...common,
      chipset: 'nRF52832',
      createdon: iso(w.created(gateway)),
      lastupdated: iso(now - (hash32(w.h, x, 0xb1) % DAY_MS)),
      description: 'BLE environmental sensor',
      fields: { deveui: w.deveui(x), ...(config ? { deviceConfig: config } : {}) },
      hardwareversion: 'B2',
      id: w.bleUuid(x),
      mac: w.bleMac(x),
      manufacturer: 'Minew',
      name: `ble-sensor-${x}`,
      parentdeviceid: w.deviceUuid(gateway),
      productmodel: 'S1 BLE Tag',
      refid: w.deveui(x),
      refidtype: 'deveui',
      serial: `BLE${String(x).padStart(8, '0')}`,
      sku: 'BLE-S1',
      softwareversion: '3.2.1',
      state: st.devices.stateOf(gateway) === 'active' ? 'active' : 'inactive',
      versionid: w.uuid(8, x),
    };
  }
  const n = r.cell;
  const seed = n < w.total;
  const m = seed ? w.model(n) : { manufacturer: 'Unknown', model: 'Unknown', chipset: 'Unknown' };
  const config = st.devices.configurations.get(n);
  const imei = st.devices.idOf(n, 'imei');
  const imsi = st.devices.idOf(n, 'imsi');
  const esn = st.devices.idOf(n, 'esn');
  return {
    ...common,
    chipset: m.chipset,
    createdon: iso(st.devices.created(n)),
    lastupdated: iso(now - (hash32(w.h, n, 0xb2) % DAY_MS)),
    description: `${st.devices.type(n)} ${m.model}`,
    ...(esn ? { esn: parseInt(esn, 16) } : {}),
    fields: config ? { deviceConfig: config } : {},
    hardwareversion: 'A1',
    ...(st.devices.idOf(n, 'iccid') ? { iccid: st.devices.idOf(n, 'iccid') } : {}),
    id: w.deviceUuid(n),
    ...(imei ? { imei: Number(imei) } : {}),
    ...(imsi ? { imsi: Number(imsi) } : {}),
    manufacturer: m.manufacturer,
    ...(st.devices.idOf(n, 'meid') ? { meid: st.devices.idOf(n, 'meid') } : {}),
    ...(st.devices.idOf(n, 'msisdn') ? { msisdn: st.devices.idOf(n, 'msisdn') } : {}),
    name: `${st.devices.type(n)}-${n}`,
    productmodel: m.model,
    qrcode: String(hash32(w.h, n, 0x9c)).padStart(10, '0'),
    refid: imei ?? st.devices.primaryId(n),
    refidtype: 'imei',
    serial: `SN${String(n).padStart(9, '0')}`,
    sku: m.model.replace(/\s+/g, '-').toUpperCase(),
    softwareversion: '1.4.2',
    state: st.devices.stateOf(n),
    versionid: w.uuid(9, n),
  };
}

/** The sensor a `resourceidentifier` names, in the given account. */
function resolve(ctx: Ctx, account: number, ri: Json): SensorRef {
  const st = ctx.st;
  const w = st.world;
  const store = st.devices;
  let ref: SensorRef | undefined;
  for (const key of ['id', 'deviceid', 'node_uuid']) {
    const v = ri[key];
    if (typeof v !== 'string') continue;
    const d = w.decodeUuid(v);
    if (d?.tag === 1 && d.x < store.size) ref = { cell: d.x };
    else if (d?.tag === 2 && w.bleFromDeveui(w.deveui(d.x)) === d.x) ref = { ble: d.x };
  }
  const byKind = (kind: string, v: unknown) => {
    if (ref || v === undefined) return;
    const n = store.find(
      kind,
      kind === 'esn' && typeof v === 'number' ? v.toString(16).toUpperCase() : String(v),
    );
    if (n >= 0) ref = { cell: n };
  };
  byKind('imei', ri.imei);
  byKind('iccid', ri.iccid);
  byKind('msisdn', ri.msisdn);
  byKind('meid', ri.meid);
  byKind('imsi', ri.imsi);
  byKind('esn', ri.esn);
  if (!ref && typeof ri.deveui === 'string') {
    const x = w.bleFromDeveui(ri.deveui);
    if (x >= 0) ref = { ble: x };
  }
  if (!ref && typeof ri.serial === 'string') {
    const m = /^SN([0-9]{9})$/.exec(ri.serial) ?? /^BLE([0-9]{8})$/.exec(ri.serial);
    if (m) ref = ri.serial.startsWith('SN') ? { cell: Number(m[1]) } : { ble: Number(m[1]) };
  }
  if (!ref && typeof ri.mac === 'string') {
    const hexMac = ri.mac.replace(/[-:]/g, '').toUpperCase();
    if (hexMac.startsWith('F412FA')) {
      const x = parseInt(hexMac.slice(6), 16) - 0x100000;
      if (x >= 0 && w.bleMac(x).replace(/:/g, '') === hexMac && w.bleFromDeveui(w.deveui(x)) === x)
        ref = { ble: x };
    }
  }
  if (ref && 'cell' in ref && (ref.cell >= store.size || !isSensorType(st, ref.cell))) ref = undefined;
  if (!ref || accountOfRef(st, ref) !== account) throw notFound('Sensor', 'resourceidentifier');
  return ref;
}

function project(rec: Json, fields: string[] | undefined): Json {
  if (!fields || fields.length === 0) return rec;
  const out: Json = { id: rec.id, billingaccountid: rec.billingaccountid };
  for (const f of fields) if (f in rec) out[f] = rec[f];
  return out;
}

function query(ctx: Ctx): Answer {
  const input = validInput(ctx);
  const a = account(ctx, input.accountname);
  const st = ctx.st;
  const filter = (input.filter ?? {}) as Json;
  const projection = filter.$projection as string[] | undefined;
  if (input.resourceidentifier)
    return {
      body: project(record(st, resolve(ctx, a.index, input.resourceidentifier as Json), ctx.now), projection),
    };
  const selection = Object.entries((filter.$selection ?? {}) as Json);
  let records = sensorsOf(st, a.index).map((r) => record(st, r, ctx.now));
  if (selection.length)
    records = records.filter((rec) => selection.every(([k, v]) => String(rec[k]) === String(v)));
  if (filter.$nopagination !== true) {
    const limit = (filter.$limitnumber as number | undefined) ?? DEFAULT_LIMIT;
    const page = (filter.$pagenumber as number | undefined) ?? 1;
    records = records.slice((page - 1) * limit, page * limit);
  }
  return { body: records.map((r) => project(r, projection)) };
}

function networkExperience(ctx: Ctx): Answer {
  const input = validInput(ctx);
  const a = account(ctx, input.accountname);
  const st = ctx.st;
  const day = Math.floor(ctx.now / DAY_MS);
  const counts = [0, 0, 0];
  let total = 0;
  for (const n of st.devices.inOrder(a.index)) {
    if (!st.devices.iot(n) || st.devices.stateOf(n) !== 'active') continue;
    total++;
    const k = n < st.world.total ? st.world.network(n, day) : 0;
    counts[k] = (counts[k] ?? 0) + 1;
  }
  const date = iso(day * DAY_MS);
  return {
    body: {
      billingaccountid: a.name,
      createdon: date,
      lastupdated: iso(ctx.now),
      date,
      devicesbad: counts[2],
      devicesfair: counts[1],
      devicesgood: counts[0],
      devicestotal: total,
      hours: 24,
      minutes: 15,
      foreignid: st.world.profile.foreignId,
      id: st.world.uuid(10, a.index * 100_000 + day),
      version: '1',
      versionid: st.world.uuid(11, a.index * 100_000 + day),
    },
  };
}

function onboardingStatus(ctx: Ctx): Answer {
  const input = validInput(ctx);
  const a = account(ctx, input.accountname);
  const st = ctx.st;
  const w = st.world;
  const gw = w.decodeUuid(String((input.gatewayidentifier as Json).deviceid));
  if (!gw || gw.tag !== 1 || gw.x >= w.total || w.type(gw.x) !== 'gateway' || w.accountOf(gw.x) !== a.index)
    throw notFound('Gateway', 'gatewayidentifier.deviceid');
  const deveui = String(((input.onboarding as Json).sensoridentifiers as Json).deveui);
  const x = w.bleFromDeveui(deveui);
  const ok = x >= 0 && x >> 1 === gw.x;
  const created = w.created(gw.x) + DAY_MS;
  return {
    body: {
      events: [
        {
          createdon: iso(Math.min(created, ctx.now)),
          errmsg: ok
            ? ''
            : x < 0
              ? `No sensor with deveui ${deveui}`
              : 'The sensor is onboarded to another gateway',
          fields: { deveui, gateway: w.deviceUuid(gw.x) },
          state: ok ? 'success' : 'failed',
          transactionid: w.uuid(12, x >= 0 ? x : gw.x),
        },
      ],
    },
  };
}

/**
 * The `deviceConfig` a configuration sets: the members of the BLE form's `deviceConfig`, and beside them the tilt
 * form's `HighPrecisionTiltConfig`. Spec 2.10 answers `fields` "with deviceConfig" whichever form was sent, so
 * the tilt settings belong inside it (`fields.deviceConfig.HighPrecisionTiltConfig`), not as a second member
 * of `fields`.
 */
function deviceConfigOf(configuration: Json): Json {
  const { deviceConfig, ...others } = configuration;
  return { ...(deviceConfig as Json | undefined), ...others };
}

function setConfiguration(ctx: Ctx): Answer {
  const input = validInput(ctx);
  const a = account(ctx, input.accountname);
  const st = ctx.st;
  const ref = resolve(ctx, a.index, input.resourceidentifier as Json);
  const configuration = input.configuration as Json;
  const deviceConfig = deviceConfigOf(configuration);
  const ble = deviceConfig.ble;
  const tilt = deviceConfig.HighPrecisionTiltConfig;
  const type = 'cell' in ref ? st.devices.type(ref.cell) : 'ble';
  // Scanning settings are for gateways and BLE sensors; tilt settings for cellular sensors.
  const fits =
    (ble === undefined || type === 'gateway' || type === 'ble') && (tilt === undefined || type === 'sensor');
  const rec = record(st, ref, ctx.now);
  const result: Json = {
    createdon: iso(ctx.now),
    description: fits ? 'Configuration applied' : `Configuration does not apply to a ${type} device`,
    deviceid: rec.id,
    errmsg: fits ? '' : `Configuration does not apply to a ${type} device`,
    fields: { deviceConfig },
    foreignid: st.world.profile.foreignId,
    id: uuid(),
    lastupdated: iso(ctx.now),
    state: fits ? 'success' : 'failed',
    transactionid: uuid(),
    version: '1',
    versionid: uuid(),
  };
  if (fits) {
    const key = 'cell' in ref ? ref.cell : -1 - ref.ble;
    st.devices.configurations.set(key, { ...(st.devices.configurations.get(key) ?? {}), ...deviceConfig });
    if ('cell' in ref) st.mutated(ref.cell, 'sensors.setConfiguration');
    else st.mutatedKey(st.world.deveui(ref.ble), 'sensors.setConfiguration');
  }
  return { body: { actionresult: [result] } };
}

/**
 * A profile's configuration as the service answers it: `reportingInterval`, the field table's name (spec 2.9),
 * where the request sent the example's `resportingInterval` (the catalog's normalize writes that spelling).
 */
function answered(configuration: Json): Json {
  const { resportingInterval, ...rest } = configuration;
  return resportingInterval === undefined ? rest : { ...rest, reportingInterval: resportingInterval };
}

function updateProfiles(ctx: Ctx): Answer {
  const input = validInput(ctx);
  const a = account(ctx, input.accountname);
  const st = ctx.st;
  const out: Json[] = [];
  for (const p of input.profiles as Json[]) {
    const id = typeof p.id === 'string' ? p.id : uuid();
    const existing = st.profiles.get(id);
    if (typeof p.id === 'string' && (!existing || existing.account !== a.name))
      throw notFound(`Profile ${p.id}`, 'profiles.id');
    const before = existing?.record ?? {
      id,
      createdon: iso(ctx.now),
      foreignid: st.world.profile.foreignId,
      billingaccountid: a.name,
      configuration: {},
    };
    const rec: Json = {
      ...before,
      ...p,
      id,
      configuration: answered({
        ...((before.configuration as Json) ?? {}),
        ...((p.configuration as Json) ?? {}),
      }),
      versionid: uuid(),
      lastupdated: iso(ctx.now),
    };
    st.profiles.set(id, { id, account: a.name, record: rec });
    out.push(rec);
  }
  return { body: out };
}

function overwriteRule(ctx: Ctx): Answer {
  const input = validInput(ctx);
  const a = account(ctx, input.accountname);
  const st = ctx.st;
  const id = String((input.resourceidentifier as Json).id);
  const rule = st.rules.get(id);
  if (!rule || rule.account !== a.name) throw notFound(`Rule ${id}`, 'resourceidentifier.id');
  const sent = input.rule as Json;
  const version = sent.version ?? String(Number(rule.record.version ?? '0') + 1);
  // The rule's definition is replaced; what the service assigned is kept: its id, account, creation, and the
  // device it is for (`deviceid`, "assigned at onboarding", spec 2.11) unless the body names another.
  rule.record = {
    accountclientid: null,
    billingaccountid: a.name,
    createdon: rule.record.createdon,
    foreignid: st.world.profile.foreignId,
    id,
    ...(rule.record.deviceid !== undefined ? { deviceid: rule.record.deviceid } : {}),
    ...sent,
    version,
    versionid: uuid(),
    lastupdated: iso(ctx.now),
  };
  return { body: rule.record };
}

function removeUsers(ctx: Ctx): Answer {
  const input = validInput(ctx);
  const a = account(ctx, input.accountname);
  const g = ctx.st.groups.get(String(input.id));
  if (!g || g.account !== a.name) throw notFound(`Notification group ${String(input.id)}`, 'id');
  // Removing a user who is not a member is not an error: a retried request must succeed.
  const drop = new Set(input.userids as string[]);
  g.userids = g.userids.filter((u) => !drop.has(u));
  return {};
}

export const sensorHandlers = {
  'sensors.query': query,
  'sensors.networkExperience': networkExperience,
  'sensors.onboardingStatus': onboardingStatus,
  'sensors.setConfiguration': setConfiguration,
  'deviceProfiles.update': updateProfiles,
  'rules.overwrite': overwriteRule,
  'notificationGroups.removeUsers': removeUsers,
};

/** Rules, notification groups and profiles of each account. */
export function seedSensors(st: EmulatorState): void {
  const w = st.world;
  const created = iso(w.start - 60 * DAY_MS);
  for (const a of w.accounts) {
    let sensor: string | undefined;
    const first = a.index * w.devicesPerAccount;
    for (let n = first; n < first + Math.min(w.devicesPerAccount, 200); n++)
      if (w.type(n) === 'sensor') {
        sensor = w.deviceUuid(n);
        break;
      }
    const rules = [
      ['Tilt alarm', 'Alert when the tilt angle exceeds 30 degrees'],
      ['Battery low', 'Alert when the battery falls below 15%'],
      ['Temperature excursion', 'Alert when the temperature leaves 2–8 °C'],
    ];
    rules.forEach(([name, description], k) => {
      const id = w.uuid(3, a.index * 8 + k);
      st.rules.set(id, {
        id,
        account: a.name,
        record: {
          accountclientid: null,
          billingaccountid: a.name,
          createdon: created,
          lastupdated: created,
          description,
          ...(sensor ? { deviceid: sensor } : {}),
          disabled: false,
          foreignid: w.profile.foreignId,
          id,
          name,
          rulechain: { trigger: { field: 'value', op: 'gt', value: 30 }, action: 'alert' },
          rulesyntax: 'json',
          version: '1',
          versionid: w.uuid(13, a.index * 8 + k),
        },
      });
    });
    ['Operations on call', 'Site managers'].forEach((name, k) => {
      const id = w.uuid(4, a.index * 8 + k);
      const userids = Array.from({ length: 4 }, (_, i) => `user-${a.index + 1}-${k + 1}-${i + 1}`);
      st.groups.set(id, { id, account: a.name, name, userids });
    });
    [
      ['tilt', 'Tilt sensor default'],
      ['ble', 'BLE tag default'],
    ].forEach(([kind, name], k) => {
      const id = w.uuid(5, a.index * 8 + k);
      st.profiles.set(id, {
        id,
        account: a.name,
        record: {
          id,
          kind,
          version: '1.0',
          versionid: w.uuid(14, a.index * 8 + k),
          modelid: w.uuid(15, k),
          name,
          configuration: { randomInt: 1, reportingInterval: 24 },
          createdon: created,
          lastupdated: created,
          foreignid: w.profile.foreignId,
          billingaccountid: a.name,
        },
      });
    });
  }
}
