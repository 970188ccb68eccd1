/**
 * Device groups (`/m2m/v1/groups`): create, list, read (the group's devices, paged), update (rename, describe,
 * move devices in and out) and delete. Every account starts with the seeded groups, `Default` first; a device is
 * in exactly one group. Deleting a group, or removing a device from one, moves its devices to `Default`, which
 * can be neither renamed nor deleted. Group changes are synchronous, and each device moved is a mutation
 * (`GET /_emulator/calls`).
 */
import { account, nextPage, validInput, type Answer, type Ctx, type Json } from './context.js';
import { deviceRecord, resolveDevices } from './connectivity.js';
import { E } from './errors.js';
import { type DeviceIdPair } from './seed.js';
import { DEFAULT_GROUP, SEEDED_GROUPS, type AccountInfo } from './seed-tables.js';
import type { DeviceGroupInfo, EmulatorState } from './state.js';

/** Devices per answer of a group read; a longer group answers 202 with the next page's `Location`. */
export const GROUP_PAGE = 100;

/** The groups of an account by name, made from the seed the first time they are asked for. */
export function groupsOf(st: EmulatorState, account: number): Map<string, DeviceGroupInfo> {
  let groups = st.deviceGroups.get(account);
  if (!groups) {
    groups = new Map(
      SEEDED_GROUPS.map((g) => [g.name, { ...g, isDefault: g.name === DEFAULT_GROUP }] as const),
    );
    st.deviceGroups.set(account, groups);
  }
  return groups;
}

function existing(ctx: Ctx, a: AccountInfo, name: string): DeviceGroupInfo {
  const g = groupsOf(ctx.st, a.index).get(name);
  if (!g) throw E.invalid(`Device group not found: ${name}`);
  return g;
}

/** The device numbers that flat `{ id, kind }` identifiers name, each known and in the account. */
function devicesNamed(ctx: Ctx, a: AccountInfo, ids: unknown): number[] {
  if (!Array.isArray(ids)) return [];
  return resolveDevices(ctx, a, {
    devices: (ids as DeviceIdPair[]).map((d) => ({ deviceIds: [d] })),
  }).map((d) => d.n);
}

function move(ctx: Ctx, devices: number[], group: string): void {
  const st = ctx.st;
  for (const n of devices) {
    if (st.devices.group(n) === group) continue;
    st.devices.setGroup(n, group);
    st.mutated(n, ctx.action);
  }
}

/** The devices of the account in a group, in devices.list order. */
function* members(st: EmulatorState, a: AccountInfo, group: string): Generator<number> {
  for (const n of st.devices.inOrder(a.index)) if (st.devices.group(n) === group) yield n;
}

function create(ctx: Ctx): Answer {
  const input = validInput(ctx);
  const a = account(ctx, input.accountName);
  const name = String(input.groupName);
  const groups = groupsOf(ctx.st, a.index);
  if (groups.has(name)) throw E.invalid(`Device group already exists: ${name}`);
  const devices = devicesNamed(ctx, a, input.devicesToAdd);
  groups.set(name, { name, description: String(input.groupDescription), isDefault: false });
  move(ctx, devices, name);
  return { body: { success: true } };
}

function list(ctx: Ctx): Answer {
  const input = validInput(ctx);
  const a = account(ctx, input.accountName);
  return {
    body: [...groupsOf(ctx.st, a.index).values()].map((g) => ({
      name: g.name,
      description: g.description,
      isDefaultGroup: g.isDefault,
      extendedAttributes: [],
    })),
  };
}

function get(ctx: Ctx): Answer {
  const input = validInput(ctx);
  const a = account(ctx, input.accountName);
  const g = existing(ctx, a, String(input.groupName));
  const from = (input.next as number | undefined) ?? 0;
  const page: Json[] = [];
  let seen = 0;
  let more = false;
  for (const n of members(ctx.st, a, g.name)) {
    if (seen++ < from) continue;
    if (page.length === GROUP_PAGE) {
      more = true;
      break;
    }
    page.push(deviceRecord(ctx.st, n, ctx.now));
  }
  const path = `/m2m/v1/groups/${encodeURIComponent(a.name)}/name/${encodeURIComponent(g.name)}`;
  return nextPage(path, from + page.length, more, {
    name: g.name,
    description: g.description,
    hasMoreData: more,
    devices: page,
  });
}

function update(ctx: Ctx): Answer {
  const input = validInput(ctx);
  const a = account(ctx, input.accountName);
  const g = existing(ctx, a, String(input.groupName));
  const groups = groupsOf(ctx.st, a.index);
  const rename = input.newGroupName === undefined ? undefined : String(input.newGroupName);
  if (rename !== undefined && rename !== g.name) {
    if (g.isDefault) throw E.invalid('The default device group cannot be renamed');
    if (groups.has(rename)) throw E.invalid(`Device group already exists: ${rename}`);
  }
  // Every device is checked before anything changes.
  const add = devicesNamed(ctx, a, input.devicesToAdd);
  const remove = devicesNamed(ctx, a, input.devicesToRemove);
  if (rename !== undefined && rename !== g.name) {
    const old = g.name;
    move(ctx, [...members(ctx.st, a, old)], rename);
    groups.delete(old);
    g.name = rename;
    groups.set(rename, g);
  }
  if (input.newGroupDescription !== undefined) g.description = String(input.newGroupDescription);
  move(ctx, add, g.name);
  // Devices that are not in the group are left where they are: removing twice is not an error.
  move(
    ctx,
    remove.filter((n) => ctx.st.devices.group(n) === g.name),
    DEFAULT_GROUP,
  );
  return { body: { success: true } };
}

function remove(ctx: Ctx): Answer {
  const input = validInput(ctx);
  const a = account(ctx, input.accountName);
  const g = existing(ctx, a, String(input.groupName));
  if (g.isDefault) throw E.invalid('The default device group cannot be deleted');
  move(ctx, [...members(ctx.st, a, g.name)], DEFAULT_GROUP);
  groupsOf(ctx.st, a.index).delete(g.name);
  return { body: { success: true } };
}

export const groupHandlers = {
  'groups.create': create,
  'groups.list': list,
  'groups.get': get,
  'groups.update': update,
  'groups.delete': remove,
};
