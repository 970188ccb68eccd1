/** Device groups of an account (spec 4.5 quick reference). */
import { entry } from './entry.js';
import { G } from './load-schemas.js';
import { normalizeGroupDevices } from './normalize.js';
import type { Operation } from './operation.js';

const m2m = { area: 'm2m', errorShape: 'errorCode' } as const;
const ONE = '/m2m/v1/groups/{accountName}/name/{groupName}';

export const GROUPS = {
  'groups.create': entry(
    {
      action: 'groups.create',
      summary: 'Create a device group, optionally with devices (they leave the group they were in).',
      ...m2m,
      method: 'POST',
      path: '/m2m/v1/groups',
      mutating: true,
      // A second create of the same name is refused.
      retrySafe: false,
      normalize: normalizeGroupDevices,
    },
    () => G().CreateGroupRequest,
    () => G().SuccessResult,
  ),
  'groups.list': entry(
    {
      action: 'groups.list',
      summary: 'The device groups of an account.',
      ...m2m,
      method: 'GET',
      path: '/m2m/v1/groups/{accountName}',
      mutating: false,
      retrySafe: true,
    },
    () => G().ListGroupsRequest,
    () => G().GroupList,
  ),
  'groups.get': entry(
    {
      action: 'groups.get',
      summary: "A device group's name, description and devices (every page).",
      ...m2m,
      method: 'GET',
      path: ONE,
      query: ['next'],
      paging: 'next',
      mutating: false,
      retrySafe: true,
      // The devices of a group, as items that later steps act on.
      strategy: 'listing',
    },
    () => G().GetGroupRequest,
    () => G().GroupDevices,
    () => G().GroupPage,
  ),
  'groups.update': entry(
    {
      action: 'groups.update',
      summary: 'Rename or describe a device group, and move devices into it or out to the default group.',
      ...m2m,
      method: 'PUT',
      path: ONE,
      mutating: true,
      // A rename sent again finds no group of the old name.
      retrySafe: false,
      normalize: normalizeGroupDevices,
    },
    () => G().UpdateGroupRequest,
    () => G().SuccessResult,
  ),
  'groups.delete': entry(
    {
      action: 'groups.delete',
      summary: 'Delete a device group; its devices move to the default group.',
      ...m2m,
      method: 'DELETE',
      path: ONE,
      mutating: true,
      retrySafe: true,
      removes: { notFound: /not found/i, answer: () => ({ success: true }) },
    },
    () => G().DeleteGroupRequest,
    () => G().SuccessResult,
  ),
} as const satisfies Record<string, Operation>;
