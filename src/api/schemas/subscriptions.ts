/** Location usage triggers and managed accounts, under /subsc/v1 (spec 2.2, 2.5, 4.2; facts). */
import Type from 'typebox';
import { MANAGED_SERVICE } from '../limits.js';
import { ACCOUNT_NAME_PATTERN, AccountName, closed, DateOnly, EmailList, PhoneList, Uuid } from './common.js';

const usageTriggerFields = {
  accountName: AccountName,
  serviceName: Type.String({
    pattern: '^([Ll][Oo][Cc][Aa][Tt][Ii][Oo][Nn]|[Ff][Oo][Tt][Aa])$',
    description: 'location (any case); Fota is also accepted by the real service.',
  }),
  triggerName: Type.String({ minLength: 1 }),
  thresholdValue: Type.Union(
    [Type.String({ pattern: '^[0-9]{1,3}$' }), Type.Integer({ minimum: 1, maximum: 999 })],
    {
      description:
        'Percent of subscribed usage that activates the trigger, e.g. "90" or "100". Sent as a string.',
    },
  ),
  allowExcess: Type.Boolean({ description: 'Not currently functional. Default false.' }),
  sendSmsNotification: Type.Boolean(),
  smsPhoneNumbers: Type.Optional(Type.Union([PhoneList, Type.Literal('')])),
  sendEmailNotification: Type.Optional(Type.Boolean()),
  emailAddresses: Type.Optional(Type.Union([EmailList, Type.Literal('')])),
};

const notificationTargets = {
  allOf: [
    {
      if: { properties: { sendSmsNotification: { const: true } }, required: ['sendSmsNotification'] },
      then: { properties: { smsPhoneNumbers: { minLength: 1 } }, required: ['smsPhoneNumbers'] },
    },
    {
      if: { properties: { sendEmailNotification: { const: true } }, required: ['sendEmailNotification'] },
      then: { properties: { emailAddresses: { minLength: 1 } }, required: ['emailAddresses'] },
    },
  ],
};

export const CreateUsageTriggerRequest = closed(usageTriggerFields, notificationTargets);
/**
 * An update takes the members to change, which the service merges into the trigger (the SDKs'
 * `UsageTriggerUpdateRequest`: only `accountName` is required); the whole create body is an update too. Whether
 * the trigger then has the phone numbers and addresses its notifications need is the service's to check.
 */
export const UpdateUsageTriggerRequest = closed(
  {
    triggerId: Uuid,
    accountName: usageTriggerFields.accountName,
    serviceName: Type.Optional(usageTriggerFields.serviceName),
    triggerName: Type.Optional(usageTriggerFields.triggerName),
    thresholdValue: Type.Optional(usageTriggerFields.thresholdValue),
    allowExcess: Type.Optional(usageTriggerFields.allowExcess),
    sendSmsNotification: Type.Optional(usageTriggerFields.sendSmsNotification),
    smsPhoneNumbers: usageTriggerFields.smsPhoneNumbers,
    sendEmailNotification: usageTriggerFields.sendEmailNotification,
    emailAddresses: usageTriggerFields.emailAddresses,
  },
  { allOf: [{ minProperties: 3, 'x-message': 'give at least one member to change' }] },
);
export const DeleteUsageTriggerRequest = closed({ accountName: AccountName, triggerId: Uuid });

export const UsageTrigger = Type.Object({
  triggerId: Type.String(),
  accountName: Type.String(),
  serviceName: Type.String(),
  triggerName: Type.String(),
  thresholdValue: Type.String(),
  allowExcess: Type.Boolean(),
  sendSmsNotification: Type.Boolean(),
  smsPhoneNumbers: Type.Optional(Type.String()),
  sendEmailNotification: Type.Optional(Type.Boolean()),
  emailAddresses: Type.Optional(Type.String()),
  createDate: Type.Optional(DateOnly),
  updateDate: Type.Optional(DateOnly),
});
export const SuccessResponse = Type.Object({ success: Type.Boolean() });

const managedServiceName = (description: string) => Type.String({ enum: [MANAGED_SERVICE], description });
const ManagedServiceName = managedServiceName(
  '`Location`, as written: the service refuses any other (`Invalid Service Name`).',
);

export const AddManagedAccountsRequest = closed({
  accountName: AccountName,
  serviceName: ManagedServiceName,
  type: Type.String({
    minLength: 1,
    description: 'SKU of the location service, e.g. TS-LOC-COARSE-CellID-Aggr.',
  }),
  managedAccList: Type.Array(Type.Union([AccountName, closed({ id: AccountName })]), {
    minItems: 1,
    description: 'Account names to add (an `{ id }` object per account is accepted too).',
  }),
});
export const AddManagedAccountsResponse = Type.Object({
  TxId: Type.Optional(Type.String()),
  txid: Type.Optional(Type.String()),
  statusList: Type.Array(
    Type.Object({
      id: Type.String(),
      status: Type.String({ enum: ['Success', 'Fail'] }),
      reason: Type.String(),
    }),
  ),
});

/** Provision (activate) or cancel the managed service of an account, quoting the TxId of the last action. */
export const ManagedAccountActionRequest = closed({
  accountName: Type.String({
    pattern: ACCOUNT_NAME_PATTERN,
    description: 'The managed account whose service is provisioned or cancelled (10 digits, a hyphen, 5 digits).',
  }),
  paccountName: Type.String({
    pattern: ACCOUNT_NAME_PATTERN,
    description: 'The primary account that added it (managedAccounts.add), 10 digits, a hyphen, 5 digits.',
  }),
  serviceName: ManagedServiceName,
  type: Type.String({ minLength: 1, description: 'SKU of the location service, as given to add.' }),
  txid: Type.String({
    minLength: 1,
    description: 'Provision: the TxId managedAccounts.add answered. Cancel: the txid provision answered.',
  }),
});
export const ManagedAccountActionResponse = Type.Object({
  txid: Type.Optional(Type.String()),
  accountName: Type.Optional(Type.String()),
  paccountName: Type.Optional(Type.String()),
  serviceName: Type.Optional(Type.String()),
  status: Type.Optional(Type.String({ description: 'Success or Fail.' })),
  reason: Type.Optional(Type.String()),
});

export const ListManagedAccountsRequest = closed({
  accountName: AccountName,
  serviceName: Type.Optional(managedServiceName('`Location` (the default), as written.')),
});
const ManagedEntries = Type.Array(Type.Object({ id: Type.String(), txid: Type.Optional(Type.String()) }));
/** The real service writes `ManagedAccAddedList` with a capital M (the SDK's wire name); both are read. */
export const ManagedAccountList = Type.Object({
  accountName: Type.Optional(Type.String()),
  ManagedAccAddedList: Type.Optional(ManagedEntries),
  managedAccAddedList: Type.Optional(ManagedEntries),
  managedAccProvisionedList: Type.Optional(ManagedEntries),
});
