/**
 * The catalog's normalisers: they accept both spellings of what the spec contradicts itself on, and send the
 * examples' (docs/spec-decisions.md).
 */
import type { Json } from './operation.js';

const rename = (obj: unknown, from: string, to: string): void => {
  if (obj && typeof obj === 'object' && from in obj) {
    const o = obj as Json;
    if (!(to in o)) o[to] = o[from];
    delete o[from];
  }
};
const clone = (input: Json): Json => structuredClone(input);

export function normalizeTrigger(input: Json): Json {
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
    // The kind of the device before, as given and in lower case: a batch's devices are of one kind or two.
    let given: unknown;
    let lower = '';
    out.devices = out.devices.map((d: Json) => {
      if (Array.isArray(d.deviceIds))
        return {
          deviceIds: d.deviceIds.map((x: Json) => ({ id: x.id, kind: String(x.kind).toLowerCase() })),
        };
      if (d.kind !== given || typeof given !== 'string') {
        given = d.kind;
        lower = String(given).toLowerCase();
      }
      const kind = lower;
      // A checked flat identifier has only `id` and `kind`: one already in lower case is sent as it is.
      return { deviceIds: [kind === d.kind ? d : { id: d.id, kind }] };
    });
  }
  return out;
}

/**
 * Identifier kinds are sent lower case wherever the m2m API names devices by one identifier each: `deviceId`,
 * a flat `deviceIds` list, and a listing's identifier filters.
 */
export function normalizeIdentifiers(input: Json): Json {
  const id = input.deviceId as Json | undefined;
  const ids = input.deviceIds as Json[] | undefined;
  const filters = (input.filter as Json | undefined)?.deviceIdentifierFilters as Json[] | undefined;
  const lower = (x: Json) => (typeof x.kind === 'string' ? { ...x, kind: x.kind.toLowerCase() } : x);
  if (!id && !ids && !filters) return input;
  const out = { ...input };
  if (id) out.deviceId = lower(id);
  if (Array.isArray(ids)) out.deviceIds = ids.map(lower);
  if (filters) out.filter = { ...(input.filter as Json), deviceIdentifierFilters: filters.map(lower) };
  return out;
}

export function normalizeLocation(input: Json): Json {
  const list = input.deviceList;
  // Most lists are already lower case: copy a 100,000-device list only when something changes.
  if (!Array.isArray(list) || list.every((d: Json) => d.kind === String(d.kind).toLowerCase())) return input;
  return { ...input, deviceList: list.map((d: Json) => ({ ...d, kind: String(d.kind).toLowerCase() })) };
}

export function normalizeUsageTrigger(input: Json): Json {
  const out = clone(input);
  if (typeof out.thresholdValue === 'number') out.thresholdValue = String(out.thresholdValue);
  return out;
}

export function normalizeManagedAccounts(input: Json): Json {
  const out = clone(input);
  if (Array.isArray(out.managedAccList)) {
    out.managedAccList = out.managedAccList.map((a: unknown) =>
      typeof a === 'object' && a ? (a as Json).id : a,
    );
  }
  return out;
}

export function normalizeConfiguration(input: Json): Json {
  const out = normalizeResourceIdentifier(clone(input));
  rename(out, 'accountName', 'accountname');
  rename((out.configuration as Json | undefined)?.HighPrecisionTiltConfig, 'holdTime', 'hold-time');
  return out;
}

/**
 * The identifiers spec 2.7 types as integers; taken as text too (what people paste), and sent as numbers, but for
 * text a number would change (a leading zero, as a test network's IMSI has, or past 2^53): that is sent as given.
 */
const INTEGER_IDS = ['imei', 'esn', 'imsi'] as const;

/** A `resourceidentifier`'s `imei`, `esn` and `imsi` as the integers of spec 2.7, where a number keeps them. */
export function normalizeResourceIdentifier(input: Json): Json {
  const ri = input.resourceidentifier as Json | undefined;
  if (!ri || typeof ri !== 'object' || !INTEGER_IDS.some((k) => typeof ri[k] === 'string')) return input;
  const out = { ...ri };
  for (const k of INTEGER_IDS) {
    const v = out[k];
    if (typeof v === 'string' && /^[1-9][0-9]*$/.test(v) && Number.isSafeInteger(Number(v)))
      out[k] = Number(v);
  }
  return { ...input, resourceidentifier: out };
}

export function normalizeProfiles(input: Json): Json {
  const out = clone(input);
  if (out.profiles && !Array.isArray(out.profiles)) out.profiles = [out.profiles];
  for (const p of (out.profiles as Json[] | undefined) ?? [])
    rename(p.configuration, 'reportingInterval', 'resportingInterval');
  return out;
}

/** A group change's devices (`devicesToAdd`, `devicesToRemove`) are sent with their kinds in lower case too. */
export function normalizeGroupDevices(input: Json): Json {
  const out = { ...input };
  for (const m of ['devicesToAdd', 'devicesToRemove'])
    if (Array.isArray(input[m])) out[m] = normalizeIdentifiers({ deviceIds: input[m] }).deviceIds;
  return out;
}
