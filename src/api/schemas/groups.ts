/**
 * Device groups of an account, under /m2m/v1/groups (spec 4.5 quick reference; shapes from the vendor's
 * published SDK, docs/spec-decisions.md). Deleting a group moves its devices to the account's default group.
 */
import Type from 'typebox';
import { AccountName, closed, DeviceId, KeyValues } from './common.js';
import { DeviceRecord } from './connectivity.js';

const GroupName = Type.String({ minLength: 1, maxLength: 50, description: 'Unique within the account.' });
const Description = Type.String({ maxLength: 255 });
const DeviceIds = (description: string) => Type.Array(DeviceId, { minItems: 1, description });

export const CreateGroupRequest = closed({
  accountName: AccountName,
  groupName: GroupName,
  groupDescription: Description,
  devicesToAdd: Type.Optional(DeviceIds('Devices to put in the group; they leave the group they were in.')),
});

export const ListGroupsRequest = closed({ accountName: AccountName });
export const Group = Type.Object({
  name: Type.String(),
  description: Type.Optional(Type.String()),
  isDefaultGroup: Type.Optional(Type.Boolean()),
  extendedAttributes: Type.Optional(KeyValues),
});
export const GroupList = Type.Array(Group);

export const GetGroupRequest = closed({
  accountName: AccountName,
  groupName: GroupName,
  next: Type.Optional(
    Type.Integer({ minimum: 0, description: 'Resume from this token; every later page is read.' }),
  ),
});
/** One page of a group's devices: 202 and a `Location` ending in `?next=<token>` while there are more. */
export const GroupPage = Type.Object({
  name: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  hasMoreData: Type.Optional(Type.Boolean()),
  devices: Type.Array(DeviceRecord),
});
/** The group with every device, once every page is read. */
export const GroupDevices = Type.Object({
  name: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  devices: Type.Array(DeviceRecord),
});

export const UpdateGroupRequest = closed(
  {
    accountName: AccountName,
    groupName: GroupName,
    devicesToAdd: Type.Optional(DeviceIds('Devices to move into the group.')),
    devicesToRemove: Type.Optional(DeviceIds('Devices to move to the default group.')),
    newGroupName: Type.Optional(GroupName),
    newGroupDescription: Type.Optional(Description),
  },
  {
    anyOf: [
      { required: ['devicesToAdd'] },
      { required: ['devicesToRemove'] },
      { required: ['newGroupName'] },
      { required: ['newGroupDescription'] },
    ],
    'x-message': 'give at least one of devicesToAdd, devicesToRemove, newGroupName, newGroupDescription',
  },
);

export const DeleteGroupRequest = closed({ accountName: AccountName, groupName: GroupName });

/** `{ success: true }`: the answer of create, update and delete. */
export { Success as SuccessResult } from './common.js';
